// ProgramDescription implementation. The LLVM struct types mirror the C structs of
// schedc/runtime.h field for field; LLVM lays them out with the target's alignment rules,
// as the C compiler does.
#include "codegen/ProgramDescription.h"

#include "codegen/LowerToLLVM.h"
#include "schedc/runtime.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace schedc::codegen {

namespace {

class Tables {
public:
  explicit Tables(llvm::Module &m)
      : m_(m), c_(m.getContext()), i32_(llvm::Type::getInt32Ty(c_)), i64_(llvm::Type::getInt64Ty(c_)),
        ptr_(llvm::PointerType::getUnqual(c_)) {}

  llvm::Constant *str(const std::string &s) {
    auto *data = llvm::ConstantDataArray::getString(c_, s, true);
    return new llvm::GlobalVariable(m_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data, ".str");
  }
  llvm::Constant *u32(uint64_t v) { return llvm::ConstantInt::get(i32_, v); }
  llvm::Constant *i64(int64_t v) { return llvm::ConstantInt::get(i64_, static_cast<uint64_t>(v), true); }

  // A constant array of `type` from `elems`, as a private global; its address.
  llvm::Constant *array(llvm::StructType *type, const std::vector<llvm::Constant *> &elems, const char *name) {
    auto *arrayType = llvm::ArrayType::get(type, elems.size());
    return new llvm::GlobalVariable(m_, arrayType, true, llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantArray::get(arrayType, elems), name);
  }

  llvm::Module &m_;
  llvm::LLVMContext &c_;
  llvm::Type *i32_, *i64_, *ptr_;
};

// An array's enum schedc_value_kind: the kinds' order in ValueKinds.def.
int32_t kindCode(ir::Type t) {
  std::optional<ValueKind> k = ir::valueKind(t);
  return k ? static_cast<int32_t>(*k) : SCHEDC_KIND_UNKNOWN;
}

} // namespace

void emitProgramDescription(llvm::Module &module, const ir::Program &program, const ir::Function &entry,
                            const SourceManager &sources, Locations &locations, llvm::Function *parameters,
                            llvm::Function *entryFunction) {
  Tables t(module);
  llvm::LLVMContext &c = module.getContext();
  auto *locationType = llvm::StructType::create(c, {t.i32_, t.i32_, t.i32_, t.i32_, t.i32_}, "schedc_location");
  auto *fileType = llvm::StructType::create(c, {t.ptr_, t.ptr_}, "schedc_file");
  auto *arrayType = llvm::StructType::create(c, {t.ptr_, t.i32_}, "schedc_array");
  auto *paramType = llvm::StructType::create(c, {t.ptr_, t.i32_, t.i32_}, "schedc_param");
  auto *programType = llvm::StructType::create(c,
                                               {t.i32_, t.ptr_, t.i32_, t.ptr_, t.i32_, t.ptr_, t.i32_, t.ptr_, t.i32_,
                                                t.ptr_, t.i32_, t.ptr_, t.i32_, t.i64_, t.i64_, t.ptr_, t.ptr_, t.i32_},
                                               "schedc_program");

  // Parameters and the schedule itself need locations too: take them before the table is written.
  uint32_t scheduleLoc = locations.id(SourceRange(entry.range.begin));
  std::vector<llvm::Constant *> params;
  for (const ir::Param &p : entry.params)
    params.push_back(llvm::ConstantStruct::get(
        paramType, {t.str(p.name), t.u32(p.defaultValue ? 1 : 0), t.u32(locations.id(p.range))}));

  // Every file loaded (the main file and its imports): SourceManager ids 1.. are indices 0..
  std::vector<llvm::Constant *> files;
  for (uint32_t id = 1; id < sources.fileCount(); ++id)
    files.push_back(llvm::ConstantStruct::get(fileType, {t.str(sources.name(id)), t.str(sources.text(id))}));
  std::vector<llvm::Constant *> locs;
  for (const SourceRange &located : locations.ranges()) {
    SourceRange r = sources.shown(located); // an imported PyTorch schedule's line: its cell
    locs.push_back(llvm::ConstantStruct::get(locationType, {t.u32(r.begin.file - 1), t.u32(r.begin.line),
                                                            t.u32(r.begin.col), t.u32(r.end.line), t.u32(r.end.col)}));
  }
  std::vector<llvm::Constant *> arrays;
  for (const ir::Array &a : program.arrays)
    arrays.push_back(
        llvm::ConstantStruct::get(arrayType, {t.str(a.name), t.u32(static_cast<uint32_t>(kindCode(a.kind)))}));
  std::vector<llvm::Constant *> axes;
  for (const std::string &a : entry.axes)
    axes.push_back(t.str(a));
  auto *axesType = llvm::ArrayType::get(t.ptr_, axes.size());
  auto *axesTable = new llvm::GlobalVariable(module, axesType, true, llvm::GlobalValue::PrivateLinkage,
                                             llvm::ConstantArray::get(axesType, axes), "axes");

  auto *description = llvm::ConstantStruct::get(
      programType,
      {t.u32(SCHEDC_ABI_VERSION), t.str(entry.name), t.u32(scheduleLoc), t.array(fileType, files, "files"),
       t.u32(files.size()), t.array(locationType, locs, "locations"), t.u32(locs.size()),
       t.array(paramType, params, "params"), t.u32(params.size()), t.array(arrayType, arrays, "arrays"),
       t.u32(arrays.size()), axesTable, t.u32(axes.size()), t.i64(entry.targets.steps.value_or(-1)),
       t.i64(entry.targets.memory.value_or(-1)), parameters, entryFunction, t.u32(entry.orderedPointToPoint ? 1 : 0)});
  auto *programVar = new llvm::GlobalVariable(module, programType, true, llvm::GlobalValue::ExternalLinkage,
                                              description, kProgramSymbol);

  // int main(int argc, char **argv) { return schedc_main(&schedc_program, argc, argv); }
  auto *mainType = llvm::FunctionType::get(t.i32_, {t.i32_, t.ptr_}, false);
  auto *mainFn = llvm::Function::Create(mainType, llvm::Function::ExternalLinkage, "main", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", mainFn));
  llvm::FunctionCallee schedcMain =
      module.getOrInsertFunction("schedc_main", llvm::FunctionType::get(t.i32_, {t.ptr_, t.i32_, t.ptr_}, false));
  b.CreateRet(b.CreateCall(schedcMain, {programVar, mainFn->getArg(0), mainFn->getArg(1)}));
}

} // namespace schedc::codegen
