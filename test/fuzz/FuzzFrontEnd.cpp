// FuzzFrontEnd — libFuzzer target for the front end: any bytes as a schedule file go through
// the UTF-8 check, lexer, parser, imports, sema and the IR verifier, and every diagnostic is
// formatted. Nothing may crash, leak or trip a sanitizer; a program sema accepts must pass
// the IR verifier and dump (a failure there is a compiler bug: the target aborts).
#include "ast/AST.h"
#include "diagnostics/Diagnostics.h"
#include "ir/IR.h"
#include "sema/Imports.h"
#include "sema/Sema.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace schedc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SourceManager sources;
  DiagnosticEngine diags(sources, nullptr);
  uint32_t file = sources.addBuffer("fuzz.sched", std::string(reinterpret_cast<const char *>(data), size));
  bool unreadable = false;
  std::vector<std::unique_ptr<ast::Module>> modules =
      sema::loadModules(file, sema::ImportOptions{{}, sema::defaultStdlibDir()}, sources, diags, unreadable);
  if (!modules.empty()) {
    (void)ast::dump(*modules.back(), sources);
    std::unique_ptr<ir::Program> program = sema::analyze(modules, sema::SemaOptions{}, diags);
    if (program) {
      if (std::string problem = ir::verify(*program); !problem.empty()) {
        std::fprintf(stderr, "IR verifier failed on a program sema accepted: %s\n", problem.c_str());
        std::abort();
      }
      (void)ir::dump(*program, sources);
    }
  }
  for (const Diagnostic &d : diags.diagnostics())
    (void)diags.format(d);
  return 0;
}
