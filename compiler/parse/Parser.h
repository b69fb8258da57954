// Parser — turns the text of one .sched file into an ast::Module. This is the only public
// face of the parse phase: the ANTLR-generated lexer and parser stay inside compiler/parse/.
// Lexical problems (invalid UTF-8, unknown characters, unterminated comments), the nesting
// and complexity limits, and syntax errors are all reported through the DiagnosticEngine;
// syntax errors recover at statement boundaries, so one run reports several.
#pragma once

#include "ast/AST.h"
#include "diagnostics/Diagnostics.h"

#include <memory>

namespace schedc {

// Limits that keep hostile input from exhausting the stack; exceeding one is a diagnostic.
constexpr int kMaxNesting = 256;            // brackets, braces and parentheses
constexpr int kMaxOperatorsPerStmt = 10000; // operators in one statement

// Parses `file` (already loaded into the SourceManager). Returns null if the file had any
// error (every error was reported).
std::unique_ptr<ast::Module> parseModule(uint32_t file, const SourceManager &sources, DiagnosticEngine &diags);

} // namespace schedc
