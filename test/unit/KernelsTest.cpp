// Unit tests of cpu/Kernels.h's stopBlasThreads: after it the process runs no BLAS worker
// threads (a compiled schedule on the sim backend calls it, so OpenBLAS's idle workers do
// not spin beside the simulator), and BLAS still multiplies correctly afterwards.
#include "cpu/Kernels.h"

#include <filesystem>
#include <gtest/gtest.h>

namespace schedc::cpu {
namespace {

size_t threadsOfThisProcess() {
  size_t n = 0;
  for ([[maybe_unused]] const auto &task : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

TEST(Kernels, StopBlasThreadsLeavesOneThreadAndBlasStillWorks) {
  if (!std::filesystem::exists("/proc/self/task"))
    GTEST_SKIP() << "no /proc/self/task here";
  measureSgemm(64, 1); // whatever the BLAS, it has run once
  stopBlasThreads();
  EXPECT_EQ(threadsOfThisProcess(), 1u) << "BLAS worker threads are still running";
  EXPECT_GT(measureSgemm(64, 1), 0.0); // and a later multiplication still runs
}

} // namespace
} // namespace schedc::cpu
