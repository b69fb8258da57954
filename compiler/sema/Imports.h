// Imports — loads a .sched file and, transitively, every file it imports, each once. An
// import path is looked up relative to the importing file, then in each `-I` directory, then
// in the standard library (stdlib/). A missing file and an import cycle are errors at the
// `import` that causes them; a cycle's diagnostic lists the chain of files.
#pragma once

#include "ast/AST.h"
#include "diagnostics/Diagnostics.h"

#include <memory>
#include <string>
#include <vector>

namespace schedc::sema {

struct ImportOptions {
  std::vector<std::string> includeDirs; // -I, searched in order
  std::string stdlibDir;                // searched last
};

// Parses `mainFile` (already loaded) and all imports. Modules come back in dependency order
// with the main module last. Returns an empty vector if any file failed (all errors reported);
// `unreadable` says whether an imported file was missing or could not be read (exit 4).
std::vector<std::unique_ptr<ast::Module>> loadModules(uint32_t mainFile, const ImportOptions &options,
                                                      SourceManager &sources, DiagnosticEngine &diags,
                                                      bool &unreadable);

// The directory the standard library is found in: $SCHEDC_STDLIB if set, else the build's.
std::string defaultStdlibDir();

} // namespace schedc::sema
