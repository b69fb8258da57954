// Imports implementation: a depth-first walk over `import` declarations with an explicit
// stack of files being loaded, so a cycle is seen the moment it closes.
#include "sema/Imports.h"

#include "install/Installation.h"
#include "parse/Parser.h"

#include <cstdlib>
#include <filesystem>
#include <map>

namespace schedc::sema {

namespace fs = std::filesystem;

std::string defaultStdlibDir() {
  if (const char *env = std::getenv("SCHEDC_STDLIB"))
    return env;
#ifdef SCHEDC_STDLIB_DIR
  return install::stdlibDir(SCHEDC_STDLIB_DIR);
#else
  return install::stdlibDir("stdlib");
#endif
}

namespace {

std::string canonical(const std::string &path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::path(path), ec);
  return ec ? path : p.string();
}

class Loader {
public:
  Loader(const ImportOptions &o, SourceManager &s, DiagnosticEngine &d) : options_(o), sources_(s), diags_(d) {}
  bool unreadable() const { return unreadable_; }

  std::vector<std::unique_ptr<ast::Module>> run(uint32_t mainFile) {
    visit(mainFile, canonical(sources_.name(mainFile)));
    if (failed_)
      return {};
    return std::move(done_);
  }

private:
  struct Active {
    std::string path;
    SourceRange importedAt;
  };

  void visit(uint32_t file, const std::string &canon) {
    state_[canon] = State::Loading;
    std::unique_ptr<ast::Module> m = parseModule(file, sources_, diags_);
    if (!m) {
      failed_ = true;
      state_[canon] = State::Done;
      return;
    }
    fs::path dir = fs::path(sources_.name(file)).parent_path();
    for (const ast::Import &imp : m->imports) {
      if (diags_.limitReached())
        break;
      std::vector<std::string> tried;
      std::string found = resolve(imp.path, dir, tried);
      if (found.empty()) {
        std::string where;
        for (const std::string &t : tried)
          where += (where.empty() ? "" : ", ") + t;
        diags_.error(imp.range, "cannot find imported file `" + imp.path + "` (searched " + where + ")");
        failed_ = unreadable_ = true;
        continue;
      }
      std::string canonImport = canonical(found);
      auto it = state_.find(canonImport);
      if (it != state_.end() && it->second == State::Loading) {
        reportCycle(imp, canonImport, canon);
        continue;
      }
      if (it != state_.end())
        continue; // already loaded (a diamond, not a cycle)
      std::string error;
      std::optional<uint32_t> id = sources_.load(found, error);
      if (!id) {
        diags_.error(imp.range, "cannot read imported file `" + found + "`: " + error);
        failed_ = unreadable_ = true;
        continue;
      }
      stack_.push_back(Active{canon, imp.range});
      visit(*id, canonImport);
      stack_.pop_back();
    }
    state_[canon] = State::Done;
    done_.push_back(std::move(m));
  }

  void reportCycle(const ast::Import &imp, const std::string &target, const std::string &current) {
    failed_ = true;
    auto d = diags_.error(imp.range, "import cycle: `" + imp.path + "` imports this file back");
    // Walk the active chain from where the cycle starts.
    size_t start = 0;
    while (start < stack_.size() && stack_[start].path != target)
      ++start;
    for (size_t i = start; i < stack_.size(); ++i) {
      const std::string &importer = stack_[i].path;
      std::string imported = i + 1 < stack_.size() ? stack_[i + 1].path : current;
      d.note(stack_[i].importedAt, "`" + fs::path(importer).filename().string() + "` imports `" +
                                       fs::path(imported).filename().string() + "` here");
    }
  }

  std::string resolve(const std::string &path, const fs::path &dir, std::vector<std::string> &tried) {
    std::vector<fs::path> candidates;
    if (fs::path(path).is_absolute()) {
      candidates.push_back(path);
    } else {
      candidates.push_back(dir / path);
      for (const std::string &inc : options_.includeDirs)
        candidates.push_back(fs::path(inc) / path);
      if (!options_.stdlibDir.empty())
        candidates.push_back(fs::path(options_.stdlibDir) / path);
    }
    for (const fs::path &c : candidates) {
      std::error_code ec;
      fs::file_status st = fs::status(c, ec);
      if (fs::exists(st) && !fs::is_directory(st)) // the source manager says why one cannot be read
        return c.string();
      tried.push_back(c.parent_path().empty() ? "." : c.parent_path().string());
    }
    return {};
  }

  enum class State { Loading, Done };
  const ImportOptions &options_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  std::map<std::string, State> state_;
  std::vector<Active> stack_;
  std::vector<std::unique_ptr<ast::Module>> done_;
  bool failed_ = false;
  bool unreadable_ = false; // an imported file is missing or cannot be read
};

} // namespace

std::vector<std::unique_ptr<ast::Module>> loadModules(uint32_t mainFile, const ImportOptions &options,
                                                      SourceManager &sources, DiagnosticEngine &diags,
                                                      bool &unreadable) {
  Loader loader(options, sources, diags);
  std::vector<std::unique_ptr<ast::Module>> modules = loader.run(mainFile);
  unreadable = loader.unreadable();
  return modules;
}

} // namespace schedc::sema
