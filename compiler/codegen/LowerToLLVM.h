// LowerToLLVM — the typed IR of one schedule (and the procedures it calls) as an LLVM
// module that calls the runtime ABI (runtime/include/schedc/runtime.h). One LLVM function
// per schedule and procedure; loops stay loops, `if` stays a branch, and `rank` and the
// parameters are run-time values, so the module's size does not grow with `layers`,
// `ranks` or `batches`. The module also holds the program description (`schedc_program`:
// sources, locations, parameters, storage arrays) and a `main` that calls schedc_main.
// Internal to compiler/codegen/ (it includes LLVM headers).
#pragma once

#include "diagnostics/SourceManager.h"
#include "ir/IR.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace schedc::codegen {

// The name of the program description global in every module.
constexpr const char *kProgramSymbol = "schedc_program";

std::unique_ptr<llvm::Module> lowerToLLVM(llvm::LLVMContext &context, const ir::Program &program,
                                          const ir::Function &entry, const SourceManager &sources);

} // namespace schedc::codegen
