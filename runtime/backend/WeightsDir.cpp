// WeightsDir implementation: the checks on the destination, a staging directory from
// mkdtemp, and renameat2(RENAME_EXCHANGE) for the atomic swap.
#include "backend/WeightsDir.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <regex>
#include <vector>

namespace schedc::backend {

namespace fs = std::filesystem;

namespace {

// Whether `entry` is a file schedc writes into a weights directory.
bool isLayerFile(const fs::directory_entry &entry, std::error_code &ec) {
  static const std::regex ours("layer_[0-9]+\\.npy");
  return !entry.is_symlink(ec) && entry.is_regular_file(ec) && std::regex_match(entry.path().filename().string(), ours);
}

// The name of the first entry of `dir` that schedc does not write ("" if there is none).
std::string foreignEntry(const fs::path &dir, std::error_code &ec) {
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!isLayerFile(*it, ec))
      return it->path().filename().string();
  return {};
}

// Removes a directory of weights schedc wrote: its layer files, then the directory if that
// left it empty (anything else put there meanwhile stays, and so does the directory).
void removeWeights(const fs::path &dir) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (isLayerFile(*it, ec))
      files.push_back(it->path());
  for (const fs::path &f : files)
    fs::remove(f, ec);
  fs::remove(dir, ec); // only removes an empty directory
}

} // namespace

std::string checkWeightsDestination(const std::string &dir, bool overwrite) {
  if (dir.empty())
    return "--weights-out needs a directory";
  std::error_code ec;
  fs::file_status st = fs::symlink_status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return "cannot use `" + dir + "` for the weights: " + ec.message();
  if (!fs::exists(st))
    return "";
  if (!overwrite)
    return "`" + dir + "` already exists; the weights go to a new directory (or pass --overwrite-weights to " +
           "replace the weights a previous run wrote there)";
  if (!fs::is_directory(st))
    return "`" + dir + "` is not a directory of weights; --overwrite-weights replaces only a directory a previous " +
           "run wrote";
  std::string foreign = foreignEntry(dir, ec);
  if (ec)
    return "cannot read `" + dir + "`: " + ec.message();
  if (!foreign.empty())
    return "`" + dir + "` holds `" + foreign + "`, which schedc did not write; it will not replace that directory";
  return "";
}

std::string makeWeightsStaging(const std::string &dir, std::string &tmp) {
  fs::path path = fs::path(dir).lexically_normal();
  if (!path.has_filename()) // "w/" names the directory w
    path = path.parent_path();
  std::error_code ec;
  if (path.has_parent_path() && (fs::create_directories(path.parent_path(), ec), ec))
    return "cannot create `" + path.parent_path().string() + "`: " + ec.message();
  std::string pattern = path.string() + ".tmp.XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data()))
    return "cannot create a directory beside `" + dir + "`: " + std::strerror(errno);
  tmp = buffer.data();
  return "";
}

void discardWeightsStaging(const std::string &tmp) {
  removeWeights(tmp);
}

std::string publishWeights(const std::string &tmp, const std::string &dir, bool overwrite) {
  if (std::string problem = checkWeightsDestination(dir, overwrite); !problem.empty()) {
    removeWeights(tmp);
    return problem;
  }
  // Never over anything (not even a directory that appeared meanwhile); over weights a
  // previous run wrote only by exchanging the two (the check above allowed it).
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) == 0)
    return "";
  bool exchanged =
      errno == EEXIST && overwrite && renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0;
  std::string why = std::strerror(errno);
  removeWeights(tmp); // the new weights if nothing moved; the previous run's after an exchange
  return exchanged ? "" : "cannot move the weights into `" + dir + "`: " + why;
}

} // namespace schedc::backend
