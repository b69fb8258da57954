// AnalyzedText — unit tests' way from a schedule's text to its IR: parsed and analyzed as
// schedc would (one module, no -D), with the diagnostics kept as text.
#pragma once

#include "ir/IR.h"
#include "parse/Parser.h"
#include "sema/Sema.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace schedc {

struct Analyzed {
  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diags{sm, &out};
  std::unique_ptr<ir::Program> program; // null if the text has an error
  explicit Analyzed(const std::string &text) {
    std::vector<std::unique_ptr<ast::Module>> modules;
    modules.push_back(parseModule(sm.addBuffer("t.sched", text), sm, diags));
    if (modules.back())
      program = sema::analyze(modules, {}, diags);
  }
};

} // namespace schedc
