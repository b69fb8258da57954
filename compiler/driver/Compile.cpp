// Compile implementation: the options of build and run turned into codegen's.
#include "driver/Compile.h"

#include "codegen/Codegen.h"
#include "diagnostics/Diagnostics.h"
#include "driver/FrontEnd.h"
#include "driver/Options.h"

#include <filesystem>

namespace schedc::driver {

namespace {

// schedc build: an executable, an object file or textual LLVM IR.
int buildProgram(const Options &opts, const ir::Program &program, const ir::Function &schedule,
                 const SourceManager &sources, DiagnosticEngine &diags) {
  if (opts.cuda && !codegen::cudaBackendBuilt())
    return usageError("this schedc was built without the cuda backend (CUDA and NCCL were not found), so "
                      "--cuda cannot link it");
  codegen::BuildOptions build;
  build.optLevel = opts.optLevel;
  build.cuda = opts.cuda;
  build.debugInfo = opts.debugInfo;
  build.kind = opts.emitLLVM     ? codegen::OutputKind::LLVMText
               : opts.objectOnly ? codegen::OutputKind::Object
                                 : codegen::OutputKind::Executable;
  build.output = opts.output;
  if (build.output.empty()) {
    std::string stem = std::filesystem::path(opts.input).stem().string();
    build.output = stem + (opts.emitLLVM ? ".ll" : opts.objectOnly ? ".o" : "");
  }
  return codegen::build(program, schedule, sources, build, diags);
}

// schedc run: -D is read by the compiled program, as an executable reads it.
int runProgram(const Options &opts, const ir::Program &program, const ir::Function &schedule,
               const SourceManager &sources, const sim::RunOptions &runOptions, DiagnosticEngine &diags) {
  return codegen::runJit(program, schedule, sources, opts.optLevel, opts.defines, runOptions, diags);
}

} // namespace

const Compiler &llvmCompiler() {
  static const Compiler compiler{buildProgram, runProgram};
  return compiler;
}

} // namespace schedc::driver
