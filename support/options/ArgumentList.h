// ArgumentList — the cursor that the two hand-written option parsers (schedc's and a compiled
// program's) walk their arguments with, so that both read values alike: `--name=value` and
// `--name value`; a one-letter flag's value may also be glued to it (`-Dx=1`, `-ofile`); a
// flag with nothing after it is still recognised, and error() says its value is missing.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace schedc {

class ArgumentList {
public:
  explicit ArgumentList(std::vector<std::string> args) : args_(std::move(args)) {}

  bool done() const { return next_ >= args_.size(); }
  // Moves to the next argument and returns it.
  const std::string &take() {
    current_ = next_++;
    return args_[current_];
  }
  const std::string &current() const { return args_[current_]; }

  // Whether the current argument is `flag` given a value; the value goes into `out` (a value
  // in the next argument is taken too). `flag` last on the line: true, `out` empty, and
  // error() set.
  bool value(const std::string &flag, std::string &out) {
    const std::string &a = current();
    if (a.size() > flag.size() && a.compare(0, flag.size(), flag) == 0) {
      size_t skip = a[flag.size()] == '=' ? 1 : 0;
      if (flag.size() != 2 && !skip) // `--hiddenx` is not `--hidden`
        return false;
      out = a.substr(flag.size() + skip);
      return true;
    }
    if (a != flag)
      return false;
    if (done()) {
      if (error_.empty())
        error_ = "option `" + flag + "` needs a value";
      out.clear();
      return true;
    }
    out = args_[next_++];
    return true;
  }

  // The current argument and the value taken with it, if value() took the next one.
  std::vector<std::string> currentWithValue() const {
    return std::vector<std::string>(args_.begin() + static_cast<std::ptrdiff_t>(current_),
                                    args_.begin() + static_cast<std::ptrdiff_t>(next_));
  }

  // The first missing value's message ("" if none).
  const std::string &error() const { return error_; }

private:
  std::vector<std::string> args_;
  size_t current_ = 0, next_ = 0;
  std::string error_;
};

} // namespace schedc
