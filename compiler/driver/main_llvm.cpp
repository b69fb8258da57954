// main of `schedc-llvm`: the driver with its compiler (driver/Compile.h) — every command,
// `build` and `run` included. `schedc` hands those two to it.
#include "codegen/Codegen.h"
#include "driver/Compile.h"
#include "driver/Driver.h"

int main(int argc, char **argv) {
  schedc::codegen::installFatalErrorHandler();
  return schedc::driver::driverMain(argc, argv, &schedc::driver::llvmCompiler());
}
