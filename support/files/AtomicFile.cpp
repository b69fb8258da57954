// AtomicFile implementation: `path`.tmp, then a rename over `path`.
#include "files/AtomicFile.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>

namespace schedc {

bool writeAtomically(const std::string &path, const std::string &text) {
  return writeAtomically(path, [&](std::ostream &out) { out << text; });
}

bool writeAtomically(const std::string &path, const std::function<void(std::ostream &)> &write) {
  std::error_code error;
  auto status = std::filesystem::status(path, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A device, pipe or terminal (`--events=/dev/stdout`): write into it; renaming over it
    // would replace the device node itself.
    std::ofstream out(path, std::ios::binary);
    write(out);
    return static_cast<bool>(out.flush());
  }
  std::string temporary = path + ".tmp";
  bool written;
  {
    std::ofstream out(temporary, std::ios::binary);
    if (out)
      write(out);
    written = static_cast<bool>(out.flush());
  }
  if (written && std::rename(temporary.c_str(), path.c_str()) == 0)
    return true;
  std::remove(temporary.c_str()); // a full disk's half-written file is not left behind
  return false;
}

} // namespace schedc
