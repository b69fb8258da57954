// StandardOutput implementation: fcntl to find a closed descriptor, the streams' error state
// (std::cout's badbit, ferror and fflush on stdout) to find a lost write.
#include "diagnostics/StandardOutput.h"

#include "diagnostics/Diagnostics.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <string>
#include <unistd.h>

namespace schedc {

namespace {
bool outputWasClosed = false;

// Puts /dev/null, read-only, at descriptor `fd` where it is closed; true if it was.
bool fillIfClosed(int fd) {
  if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
    return false;
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0 && null != fd) {
    dup2(null, fd);
    close(null);
  }
  return true;
}
} // namespace

void guardStandardStreams() {
  outputWasClosed = fillIfClosed(STDOUT_FILENO);
  fillIfClosed(STDERR_FILENO);
}

int finishStandardOutput(int exitCode, const char *program) {
  errno = 0;
  std::cout.flush();
  bool lost = std::cout.fail();
  int reason = errno;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    lost = true;
    reason = reason ? reason : errno;
  }
  if (!lost)
    return exitCode;
  std::string why = outputWasClosed || reason == EBADF ? "it is closed"
                    : reason                           ? std::strerror(reason)
                                                       : "a write failed";
  std::string line = std::string(program) + ": error: cannot write to standard output: " + why +
                     " (what it should have shown is lost; write it to a file with -o, or to a pipe)\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
  return exitCode == kExitOk || exitCode == kExitCheckFailed ? kExitIoError : exitCode;
}

} // namespace schedc
