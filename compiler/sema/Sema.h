// Sema — semantic analysis: checks the modules of a program (names, redefinitions, arity,
// operand kinds, integer-versus-set-versus-value types, storage kinds, recursion) and builds
// the typed IR. Every problem is a diagnostic at its source location; one mistake reports
// once (a failed expression becomes an error value that later checks ignore).
#pragma once

#include "ast/AST.h"
#include "diagnostics/Diagnostics.h"
#include "ir/IR.h"

#include <memory>
#include <string>
#include <vector>

namespace schedc::sema {

struct SemaOptions {
  // The schedule to make the program's entry; empty: the main module's only schedule.
  std::string entry;
};

// `modules` in dependency order, the main module last. Returns null if any error was
// reported.
std::unique_ptr<ir::Program> analyze(const std::vector<std::unique_ptr<ast::Module>> &modules,
                                     const SemaOptions &options, DiagnosticEngine &diags);

} // namespace schedc::sema
