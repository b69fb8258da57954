// RuntimeFunctions implementation: each function of the list declared once, `nounwind`
// (the runtime reports errors through its rank, never by unwinding through compiled code).
#include "codegen/RuntimeFunctions.h"

#include "schedc/runtime.h"

namespace schedc::codegen {

RuntimeFunctions::RuntimeFunctions(llvm::Module &m) : m_(m) {
  // The list's parameter types, as LLVM sees them.
  llvm::LLVMContext &c = m.getContext();
  llvm::Type *none = llvm::Type::getVoidTy(c), *i32 = llvm::Type::getInt32Ty(c), *u32 = i32;
  llvm::Type *i64 = llvm::Type::getInt64Ty(c), *handle = i64;
  llvm::Type *rank = llvm::PointerType::getUnqual(c), *i64s = rank, *u32s = rank, *str = rank, *args = rank,
             *out = rank;
#define SCHEDC_DECLARE(name, result, params) add(#name, result, {SCHEDC_UNPARENTHESIZE params});
#define SCHEDC_UNPARENTHESIZE(...) __VA_ARGS__
  SCHEDC_RUNTIME_FUNCTIONS(SCHEDC_DECLARE)
#undef SCHEDC_DECLARE
#undef SCHEDC_UNPARENTHESIZE
  add("schedc_main", i32, {rank, i32, rank});
}

void RuntimeFunctions::add(const char *name, llvm::Type *ret, std::vector<llvm::Type *> params) {
  auto *type = llvm::FunctionType::get(ret, params, false);
  llvm::FunctionCallee f = m_.getOrInsertFunction(name, type);
  if (auto *fn = llvm::dyn_cast<llvm::Function>(f.getCallee()))
    fn->addFnAttr(llvm::Attribute::NoUnwind);
  fns_[name] = f;
}

} // namespace schedc::codegen
