// RuntimeFunctions — the runtime functions compiled code calls, declared in an LLVM module from
// the ABI's list (SCHEDC_RUNTIME_FUNCTIONS in schedc/runtime.h) with their LLVM signatures,
// so that the list is the one place a function of the ABI is named and typed.
#pragma once

#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Module.h"

#include <map>
#include <string>
#include <vector>

namespace schedc::codegen {

class RuntimeFunctions {
public:
  explicit RuntimeFunctions(llvm::Module &m);
  // The declaration of `name` (an internal error if the ABI has none).
  llvm::FunctionCallee operator()(const char *name) const { return fns_.at(name); }

private:
  void add(const char *name, llvm::Type *ret, std::vector<llvm::Type *> params);
  llvm::Module &m_;
  std::map<std::string, llvm::FunctionCallee> fns_;
};

} // namespace schedc::codegen
