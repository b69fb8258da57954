// ParseTreeToAST — converts a syntactically valid ANTLR parse tree into an ast::Module, one
// typed function per grammar rule (the grammar rule is written above each). The few errors
// only visible here (an integer literal that does not fit in 64 bits) are reported.
#pragma once

#include "ast/AST.h"
#include "diagnostics/Diagnostics.h"

#include "SchedParser.h"

#include <memory>

namespace schedc::parse {

// Internal to compiler/parse/ (it includes the generated parser).
std::unique_ptr<ast::Module> buildModule(schedc_antlr::SchedParser::FileContext *tree, uint32_t file,
                                         DiagnosticEngine &diags);

} // namespace schedc::parse
