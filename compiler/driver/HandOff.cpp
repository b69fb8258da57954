// HandOff implementation: schedc-llvm is beside this executable; execv keeps the process (its
// id, environment and open files, so an MPI launcher's ranks stay its ranks).
#include "driver/HandOff.h"

#include "diagnostics/Diagnostics.h"
#include "install/Installation.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace schedc::driver {

namespace {

// The program `build` and `run` are handed to: schedc-llvm beside this executable.
std::string compilerPath() {
  std::string dir = install::executableDir();
  return dir.empty() ? "schedc-llvm" : (std::filesystem::path(dir) / "schedc-llvm").string();
}

} // namespace

int handOffToCompiler(const std::vector<std::string> &args) {
  std::string path = compilerPath();
  std::vector<char *> argv{path.data()};
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str())); // execv does not write to its arguments
  argv.push_back(nullptr);
  std::cout.flush();
  execv(path.c_str(), argv.data());
  int why = errno;
  std::cerr << "schedc: error: cannot start " << path
            << ", which compiles for `build` and `run`: " << std::strerror(why) << "\n";
  return kExitIoError;
}

} // namespace schedc::driver
