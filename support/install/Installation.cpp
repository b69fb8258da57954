// Installation implementation: /proc/self/exe names the executable; an installed layout is
// recognised by its folders.
#include "install/Installation.h"

#include <filesystem>

namespace schedc::install {

namespace fs = std::filesystem;

namespace {

// PREFIX/<relative> if the executable is in PREFIX/bin and that folder holds `marker`.
std::string installed(const char *relative, const char *marker) {
  std::string exe = executableDir();
  if (exe.empty())
    return "";
  fs::path dir = fs::path(exe).parent_path() / relative;
  std::error_code error;
  return fs::exists(dir / marker, error) ? dir.lexically_normal().string() : "";
}

} // namespace

std::string executableDir() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? "" : self.parent_path().string();
}

std::string runtimeDir(const std::string &buildDir) {
  std::string dir = installed("lib/schedc", "libschedc_rt.a");
  return dir.empty() ? buildDir : dir;
}

std::string stdlibDir(const std::string &sourceDir) {
  std::string dir = installed("share/schedc/stdlib", "pipeline.sched");
  return dir.empty() ? sourceDir : dir;
}

} // namespace schedc::install
