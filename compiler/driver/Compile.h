// Compile — the driver's Compiler over codegen/ (LLVM): `schedc build` writes an executable,
// an object file or textual LLVM IR; `schedc run` compiles in memory and runs. Only
// schedc-llvm links it.
#pragma once

#include "driver/Driver.h"

namespace schedc::driver {

const Compiler &llvmCompiler();

} // namespace schedc::driver
