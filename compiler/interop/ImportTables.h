// ImportTables — an imported schedule's rank blocks as tables (ir::TableStmt), for the
// commands that run it: a line of source a cell made the front end (ANTLR, the AST, sema)
// nearly all of the time and memory of checking a large file. Each statement the import
// writes in a rank's block is split into its shape (its code with each integer a hole,
// `_hole0`, `_hole1`, ...: ImportCode.h) and those integers; the source holds each shape
// once, sema lowers it as it lowers the line, and a row sets the holes and runs it: the same
// code as the line, reported at the same cell. `schedc import` writes the lines themselves.
//
// The skeleton's invariant, which spliceInto relies on: the hole lets come first, each
// rank's block is one call of `_row()` (rows in order), and the shapes follow one call of
// `_shapes()`, each the whole body of an `if false { }`. Names with a leading `_` cannot be
// a schedule's name made from a file's (scheduleNameFor).
#pragma once

#include "diagnostics/SourceManager.h"
#include "interop/ImportCode.h"
#include "ir/IR.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace schedc::interop {

class RowTables {
public:
  // Starts a rank's block: `condition` is the block's (`rank == 3`), `at` the row's range,
  // `statements` about how many it will hold (room is made for them).
  void startRow(std::string condition, SourceRange at, size_t statements);
  // A statement of the current block, reported at `at`.
  void add(const CodeText &code, SourceRange at);
  // The schedule's body after its header: the hole lets, the rank blocks, the shapes, and
  // the two marker procedures after the schedule's closing brace (`close`), each line with
  // its origin.
  void writeBody(const std::string &close, SourceRange top,
                 const std::function<void(const std::string &, SourceRange)> &line) const;
  // Replaces the markers in `schedule` (sema's IR of the text) by the tables.
  void spliceInto(ir::Program &program, ir::Function &schedule);

private:
  struct Block {
    std::string condition;
    SourceRange at;
    std::vector<ir::TableStmt::Row> rows;
    std::vector<int32_t> values;
  };
  struct ShapeText {
    std::string code;
    SourceRange at; // its first cell's
    uint32_t holes = 0;
  };
  struct FormsHash {
    size_t operator()(const std::vector<const char *> &forms) const;
  };
  std::vector<Block> blocks_;
  std::vector<ShapeText> shapes_;
  std::unordered_map<std::vector<const char *>, uint32_t, FormsHash> shapeIds_; // by its fragments' templates
  uint32_t holes_ = 0;                                                          // the most any shape has
  std::vector<const char *> forms_;                                             // the statement's being added
};

} // namespace schedc::interop
