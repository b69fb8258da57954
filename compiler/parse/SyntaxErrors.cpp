// SyntaxErrors implementation: message wording and panic-mode suppression.
#include "parse/SyntaxErrors.h"

#include "SchedParser.h"
#include "parse/Tokens.h"

namespace schedc::parse {

using P = schedc_antlr::SchedParser;

void SyntaxErrorStrategy::report(SourceRange range, std::string message) {
  hadError_ = true;
  if (panic_)
    return;
  panic_ = true;
  diags_.error(range, std::move(message));
}

std::string SyntaxErrorStrategy::expectation(antlr4::Parser *p, const antlr4::misc::IntervalSet &expected) {
  std::vector<ssize_t> types = expected.toList();
  if (!types.empty() && types.size() <= 4) {
    std::string s = "expected ";
    for (size_t i = 0; i < types.size(); ++i) {
      if (i)
        s += i + 1 == types.size() ? " or " : ", ";
      s += describeTokenType(static_cast<size_t>(types[i]), p->getVocabulary());
    }
    return s;
  }
  switch (p->getContext()->getRuleIndex()) {
  case P::RuleFile:
  case P::RuleTopDecl: return "expected `schedule`, `proc` or `import`";
  case P::RuleBlock:
  case P::RuleStmt:
  case P::RuleIfChain: return "expected a statement";
  case P::RuleExpr:
  case P::RuleArg: return "expected an expression";
  default: return "unexpected input";
  }
}

void SyntaxErrorStrategy::reportNoViableAlternative(antlr4::Parser *p, const antlr4::NoViableAltException &e) {
  reportFound(p, e.getOffendingToken(), e.getExpectedTokens());
}

void SyntaxErrorStrategy::reportFound(antlr4::Parser *p, const antlr4::Token *t,
                                      const antlr4::misc::IntervalSet &expected) {
  std::string what = expectation(p, expected);
  if (what == "unexpected input")
    report(rangeOf(t, file_), "unexpected " + describeToken(t));
  else
    report(rangeOf(t, file_), what + ", found " + describeToken(t));
}

void SyntaxErrorStrategy::reportInputMismatch(antlr4::Parser *p, const antlr4::InputMismatchException &e) {
  reportFound(p, e.getOffendingToken(), e.getExpectedTokens());
}

void SyntaxErrorStrategy::reportFailedPredicate(antlr4::Parser *, const antlr4::FailedPredicateException &e) {
  report(rangeOf(e.getOffendingToken(), file_), "unexpected " + describeToken(e.getOffendingToken()));
}

void SyntaxErrorStrategy::reportUnwantedToken(antlr4::Parser *p) {
  if (inErrorRecoveryMode(p))
    return;
  beginErrorCondition(p);
  reportFound(p, p->getCurrentToken(), getExpectedTokens(p));
}

void SyntaxErrorStrategy::reportMissingToken(antlr4::Parser *p) {
  if (inErrorRecoveryMode(p))
    return;
  beginErrorCondition(p);
  const antlr4::Token *t = p->getCurrentToken();
  std::string what = expectation(p, getExpectedTokens(p));
  // Point just past the previous token: "expected `;`" belongs at the end of the statement.
  // (Whitespace and comments are skipped, not tokens: the token before is the previous one.)
  const antlr4::Token *prev = t->getTokenIndex() > 0 ? p->getTokenStream()->get(t->getTokenIndex() - 1) : nullptr;
  if (prev)
    report(after(prev, file_), what + " after " + describeToken(prev));
  else
    report(rangeOf(t, file_), what + ", found " + describeToken(t));
}

void StatementBoundaryListener::exitEveryRule(antlr4::ParserRuleContext *ctx) {
  size_t rule = ctx->getRuleIndex();
  if (rule == P::RuleStmt || rule == P::RuleTopDecl)
    strategy_.statementBoundary();
}

} // namespace schedc::parse
