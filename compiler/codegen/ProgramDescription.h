// ProgramDescription — emits the `schedc_program` constant (runtime/include/schedc/runtime.h)
// into a module: the source files (path and text, for diagnostics with the source line),
// the table of locations the generated code refers to, the parameters, storage arrays,
// mesh axes and puzzle targets, and pointers to the parameter-defaults and entry
// functions; plus a `main` that hands it to schedc_main. Internal to compiler/codegen/.
#pragma once

#include "diagnostics/SourceManager.h"
#include "ir/IR.h"

#include <map>
#include <tuple>
#include <vector>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace schedc::codegen {

// The source locations compiled code passes to the runtime, numbered as they are first used.
class Locations {
public:
  uint32_t id(const SourceRange &r) {
    auto key = std::make_tuple(r.begin.file, r.begin.line, r.begin.col, r.end.line, r.end.col);
    auto [it, inserted] = ids_.emplace(key, static_cast<uint32_t>(ranges_.size()));
    if (inserted)
      ranges_.push_back(r);
    return it->second;
  }
  const std::vector<SourceRange> &ranges() const { return ranges_; }

private:
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> ids_;
  std::vector<SourceRange> ranges_;
};

void emitProgramDescription(llvm::Module &module, const ir::Program &program, const ir::Function &entry,
                            const SourceManager &sources, Locations &locations, llvm::Function *parameters,
                            llvm::Function *entryFunction);

} // namespace schedc::codegen
