// Unit tests of cpu/Kernels.h's stopBlasThreads: after it the process runs no BLAS worker
// threads (a compiled schedule on the sim backend calls it, so OpenBLAS's idle workers do
// not spin beside the simulator), and a layer's GEMMs still give the product afterwards
// (checked against a sum by hand).
#include "cpu/Kernels.h"

#include <cmath>
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

// y = tanh(x W1) W2 summed by hand, in the layout forward() reads (each unit's W1 column,
// then its W2 row).
std::vector<float> naiveForward(const std::vector<float> &x, int64_t rows, const std::vector<float> &w, int64_t units,
                                int64_t h) {
  std::vector<float> y(static_cast<size_t>(rows * h), 0.0f);
  auto unit = static_cast<size_t>(unitElements(h));
  for (int64_t r = 0; r < rows; ++r)
    for (size_t u = 0; u < static_cast<size_t>(units); ++u) {
      double z = 0;
      for (size_t i = 0; i < static_cast<size_t>(h); ++i)
        z += x[static_cast<size_t>(r * h) + i] * w[u * unit + i];
      auto a = static_cast<float>(std::tanh(z));
      for (size_t j = 0; j < static_cast<size_t>(h); ++j)
        y[static_cast<size_t>(r * h) + j] += a * w[u * unit + static_cast<size_t>(h) + j];
    }
  return y;
}

TEST(Kernels, StopBlasThreadsLeavesOneThreadAndBlasStillWorks) {
  if (!std::filesystem::exists("/proc/self/task"))
    GTEST_SKIP() << "no /proc/self/task here";
  measureSgemm(64, 1); // whatever the BLAS, it has run once
  stopBlasThreads();
  EXPECT_EQ(threadsOfThisProcess(), 1u) << "BLAS worker threads are still running";
  // A later multiplication (two GEMMs) still gives the product.
  const int64_t rows = 96, units = 80, h = 64;
  std::vector<float> x(static_cast<size_t>(rows * h)), w(static_cast<size_t>(units * unitElements(h)));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 16.0f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 32.0f;
  std::vector<float> y = forward(x, rows, w.data(), units, h, false), expected = naiveForward(x, rows, w, units, h);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], expected[i], 1e-3f * (1.0f + std::fabs(expected[i]))) << "element " << i;
}

} // namespace
} // namespace schedc::cpu
