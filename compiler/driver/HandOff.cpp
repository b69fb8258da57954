// HandOff implementation: /proc/self/exe names this executable; execv keeps the process (its
// id, environment and open files, so an MPI launcher's ranks stay its ranks).
#include "driver/HandOff.h"

#include "diagnostics/Diagnostics.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace schedc::driver {

std::string compilerPath() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    return "schedc-llvm";
  return (self.parent_path() / "schedc-llvm").string();
}

int handOffToCompiler(const std::vector<std::string> &args) {
  std::string path = compilerPath();
  std::vector<char *> argv;
  argv.push_back(path.data());
  std::vector<std::string> copies = args;
  for (std::string &a : copies)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execv(path.c_str(), argv.data());
  int why = errno;
  std::cerr << "schedc: error: cannot start " << path
            << ", which compiles for `build` and `run`: " << std::strerror(why) << "\n";
  return kExitIoError;
}

} // namespace schedc::driver
