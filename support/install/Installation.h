// Installation — where schedc's own files are for the running program: in the build tree,
// or under the prefix it was installed to (`cmake --install`: PREFIX/bin/schedc,
// PREFIX/lib/schedc/ the runtime archives executables are linked with, PREFIX/share/schedc/
// stdlib). An installed program is recognised by those folders beside its own bin/, so an
// install works wherever it is put and never reads the build tree it came from.
#pragma once

#include <string>

namespace schedc::install {

// The folder of the running executable ("" if the system does not say).
std::string executableDir();

// The runtime archives' folder: PREFIX/lib/schedc when installed, else `buildDir`.
std::string runtimeDir(const std::string &buildDir);

// The standard library's folder: PREFIX/share/schedc/stdlib when installed, else `sourceDir`.
std::string stdlibDir(const std::string &sourceDir);

} // namespace schedc::install
