// ParseTreeToAST implementation: one `build*` function per grammar rule.
#include "parse/ParseTreeToAST.h"

#include "parse/Tokens.h"

#include <limits>

namespace schedc::parse {

namespace {

using P = schedc_antlr::SchedParser;
using namespace ast;

class AstBuilder {
public:
  AstBuilder(uint32_t file, DiagnosticEngine &diags) : file_(file), diags_(diags) {}

  // file : topDecl* EOF ;
  std::unique_ptr<Module> buildFile(P::FileContext *ctx) {
    auto m = std::make_unique<Module>();
    m->file = file_;
    for (P::TopDeclContext *d : ctx->topDecl()) {
      if (auto *imp = d->importDecl())
        m->imports.push_back(buildImport(imp));
      else if (auto *s = d->scheduleDecl())
        m->functions.push_back(buildSchedule(s));
      else if (auto *p = d->procDecl())
        m->functions.push_back(buildProc(p));
    }
    return m;
  }

private:
  SourceRange range(antlr4::ParserRuleContext *ctx) const { return rangeOf(ctx, file_); }
  SourceRange range(antlr4::tree::TerminalNode *n) const { return rangeOf(n->getSymbol(), file_); }
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
  Import buildImport(P::ImportDeclContext *ctx) { return Import{unquote(ctx->STRING()), range(ctx)}; }

  // scheduleDecl : attribute* SCHEDULE ID LPAREN paramList? RPAREN block ;
  std::unique_ptr<Function> buildSchedule(P::ScheduleDeclContext *ctx) {
    auto f = std::make_unique<Function>();
    f->isSchedule = true;
    f->name = ctx->ID()->getText();
    f->nameRange = range(ctx->ID());
    f->range = range(ctx);
    for (P::AttributeContext *a : ctx->attribute())
      f->attributes.push_back(buildAttribute(a));
    if (ctx->paramList())
      f->params = buildParams(ctx->paramList());
    f->body = buildBlock(ctx->block());
    return f;
  }

  // procDecl : PROC ID LPAREN paramList? RPAREN block ;
  std::unique_ptr<Function> buildProc(P::ProcDeclContext *ctx) {
    auto f = std::make_unique<Function>();
    f->name = ctx->ID()->getText();
    f->nameRange = range(ctx->ID());
    f->range = range(ctx);
    if (ctx->paramList())
      f->params = buildParams(ctx->paramList());
    f->body = buildBlock(ctx->block());
    return f;
  }

  // attribute : AT ID LPAREN (arg (COMMA arg)*)? RPAREN ;
  Attribute buildAttribute(P::AttributeContext *ctx) {
    Attribute a;
    a.name = ctx->ID()->getText();
    a.nameRange = range(ctx->ID());
    a.range = range(ctx);
    for (P::ArgContext *arg : ctx->arg())
      a.args.push_back(buildArg(arg));
    return a;
  }

  // paramList : param (COMMA param)* COMMA? ;  param : ID (ASSIGN expr)? ;
  std::vector<Param> buildParams(P::ParamListContext *ctx) {
    std::vector<Param> out;
    for (P::ParamContext *p : ctx->param())
      out.push_back(Param{p->ID()->getText(), range(p->ID()), p->expr() ? buildExpr(p->expr()) : nullptr});
    return out;
  }

  // block : LBRACE stmt* RBRACE ;
  std::unique_ptr<BlockStmt> buildBlock(P::BlockContext *ctx) {
    auto b = std::make_unique<BlockStmt>(range(ctx));
    for (P::StmtContext *s : ctx->stmt())
      b->stmts.push_back(buildStmt(s));
    return b;
  }

  // target : ID (LBRACKET expr (COMMA expr)* RBRACKET)? ;
  Target buildTarget(P::TargetContext *ctx) {
    Target t;
    t.name = ctx->ID()->getText();
    t.nameRange = range(ctx->ID());
    t.range = range(ctx);
    t.indexed = ctx->LBRACKET() != nullptr;
    for (P::ExprContext *e : ctx->expr())
      t.indices.push_back(buildExpr(e));
    return t;
  }

  // ifChain : IF expr block (ELSE (block | ifChain))? ;
  std::unique_ptr<IfStmt> buildIf(P::IfChainContext *ctx) {
    auto s = std::make_unique<IfStmt>(range(ctx));
    s->cond = buildExpr(ctx->expr());
    s->then = buildBlock(ctx->block(0));
    if (ctx->ifChain())
      s->otherwise = buildIf(ctx->ifChain());
    else if (ctx->block().size() > 1)
      s->otherwise = buildBlock(ctx->block(1));
    return s;
  }

  StmtPtr buildStmt(P::StmtContext *ctx) {
    SourceRange r = range(ctx);
    if (auto *c = dynamic_cast<P::LetStmtContext *>(ctx)) {
      auto s = std::make_unique<LetStmt>(r);
      s->name = c->ID()->getText();
      s->nameRange = range(c->ID());
      s->value = buildExpr(c->expr());
      return s;
    }
    if (auto *c = dynamic_cast<P::AssignStmtContext *>(ctx)) {
      auto s = std::make_unique<AssignStmt>(r);
      for (P::TargetContext *t : c->target())
        s->targets.push_back(buildTarget(t));
      s->value = buildExpr(c->expr());
      return s;
    }
    if (auto *c = dynamic_cast<P::FreeStmtContext *>(ctx)) {
      if (c->DEL())
        diags_.error(range(c->DEL()),
                     "Python's `del` is `free` in a schedule: `free " + sourceText(c->target(0)) + ";`");
      auto s = std::make_unique<FreeStmt>(r);
      for (P::TargetContext *t : c->target())
        s->targets.push_back(buildTarget(t));
      return s;
    }
    if (auto *c = dynamic_cast<P::IfStmtContext *>(ctx))
      return buildIf(c->ifChain());
    if (auto *c = dynamic_cast<P::ForStmtContext *>(ctx)) {
      auto s = std::make_unique<ForStmt>(r);
      s->var = c->ID()->getText();
      s->varRange = range(c->ID());
      s->reversed = c->REVERSED() != nullptr;
      s->domain = buildExpr(c->expr());
      s->body = buildBlock(c->block());
      return s;
    }
    if (auto *c = dynamic_cast<P::MeshStmtContext *>(ctx)) {
      auto s = std::make_unique<MeshStmt>(r);
      for (P::AxisContext *a : c->axis())
        s->axes.push_back(MeshAxis{a->ID()->getText(), range(a->ID()), buildExpr(a->expr())});
      return s;
    }
    if (auto *c = dynamic_cast<P::RequireStmtContext *>(ctx)) {
      auto s = std::make_unique<RequireStmt>(r);
      s->cond = buildExpr(c->expr(0));
      if (c->STRING())
        s->message = unquote(c->STRING());
      else if (c->message)
        diags_.error(range(c->message), "the message of `require` is a string in double quotes, as in "
                                        "`require(layers % ranks == 0, \"layers must divide among the ranks\")`");
      else // no message: the condition, as written
        s->message = sourceText(c->expr(0));
      return s;
    }
    if (auto *c = dynamic_cast<P::OverlapStmtContext *>(ctx)) {
      auto s = std::make_unique<OverlapStmt>(r);
      s->first = buildBlock(c->block(0));
      s->second = buildBlock(c->block(1));
      return s;
    }
    if (auto *c = dynamic_cast<P::ExprStmtContext *>(ctx))
      return std::make_unique<ExprStmt>(r, buildExpr(c->expr()));
    auto *c = dynamic_cast<P::BlockStmtContext *>(ctx);
    return buildBlock(c->block());
  }

  // arg : (ID ASSIGN)? expr ;
  Arg buildArg(P::ArgContext *ctx) {
    Arg a;
    if (ctx->ID()) {
      a.name = ctx->ID()->getText();
      a.nameRange = range(ctx->ID());
    }
    a.value = buildExpr(ctx->expr());
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
    if (auto *c = dynamic_cast<P::BinaryExprContext *>(ctx)) {
      pythonOperator(c->op);
      return std::make_unique<BinaryExpr>(r, binaryOp(c->op->getType()), rangeOf(c->op, file_), buildExpr(c->expr(0)),
                                          buildExpr(c->expr(1)));
    }
    if (auto *c = dynamic_cast<P::UnaryExprContext *>(ctx)) {
      pythonOperator(c->op);
      return std::make_unique<UnaryExpr>(r, c->op->getType() == P::MINUS ? UnaryOp::Neg : UnaryOp::Not,
                                         buildExpr(c->expr()));
    }
    if (auto *c = dynamic_cast<P::CallExprContext *>(ctx)) {
      auto e = std::make_unique<CallExpr>(r);
      e->callee = c->ID()->getText();
      e->calleeRange = range(c->ID());
      for (P::ArgContext *a : c->arg())
        e->args.push_back(buildArg(a));
      return e;
    }
    if (auto *c = dynamic_cast<P::IndexExprContext *>(ctx)) {
      auto e = std::make_unique<IndexExpr>(r);
      e->name = c->ID()->getText();
      e->nameRange = range(c->ID());
      for (P::ExprContext *i : c->expr())
        e->indices.push_back(buildExpr(i));
      return e;
    }
    if (auto *c = dynamic_cast<P::NameExprContext *>(ctx))
      return std::make_unique<NameExpr>(r, c->ID()->getText());
    if (auto *c = dynamic_cast<P::IntExprContext *>(ctx))
      return std::make_unique<IntExpr>(r, parseInt(c->INT()->getText(), r));
    if (auto *c = dynamic_cast<P::BoolExprContext *>(ctx))
      return std::make_unique<BoolExpr>(r, c->TRUE() != nullptr);
    if (auto *c = dynamic_cast<P::SetExprContext *>(ctx)) {
      auto e = std::make_unique<SetExpr>(r);
      for (P::ExprContext *i : c->expr())
        e->elems.push_back(buildExpr(i));
      return e;
    }
    if (auto *c = dynamic_cast<P::ListExprContext *>(ctx)) { // Python's list: reported, read as the set
      std::string inner = sourceText(ctx);
      inner = inner.substr(1, inner.size() - 2);
      diags_.error(r, "a set is written in braces in a schedule: `{" + inner +
                          "}` (square brackets only index storage, as in `act[l]`)");
      auto e = std::make_unique<SetExpr>(r);
      for (P::ExprContext *i : c->expr())
        e->elems.push_back(buildExpr(i));
      return e;
    }
    auto *c = dynamic_cast<P::ParenExprContext *>(ctx);
    ExprPtr inner = buildExpr(c->expr());
    inner->range = r; // keep the parentheses in the range a diagnostic underlines
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
