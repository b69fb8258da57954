// main of `schedc`: the driver without a compiler. It checks, draws and compares without
// loading LLVM, MPI or BLAS, and hands `build` and `run` to schedc-llvm (driver/HandOff.h).
#include "driver/Driver.h"

int main(int argc, char **argv) {
  return schedc::driver::driverMain(argc, argv, nullptr);
}
