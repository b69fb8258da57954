// Jit — `schedc run`: the schedule compiled in memory with ORC LLJIT and run in-process
// through rt::runProgram, the same path the executable's schedc_main takes. The runtime's
// functions are registered explicitly from the ABI's list (SCHEDC_RUNTIME_FUNCTIONS), so
// the JIT does not depend on how schedc itself was linked.
#include "codegen/Codegen.h"

#include "codegen/LowerToLLVM.h"
#include "codegen/Pipeline.h"
#include "rt/Program.h"
#include "schedc/runtime.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <iostream>

namespace schedc::codegen {

int runJit(const ir::Program &program, const ir::Function &entry, const SourceManager &sources, unsigned optLevel,
           const std::vector<std::string> &defines, const sim::RunOptions &options, DiagnosticEngine &diags) {
  initializeNativeTarget();
  auto fail = [&](llvm::Error e) {
    // diag-coverage: unreachable (a broken LLVM installation or a compiler bug)
    diags.error({}, "internal error: the JIT failed: " + llvm::toString(std::move(e)));
    return kExitInternal;
  };
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return fail(jit.takeError());

  llvm::orc::SymbolMap runtime;
  auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
#define SCHEDC_REGISTER(name, result, params)                                                                          \
  runtime[(*jit)->mangleAndIntern(#name)] = {llvm::orc::ExecutorAddr::fromPtr(&name), flags};
  SCHEDC_RUNTIME_FUNCTIONS(SCHEDC_REGISTER)
  SCHEDC_REGISTER(schedc_main, , )
#undef SCHEDC_REGISTER
  llvm::orc::JITDylib &lib = (*jit)->getMainJITDylib();
  if (llvm::Error e = lib.define(llvm::orc::absoluteSymbols(std::move(runtime))))
    return fail(std::move(e));
  // The C library (memset and friends the optimizer may call).
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    return fail(process.takeError());
  lib.addGenerator(std::move(*process));

  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module = lowerToLLVM(*context, program, entry, sources);
  if (std::string problem =
          prepareModule(*module, (*jit)->getDataLayout(), (*jit)->getTargetTriple().str(), nullptr, optLevel);
      !problem.empty()) {
    // diag-coverage: unreachable (a broken LLVM installation or a compiler bug)
    diags.error({}, "internal error: " + problem + " (please report this bug)");
    return kExitInternal;
  }
  if (llvm::Error e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    return fail(std::move(e));
  llvm::Expected<llvm::orc::ExecutorAddr> symbol = (*jit)->lookup(kProgramSymbol);
  if (!symbol)
    return fail(symbol.takeError());
  return rt::runProgram(*symbol->toPtr<const schedc_program *>(), defines, options, std::cout, std::cerr);
}

} // namespace schedc::codegen
