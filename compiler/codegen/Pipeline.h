// Pipeline — what `build` and the JIT share: LLVM's native target set up once, and a module
// given its target, verified, optimized at -O0..-O3 with the new pass manager, and verified
// again. Internal to compiler/codegen/.
#pragma once

#include <string>

namespace llvm {
class DataLayout;
class Module;
class TargetMachine;
} // namespace llvm

namespace schedc::codegen {

void initializeNativeTarget();

// Returns an empty string, or what was wrong with the module (a compiler bug).
std::string prepareModule(llvm::Module &module, const llvm::DataLayout &layout, const std::string &triple,
                          llvm::TargetMachine *tm, unsigned optLevel);

} // namespace schedc::codegen
