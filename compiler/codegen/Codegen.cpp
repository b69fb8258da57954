// Codegen implementation: target machine, verification, the optimization pipeline, output
// of IR or objects, and linking with the system C++ compiler against the runtime archives
// (their paths are compiled in by CMake as SCHEDC_RUNTIME_ARCHIVES).
#include "codegen/Codegen.h"

#include "RuntimeArchives.h"
#include "codegen/LowerToLLVM.h"
#include "codegen/Pipeline.h"
#include "install/Installation.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace schedc::codegen {

void initializeNativeTarget() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)done;
}

std::string prepareModule(llvm::Module &module, const llvm::DataLayout &layout, const std::string &triple,
                          llvm::TargetMachine *tm, unsigned optLevel) {
  module.setDataLayout(layout);
  module.setTargetTriple(triple);
  std::string problem;
  llvm::raw_string_ostream os(problem);
  if (llvm::verifyModule(module, &os))
    return "the generated LLVM IR is invalid: " + os.str();

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      optLevel == 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
  if (llvm::verifyModule(module, &os))
    return "the optimized LLVM IR is invalid: " + os.str();
  return "";
}

namespace {

std::unique_ptr<llvm::TargetMachine> hostMachine(std::string &triple, std::string &error) {
  initializeNativeTarget();
  triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(triple, "generic", "", options, llvm::Reloc::PIC_));
}

// Runs `argv` (no shell); returns its exit status, or -1 if it could not start.
int spawn(const std::vector<std::string> &argv) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0)
    return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

int build(const ir::Program &program, const ir::Function &entry, const SourceManager &sources,
          const BuildOptions &options, DiagnosticEngine &diags) {
  std::string triple, error;
  std::unique_ptr<llvm::TargetMachine> tm = hostMachine(triple, error);
  if (!tm) {
    // diag-coverage: unreachable (a broken LLVM installation or a compiler bug)
    diags.error({}, "no LLVM target for this machine (" + triple + "): " + error);
    return kExitInternal;
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = lowerToLLVM(context, program, entry, sources);
  if (std::string problem = prepareModule(*module, tm->createDataLayout(), triple, tm.get(), options.optLevel);
      !problem.empty()) {
    // diag-coverage: unreachable (a broken LLVM installation or a compiler bug)
    diags.error({}, "internal error: " + problem + " (please report this bug)");
    return kExitInternal;
  }

  std::string objectPath = options.kind == OutputKind::Executable ? options.output + ".o.tmp" : options.output;
  std::error_code ec;
  llvm::raw_fd_ostream out(options.kind == OutputKind::LLVMText ? options.output : objectPath, ec,
                           llvm::sys::fs::OF_None);
  if (ec) {
    diags.error({}, "cannot write `" + options.output + "`: " + ec.message());
    return kExitIoError;
  }
  // A failed write is reported here and cleared, so the stream's destructor does not turn
  // it into LLVM's fatal "IO failure on output stream".
  auto finishWrite = [&](const std::string &path) {
    out.close();
    if (!out.has_error())
      return kExitOk;
    diags.error({}, "cannot write `" + path + "`: " + out.error().message());
    out.clear_error();
    return kExitIoError;
  };
  if (options.kind == OutputKind::LLVMText) {
    module->print(out, nullptr);
    return finishWrite(options.output);
  }
  llvm::legacy::PassManager emit;
  if (tm->addPassesToEmitFile(emit, out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    // diag-coverage: unreachable (a broken LLVM installation or a compiler bug)
    diags.error({}, "internal error: LLVM cannot emit an object file for " + triple);
    return kExitInternal;
  }
  emit.run(*module);
  if (int code = finishWrite(objectPath); code != kExitOk) {
    if (options.kind == OutputKind::Executable)
      std::remove(objectPath.c_str());
    return code;
  }
  if (options.kind == OutputKind::Object)
    return kExitOk;

  // Link with the system C++ compiler: the object, (the cuda backend,) the runtime archives,
  // MPI and BLAS, (CUDA's libraries,) threads.
  const char *cxx = std::getenv("CXX");
  std::vector<std::string> argv{cxx && *cxx ? cxx : "c++", "-o", options.output, objectPath};
  std::string runtime = install::runtimeDir(SCHEDC_RUNTIME_BUILD_DIR);
  auto add = [&argv, &runtime](const char *list) {
    std::stringstream items(list);
    for (std::string a; std::getline(items, a, ';');)
      if (!a.empty()) // a bare name is one of schedc's archives, in the runtime folder
        argv.push_back(a[0] == '/' || a[0] == '-' ? a : runtime + "/" + a);
  };
  if (options.cuda)
    add(SCHEDC_CUDA_ARCHIVE);
  add(SCHEDC_RUNTIME_ARCHIVES);
  if (options.cuda)
    add(SCHEDC_CUDA_LIBRARIES);
  argv.push_back("-lpthread");
  if (!options.debugInfo) // the archives' DWARF: 48 of an executable's 50 MB; symbols stay
    argv.push_back("-Wl,--strip-debug");
  int status = spawn(argv);
  std::remove(objectPath.c_str());
  if (status != 0) {
    diags.error({}, status < 0 ? "cannot run the linker `" + argv[0] + "`"
                               : "linking `" + options.output + "` failed (the linker exited with " +
                                     std::to_string(status) + ")");
    return kExitIoError;
  }
  return kExitOk;
}

namespace {
// LLVM's fatal errors end the process. The only ones user input can cause are I/O failures
// (an output that cannot be written): exit 4 with schedc's own shape of message. Anything
// else is a bug in schedc: exit 70.
void onLLVMFatalError(void *, const char *reason, bool) {
  std::string text = reason ? reason : "unknown error";
  bool io = text.find("IO failure") != std::string::npos;
  std::string line = io ? "schedc: error: cannot write the output: " + text + "\n"
                        : "schedc: internal error: LLVM: " + text + " (please report this bug)\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
  std::_Exit(io ? kExitIoError : kExitInternal);
}
} // namespace

void installFatalErrorHandler() {
  llvm::install_fatal_error_handler(onLLVMFatalError, nullptr);
}

bool cudaBackendBuilt() {
  return SCHEDC_CUDA_ARCHIVE[0] != '\0';
}

} // namespace schedc::codegen
