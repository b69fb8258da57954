// SyntaxErrors — the ANTLR error strategy of the parse phase. It replaces ANTLR's messages
// ("mismatched input ... expecting {...}") with short ones that name what was expected and
// what was found, reports them through the DiagnosticEngine, and adds panic mode: after one
// error, further errors are suppressed until the parser completes a statement or a top-level
// declaration, so one mistake reports once and the next statement is checked afresh.
#pragma once

#include "diagnostics/Diagnostics.h"

#include "antlr4-runtime.h"

namespace schedc::parse {

class SyntaxErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  SyntaxErrorStrategy(uint32_t file, DiagnosticEngine &diags) : file_(file), diags_(diags) {}

  // Called when a statement or declaration has been fully parsed.
  void statementBoundary() { panic_ = false; }
  bool hadError() const { return hadError_; }

protected:
  void reportNoViableAlternative(antlr4::Parser *p, const antlr4::NoViableAltException &e) override;
  void reportInputMismatch(antlr4::Parser *p, const antlr4::InputMismatchException &e) override;
  void reportFailedPredicate(antlr4::Parser *p, const antlr4::FailedPredicateException &e) override;
  void reportUnwantedToken(antlr4::Parser *p) override;
  void reportMissingToken(antlr4::Parser *p) override;

private:
  void report(SourceRange range, std::string message);
  // "expected X, found `t`" (or "unexpected `t`" when what fits is too varied to list).
  void reportFound(antlr4::Parser *p, const antlr4::Token *t, const antlr4::misc::IntervalSet &expected);
  // "expected `;`", "expected an expression", ... for the tokens the parser could accept.
  std::string expectation(antlr4::Parser *p, const antlr4::misc::IntervalSet &expected);

  uint32_t file_;
  DiagnosticEngine &diags_;
  bool panic_ = false;
  bool hadError_ = false;
};

// Tells the strategy when a statement or top-level declaration is complete.
class StatementBoundaryListener : public antlr4::tree::ParseTreeListener {
public:
  explicit StatementBoundaryListener(SyntaxErrorStrategy &s) : strategy_(s) {}
  void visitTerminal(antlr4::tree::TerminalNode *) override {}
  void visitErrorNode(antlr4::tree::ErrorNode *) override {}
  void enterEveryRule(antlr4::ParserRuleContext *) override {}
  void exitEveryRule(antlr4::ParserRuleContext *ctx) override;

private:
  SyntaxErrorStrategy &strategy_;
};

} // namespace schedc::parse
