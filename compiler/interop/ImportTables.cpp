// ImportTables implementation: shapes found by their fragments' templates, and the splice of
// the tables into sema's IR at the skeleton's markers.
#include "interop/ImportTables.h"

#include "diagnostics/InternalError.h"
#include "ir/Walk.h"

#include <algorithm>

namespace schedc::interop {

namespace {

constexpr const char *kRowMarker = "_row";
constexpr const char *kShapesMarker = "_shapes";

// The function named `name` (a marker procedure the skeleton declares).
uint32_t functionNamed(const ir::Program &program, const char *name) {
  for (uint32_t i = 0; i < program.functions.size(); ++i)
    if (program.functions[i].name == name)
      return i;
  SCHEDC_UNREACHABLE("an imported schedule without its marker procedure");
}

// Whether a block holds no `require`, call or mesh, at any depth (ir::TableStmt's shapes).
bool plainStatements(const ir::Block &block) {
  bool plain = true;
  ir::forEachStatement(block, [&](const ir::Stmt &s) {
    plain &= !std::holds_alternative<ir::RequireStmt>(s.node) && !std::holds_alternative<ir::CallStmt>(s.node) &&
             !std::holds_alternative<ir::MeshStmt>(s.node);
  });
  return plain;
}

bool callsMarker(const ir::Stmt &s, uint32_t marker) {
  auto *call = std::get_if<ir::CallStmt>(&s.node);
  return call && call->callee == marker;
}

} // namespace

void RowTables::startRow(std::string condition, SourceRange at, size_t statements) {
  blocks_.push_back(Block{std::move(condition), at, {}, {}});
  blocks_.back().rows.reserve(statements);
}

size_t RowTables::FormsHash::operator()(const std::vector<const char *> &forms) const {
  size_t h = forms.size();
  for (const char *form : forms)
    h = (h ^ reinterpret_cast<uintptr_t>(form)) * 0x100000001B3ull;
  return h;
}

void RowTables::add(const CodeText &code, SourceRange at) {
  SCHEDC_ASSERT(!blocks_.empty(), "a statement before its rank's block");
  Block &block = blocks_.back();
  auto first = static_cast<uint32_t>(block.values.size());
  forms_.clear();
  for (const Fragment &f : code.fragments()) {
    forms_.push_back(f.form);
    block.values.insert(block.values.end(), f.numbers.begin(), f.numbers.begin() + f.count);
  }
  auto holes = static_cast<uint32_t>(block.values.size() - first);
  auto it = shapeIds_.find(forms_);
  if (it == shapeIds_.end()) {
    it = shapeIds_.emplace(forms_, static_cast<uint32_t>(shapes_.size())).first;
    shapes_.push_back(ShapeText{code.shape(), at, holes});
    holes_ = std::max(holes_, holes);
  }
  SCHEDC_ASSERT(shapes_[it->second].holes == holes, "two shapes of the same templates and other holes");
  block.rows.push_back(ir::TableStmt::Row{it->second, first, at});
}

void RowTables::writeBody(const std::string &close, SourceRange top,
                          const std::function<void(const std::string &, SourceRange)> &line) const {
  for (uint32_t k = 0; k < holes_; ++k)
    line("  let " + holeName(k) + " = 0;", top);
  for (const Block &block : blocks_)
    line("  if " + block.condition + " { " + kRowMarker + "(); }", block.at);
  line(std::string("  ") + kShapesMarker + "();", top);
  for (const ShapeText &shape : shapes_)
    line("  if false { " + shape.code + " }", shape.at);
  line(close, top);
  line(std::string("proc ") + kRowMarker + "() {}", top);
  line(std::string("proc ") + kShapesMarker + "() {}", top);
}

void RowTables::spliceInto(ir::Program &program, ir::Function &schedule) {
  uint32_t rowMarker = functionNamed(program, kRowMarker), shapesMarker = functionNamed(program, kShapesMarker);
  ir::Block &body = schedule.body;
  auto shapes = std::make_shared<std::vector<ir::TableStmt::Shape>>();
  for (size_t i = 0; i < body.size(); ++i) {
    if (!callsMarker(body[i], shapesMarker))
      continue;
    SCHEDC_ASSERT(i + shapes_.size() < body.size(), "an imported schedule short of its shapes");
    for (size_t k = 0; k < shapes_.size(); ++k) {
      auto *wrapper = std::get_if<ir::IfStmt>(&body[i + 1 + k].node);
      SCHEDC_ASSERT(wrapper, "an imported shape that is not the body of an `if`");
      SCHEDC_ASSERT(plainStatements(wrapper->then), "an imported shape with a require, a call or a mesh");
      shapes->push_back(ir::TableStmt::Shape{std::move(wrapper->then), shapes_[k].holes});
    }
    body.erase(body.begin() + static_cast<std::ptrdiff_t>(i),
               body.begin() + static_cast<std::ptrdiff_t>(i + 1 + shapes_.size()));
    break;
  }
  SCHEDC_ASSERT(shapes->size() == shapes_.size(), "an imported schedule without its shapes");
  std::vector<uint32_t> holes;
  for (uint32_t k = 0; k < holes_; ++k) {
    auto it = std::find(schedule.slotNames.begin(), schedule.slotNames.end(), holeName(k));
    SCHEDC_ASSERT(it != schedule.slotNames.end(), "an imported schedule without its hole");
    holes.push_back(static_cast<uint32_t>(it - schedule.slotNames.begin()));
  }
  size_t next = 0;
  for (ir::Stmt &s : body) {
    auto *block = std::get_if<ir::IfStmt>(&s.node);
    if (!block || block->then.size() != 1 || !callsMarker(block->then[0], rowMarker))
      continue;
    SCHEDC_ASSERT(next < blocks_.size(), "an imported schedule with more rank blocks than rows");
    Block &rows = blocks_[next++];
    block->then[0].node = ir::TableStmt{shapes, holes, std::move(rows.rows), std::move(rows.values)};
  }
  SCHEDC_ASSERT(next == blocks_.size(), "an imported schedule with fewer rank blocks than rows");
}

} // namespace schedc::interop
