// ParseTreeToAST implementation: one `build*` function per grammar rule.
#include "parse/ParseTreeToAST.h"

#include "parse/Tokens.h"

#include <limits>
#include <typeinfo>

namespace schedc::parse {

namespace {

using P = schedc_antlr::SchedParser;
using namespace ast;

// A context's children, read without ANTLR's generated accessors (`ctx->expr(0)`,
// `ctx->ID()`): those test every child with a dynamic_cast, a large share of the front end's
// work on a large file (docs/performance.md). A child is a
// token's node exactly when its type is TerminalNodeImpl (error nodes, its subclass, occur
// only in trees with syntax errors, which are never converted), otherwise a rule's context,
// whose rule index says which rule.
bool isTokenNode(antlr4::tree::ParseTree *child) {
  return typeid(*child) == typeid(antlr4::tree::TerminalNodeImpl);
}
size_t ruleOf(antlr4::tree::ParseTree *child) {
  return static_cast<antlr4::RuleContext *>(child)->getRuleIndex();
}
// The children that are contexts of rule `rule` (whose class is T), in order.
template <class T> std::vector<T *> rules(antlr4::ParserRuleContext *ctx, size_t rule) {
  std::vector<T *> out;
  for (antlr4::tree::ParseTree *c : ctx->children)
    if (!isTokenNode(c) && ruleOf(c) == rule)
      out.push_back(static_cast<T *>(c));
  return out;
}
// The `i`th child context of rule `rule`, or null.
template <class T> T *nthRule(antlr4::ParserRuleContext *ctx, size_t rule, size_t i = 0) {
  for (antlr4::tree::ParseTree *c : ctx->children)
    if (!isTokenNode(c) && ruleOf(c) == rule && i-- == 0)
      return static_cast<T *>(c);
  return nullptr;
}
P::ExprContext *expr(antlr4::ParserRuleContext *ctx, size_t i = 0) {
  return nthRule<P::ExprContext>(ctx, P::RuleExpr, i);
}
std::vector<P::ExprContext *> exprs(antlr4::ParserRuleContext *ctx) {
  return rules<P::ExprContext>(ctx, P::RuleExpr);
}
P::BlockContext *block(antlr4::ParserRuleContext *ctx, size_t i = 0) {
  return nthRule<P::BlockContext>(ctx, P::RuleBlock, i);
}
std::vector<P::TargetContext *> targets(antlr4::ParserRuleContext *ctx) {
  return rules<P::TargetContext>(ctx, P::RuleTarget);
}
// The first child token of type `type`, or null.
antlr4::tree::TerminalNode *token(antlr4::ParserRuleContext *ctx, size_t type) {
  for (antlr4::tree::ParseTree *c : ctx->children)
    if (isTokenNode(c) && static_cast<antlr4::tree::TerminalNode *>(c)->getSymbol()->getType() == type)
      return static_cast<antlr4::tree::TerminalNode *>(c);
  return nullptr;
}
// `ctx` as the context of a labeled alternative, if it is one of T (those classes are leaves:
// their exact type is the alternative).
template <class T> T *alternative(antlr4::ParserRuleContext *ctx) {
  return typeid(*ctx) == typeid(T) ? static_cast<T *>(ctx) : nullptr;
}

class AstBuilder {
public:
  AstBuilder(uint32_t file, DiagnosticEngine &diags) : file_(file), diags_(diags) {}

  // file : topDecl* EOF ;
  std::unique_ptr<Module> buildFile(P::FileContext *ctx) {
    auto m = std::make_unique<Module>();
    m->file = file_;
    for (P::TopDeclContext *d : rules<P::TopDeclContext>(ctx, P::RuleTopDecl)) {
      if (auto *imp = nthRule<P::ImportDeclContext>(d, P::RuleImportDecl))
        m->imports.push_back(buildImport(imp));
      else if (auto *s = nthRule<P::ScheduleDeclContext>(d, P::RuleScheduleDecl))
        m->functions.push_back(buildSchedule(s));
      else if (auto *p = nthRule<P::ProcDeclContext>(d, P::RuleProcDecl))
        m->functions.push_back(buildProc(p));
    }
    return m;
  }

private:
  SourceRange range(antlr4::ParserRuleContext *ctx) const { return rangeOf(ctx, file_); }
  SourceRange range(antlr4::tree::TerminalNode *n) const { return rangeOf(n->getSymbol(), file_); }
  // The rule's identifier (its first ID), with its range.
  void name(antlr4::ParserRuleContext *ctx, std::string &name, SourceRange &at) const {
    antlr4::tree::TerminalNode *id = token(ctx, P::ID);
    name = id->getText();
    at = range(id);
  }
  // The source text of `ctx`, as written (spaces and all).
  static std::string sourceText(antlr4::ParserRuleContext *ctx) {
    return ctx->start->getInputStream()->getText(
        antlr4::misc::Interval(ctx->start->getStartIndex(), ctx->stop->getStopIndex()));
  }
  // Reports Python's `and`, `or`, `not` (read as `&&`, `||`, `!`).
  void pythonOperator(antlr4::Token *op) {
    const char *instead = op->getType() == P::PY_AND   ? "&&"
                          : op->getType() == P::PY_OR  ? "||"
                          : op->getType() == P::PY_NOT ? "!"
                                                       : nullptr;
    if (instead)
      diags_.error(rangeOf(op, file_), "Python's `" + op->getText() + "` is `" + instead + "` in a schedule");
  }

  // The text of a string literal: its quotes dropped, `\"` and `\\` read as `"` and `\`;
  // any other escape is reported where it is (columns count code points, as tokens' do).
  std::string unquote(antlr4::tree::TerminalNode *n) {
    std::string text = n->getText();
    SourceLoc at = beginOf(n->getSymbol(), file_);
    std::string out;
    uint32_t col = at.col + 1; // after the opening quote
    for (size_t i = 1; i + 1 < text.size(); ++i) {
      if (text[i] == '\\' && (text[i + 1] == '"' || text[i + 1] == '\\')) {
        out += text[++i];
        col += 2;
        continue;
      }
      if (text[i] == '\\') {
        size_t next = i + 1; // the escaped character, whole (UTF-8)
        while (next + 1 < text.size() - 1 && (static_cast<unsigned char>(text[next + 1]) & 0xC0) == 0x80)
          ++next;
        diags_.error(SourceRange({file_, at.line, col}, {file_, at.line, col + 1}),
                     "unknown escape `" + text.substr(i, next - i + 1) +
                         "` in a string: `\\\"` is a quote and `\\\\` a backslash");
      }
      out += text[i];
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
        ++col;
    }
    return out;
  }

  // importDecl : IMPORT STRING SEMI ;
  Import buildImport(P::ImportDeclContext *ctx) { return Import{unquote(token(ctx, P::STRING)), range(ctx)}; }

  // scheduleDecl : attribute* SCHEDULE ID LPAREN paramList? RPAREN block ;
  std::unique_ptr<Function> buildSchedule(P::ScheduleDeclContext *ctx) {
    auto f = std::make_unique<Function>();
    f->isSchedule = true;
    name(ctx, f->name, f->nameRange);
    f->range = range(ctx);
    for (P::AttributeContext *a : rules<P::AttributeContext>(ctx, P::RuleAttribute))
      f->attributes.push_back(buildAttribute(a));
    if (auto *params = nthRule<P::ParamListContext>(ctx, P::RuleParamList))
      f->params = buildParams(params);
    f->body = buildBlock(block(ctx));
    return f;
  }

  // procDecl : PROC ID LPAREN paramList? RPAREN block ;
  std::unique_ptr<Function> buildProc(P::ProcDeclContext *ctx) {
    auto f = std::make_unique<Function>();
    name(ctx, f->name, f->nameRange);
    f->range = range(ctx);
    if (auto *params = nthRule<P::ParamListContext>(ctx, P::RuleParamList))
      f->params = buildParams(params);
    f->body = buildBlock(block(ctx));
    return f;
  }

  // attribute : AT ID LPAREN (arg (COMMA arg)*)? RPAREN ;
  Attribute buildAttribute(P::AttributeContext *ctx) {
    Attribute a;
    name(ctx, a.name, a.nameRange);
    a.range = range(ctx);
    for (P::ArgContext *arg : rules<P::ArgContext>(ctx, P::RuleArg))
      a.args.push_back(buildArg(arg));
    return a;
  }

  // paramList : param (COMMA param)* COMMA? ;  param : ID (ASSIGN expr)? ;
  std::vector<Param> buildParams(P::ParamListContext *ctx) {
    std::vector<Param> out;
    for (P::ParamContext *p : rules<P::ParamContext>(ctx, P::RuleParam)) {
      antlr4::tree::TerminalNode *id = token(p, P::ID);
      P::ExprContext *value = expr(p);
      out.push_back(Param{id->getText(), range(id), value ? buildExpr(value) : nullptr});
    }
    return out;
  }

  // block : LBRACE stmt* RBRACE ;
  std::unique_ptr<BlockStmt> buildBlock(P::BlockContext *ctx) {
    auto b = std::make_unique<BlockStmt>(range(ctx));
    for (P::StmtContext *s : rules<P::StmtContext>(ctx, P::RuleStmt))
      b->stmts.push_back(buildStmt(s));
    return b;
  }

  // target : ID (LBRACKET expr (COMMA expr)* RBRACKET)? ;
  Target buildTarget(P::TargetContext *ctx) {
    Target t;
    name(ctx, t.name, t.nameRange);
    t.range = range(ctx);
    t.indexed = token(ctx, P::LBRACKET) != nullptr;
    for (P::ExprContext *e : exprs(ctx))
      t.indices.push_back(buildExpr(e));
    return t;
  }

  // ifChain : IF expr block (ELSE (block | ifChain))? ;
  std::unique_ptr<IfStmt> buildIf(P::IfChainContext *ctx) {
    auto s = std::make_unique<IfStmt>(range(ctx));
    s->cond = buildExpr(expr(ctx));
    s->then = buildBlock(block(ctx, 0));
    if (auto *chain = nthRule<P::IfChainContext>(ctx, P::RuleIfChain))
      s->otherwise = buildIf(chain);
    else if (P::BlockContext *otherwise = block(ctx, 1))
      s->otherwise = buildBlock(otherwise);
    return s;
  }

  StmtPtr buildStmt(P::StmtContext *ctx) {
    SourceRange r = range(ctx);
    if (alternative<P::LetStmtContext>(ctx)) {
      auto s = std::make_unique<LetStmt>(r);
      name(ctx, s->name, s->nameRange);
      s->value = buildExpr(expr(ctx));
      return s;
    }
    if (alternative<P::AssignStmtContext>(ctx)) {
      auto s = std::make_unique<AssignStmt>(r);
      for (P::TargetContext *t : targets(ctx))
        s->targets.push_back(buildTarget(t));
      s->value = buildExpr(expr(ctx));
      return s;
    }
    if (alternative<P::FreeStmtContext>(ctx)) {
      std::vector<P::TargetContext *> freed = targets(ctx);
      if (antlr4::tree::TerminalNode *del = token(ctx, P::DEL))
        diags_.error(range(del), "Python's `del` is `free` in a schedule: `free " + sourceText(freed[0]) + ";`");
      auto s = std::make_unique<FreeStmt>(r);
      for (P::TargetContext *t : freed)
        s->targets.push_back(buildTarget(t));
      return s;
    }
    if (alternative<P::IfStmtContext>(ctx))
      return buildIf(nthRule<P::IfChainContext>(ctx, P::RuleIfChain));
    if (alternative<P::ForStmtContext>(ctx)) {
      auto s = std::make_unique<ForStmt>(r);
      name(ctx, s->var, s->varRange);
      s->reversed = token(ctx, P::REVERSED) != nullptr;
      s->domain = buildExpr(expr(ctx));
      s->body = buildBlock(block(ctx));
      return s;
    }
    if (alternative<P::MeshStmtContext>(ctx)) {
      auto s = std::make_unique<MeshStmt>(r);
      for (P::AxisContext *a : rules<P::AxisContext>(ctx, P::RuleAxis)) {
        MeshAxis axis;
        name(a, axis.name, axis.nameRange);
        axis.size = buildExpr(expr(a));
        s->axes.push_back(std::move(axis));
      }
      return s;
    }
    if (auto *c = alternative<P::RequireStmtContext>(ctx)) {
      auto s = std::make_unique<RequireStmt>(r);
      s->cond = buildExpr(expr(ctx, 0));
      if (antlr4::tree::TerminalNode *message = token(ctx, P::STRING))
        s->message = unquote(message);
      else if (c->message)
        diags_.error(range(c->message), "the message of `require` is a string in double quotes, as in "
                                        "`require(layers % ranks == 0, \"layers must divide among the ranks\")`");
      else // no message: the condition, as written
        s->message = sourceText(expr(ctx, 0));
      return s;
    }
    if (alternative<P::OverlapStmtContext>(ctx)) {
      auto s = std::make_unique<OverlapStmt>(r);
      s->first = buildBlock(block(ctx, 0));
      s->second = buildBlock(block(ctx, 1));
      return s;
    }
    if (alternative<P::NamedBlockStmtContext>(ctx)) { // `group { ... }`, the one named block
      auto s = std::make_unique<GroupStmt>(r);
      if (antlr4::tree::TerminalNode *named = token(ctx, P::ID); named->getText() != "group")
        diags_.error(range(named), "`" + named->getText() +
                                       " { ... }` is not a statement: the one named block is `group { ... }` "
                                       "(sends and posted receives, or collectives, issued together)");
      s->body = buildBlock(block(ctx));
      return s;
    }
    if (alternative<P::ExprStmtContext>(ctx))
      return std::make_unique<ExprStmt>(r, buildExpr(expr(ctx)));
    return buildBlock(block(ctx)); // blockStmt
  }

  // arg : (ID ASSIGN)? expr ;
  Arg buildArg(P::ArgContext *ctx) {
    Arg a;
    if (token(ctx, P::ID))
      name(ctx, a.name, a.nameRange);
    a.value = buildExpr(expr(ctx));
    return a;
  }

  static BinaryOp binaryOp(size_t tokenType) {
    switch (tokenType) {
    case P::STAR: return BinaryOp::Mul;
    case P::SLASH: return BinaryOp::Div;
    case P::PERCENT: return BinaryOp::Mod;
    case P::PLUS: return BinaryOp::Add;
    case P::MINUS: return BinaryOp::Sub;
    case P::DOTDOT: return BinaryOp::Range;
    case P::LT: return BinaryOp::Lt;
    case P::LE: return BinaryOp::Le;
    case P::GT: return BinaryOp::Gt;
    case P::GE: return BinaryOp::Ge;
    case P::IN: return BinaryOp::In;
    case P::EQ: return BinaryOp::Eq;
    case P::NE: return BinaryOp::Ne;
    case P::AND:
    case P::PY_AND: return BinaryOp::And;
    default: return BinaryOp::Or;
    }
  }

  ExprPtr buildExpr(P::ExprContext *ctx) {
    SourceRange r = range(ctx);
    if (auto *c = alternative<P::BinaryExprContext>(ctx)) {
      pythonOperator(c->op);
      return std::make_unique<BinaryExpr>(r, binaryOp(c->op->getType()), rangeOf(c->op, file_), buildExpr(expr(ctx, 0)),
                                          buildExpr(expr(ctx, 1)));
    }
    if (auto *c = alternative<P::UnaryExprContext>(ctx)) {
      pythonOperator(c->op);
      return std::make_unique<UnaryExpr>(r, c->op->getType() == P::MINUS ? UnaryOp::Neg : UnaryOp::Not,
                                         buildExpr(expr(ctx)));
    }
    if (alternative<P::CallExprContext>(ctx)) {
      auto e = std::make_unique<CallExpr>(r);
      name(ctx, e->callee, e->calleeRange);
      for (P::ArgContext *a : rules<P::ArgContext>(ctx, P::RuleArg))
        e->args.push_back(buildArg(a));
      return e;
    }
    if (alternative<P::IndexExprContext>(ctx)) {
      auto e = std::make_unique<IndexExpr>(r);
      name(ctx, e->name, e->nameRange);
      for (P::ExprContext *i : exprs(ctx))
        e->indices.push_back(buildExpr(i));
      return e;
    }
    if (alternative<P::NameExprContext>(ctx))
      return std::make_unique<NameExpr>(r, token(ctx, P::ID)->getText());
    if (alternative<P::IntExprContext>(ctx))
      return std::make_unique<IntExpr>(r, parseInt(token(ctx, P::INT)->getText(), r));
    if (alternative<P::BoolExprContext>(ctx))
      return std::make_unique<BoolExpr>(r, token(ctx, P::TRUE) != nullptr);
    if (alternative<P::SetExprContext>(ctx)) {
      auto e = std::make_unique<SetExpr>(r);
      for (P::ExprContext *i : exprs(ctx))
        e->elems.push_back(buildExpr(i));
      return e;
    }
    if (alternative<P::ListExprContext>(ctx)) { // Python's list: reported, read as the set
      std::string inner = sourceText(ctx);
      inner = inner.substr(1, inner.size() - 2);
      diags_.error(r, "a set is written in braces in a schedule: `{" + inner +
                          "}` (square brackets only index storage, as in `act[l]`)");
      auto e = std::make_unique<SetExpr>(r);
      for (P::ExprContext *i : exprs(ctx))
        e->elems.push_back(buildExpr(i));
      return e;
    }
    ExprPtr inner = buildExpr(expr(ctx)); // parenExpr
    inner->range = r;                     // keep the parentheses in the range a diagnostic underlines
    return inner;
  }

  int64_t parseInt(const std::string &text, SourceRange r) {
    int64_t v = 0;
    for (char ch : text) {
      int d = ch - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) {
        diags_.error(r, "integer literal `" + text + "` is too large (the largest is 9223372036854775807)");
        return 0;
      }
      v = v * 10 + d;
    }
    return v;
  }

  uint32_t file_;
  DiagnosticEngine &diags_;
};

} // namespace

std::unique_ptr<ast::Module> buildModule(P::FileContext *tree, uint32_t file, DiagnosticEngine &diags) {
  return AstBuilder(file, diags).buildFile(tree);
}

} // namespace schedc::parse
