// SlotTypes — the type each storage slot of a function holds (a `let`'s value type; Int for
// slots no `let` writes): codegen keeps every slot as an i64, and releases at the function's
// exit the set handles its Set slots own.
#pragma once

#include "ir/IR.h"

#include <vector>

namespace schedc::codegen {

// By slot (ir::Function::slotNames): the type of what the function's lets store in it.
std::vector<ir::Type> slotTypes(const ir::Function &f);

} // namespace schedc::codegen
