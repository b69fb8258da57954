// SemaContext — state shared by the passes inside sema/: the program being built, the
// global tables of functions and storage arrays, and small helpers for messages. Internal to
// compiler/sema/.
#pragma once

#include "ast/AST.h"
#include "diagnostics/Diagnostics.h"
#include "diagnostics/Suggest.h"
#include "ir/IR.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace schedc::sema {

struct SemaContext {
  DiagnosticEngine &diags;
  ir::Program &program;
  // Function name -> id, and the AST each id came from.
  std::map<std::string, uint32_t> functionIds;
  std::vector<const ast::Function *> functionAsts;
  // Storage array name -> id (arrays are global to the program).
  std::map<std::string, uint32_t> arrayIds;
  // Call graph edges (caller, callee, call site) for the recursion check.
  struct CallSite {
    uint32_t caller, callee;
    SourceRange range;
  };
  std::vector<CallSite> calls;
  // Arrays read somewhere but assigned nowhere (created so the IR can name them).
  std::set<uint32_t> unassignedArrays;
  // "never assigned" errors inside procedures: reported only if the procedure can run,
  // so an unused library procedure does not fail a program that never uses its storage.
  struct Deferred {
    uint32_t function;
    SourceRange range;
    std::string message;
  };
  std::vector<Deferred> deferred;
};

// "a weight", "an activation", "an integer", ...
std::string withArticle(ir::Type t);

// Infers every storage array's kind from the operations assigned to it (sema/StorageKinds.cpp).
void inferStorageKinds(const std::vector<std::unique_ptr<ast::Module>> &modules, SemaContext &ctx);

// Checks one function and fills its IR (sema/FunctionLowering.cpp).
void lowerFunction(const ast::Function &fn, uint32_t id, SemaContext &ctx);

} // namespace schedc::sema
