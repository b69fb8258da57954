// Unit tests of the byte model (sim/Bytes) and of the bf16 rounding the cpu backend
// emulates mixed precision with (cpu/Kernels): widths per kind and precision, shard and
// micro-batch element counts, the options, and round-to-nearest-even at the edges.
#include "sim/Bytes.h"
#include "cpu/Kernels.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace schedc::sim {
namespace {

Value valueOf(Kind kind, IntSet shards, int64_t total, IntSet batches) {
  Value v;
  v.kind = kind;
  v.shards = setOf(std::move(shards));
  v.total = total;
  v.batches = setOf(std::move(batches));
  return v;
}

TEST(Bytes, WidthsFollowTheMixedPrecisionAccounting) {
  ByteModel m;
  EXPECT_EQ(m.elementBytes(Kind::Weight), 4);
  EXPECT_EQ(m.elementBytes(Kind::WeightGrad), 4);
  EXPECT_EQ(m.elementBytes(Kind::Activation), 4);
  EXPECT_EQ(m.elementBytes(Kind::OptState), 4); // SGD: one moment
  m.precision = Precision::Bf16;
  m.optimizerStates = 2;
  EXPECT_EQ(m.elementBytes(Kind::Weight), 2); // what the GEMMs read
  EXPECT_EQ(m.elementBytes(Kind::WeightGrad), 2);
  EXPECT_EQ(m.elementBytes(Kind::Activation), 2);
  EXPECT_EQ(m.elementBytes(Kind::ActGrad), 2);
  EXPECT_EQ(m.elementBytes(Kind::OptState), 12); // ZeRO's K = 12: the fp32 master + Adam's two moments
  // 2 + 2 + K = 16 bytes per parameter, as ZeRO counts mixed-precision Adam.
  EXPECT_EQ(m.elementBytes(Kind::Weight) + m.elementBytes(Kind::WeightGrad) + m.elementBytes(Kind::OptState), 16);
  m.fp32Gradients = true; // fp32 accumulation
  EXPECT_EQ(m.elementBytes(Kind::WeightGrad), 4);
  EXPECT_EQ(m.elementBytes(Kind::Weight), 2);
  m.precision = Precision::Fp32; // an fp32 run's gradients are fp32 anyway; no master
  EXPECT_EQ(m.elementBytes(Kind::WeightGrad), 4);
  EXPECT_EQ(m.elementBytes(Kind::OptState), 8);
}

TEST(Bytes, CountsShardsAndMicroBatches) {
  ByteModel m; // H = 512, T = 256
  EXPECT_EQ(m.bytes(valueOf(Kind::Weight, IntSet::single(1), 4, IntSet())), 512.0 * 512 / 4 * 4);
  EXPECT_EQ(m.bytes(valueOf(Kind::WeightGrad, IntSet::range(0, 2), 4, IntSet::range(0, 8))), 512.0 * 512 / 2 * 4);
  EXPECT_EQ(m.bytes(valueOf(Kind::Activation, IntSet::single(0), 1, IntSet::range(0, 3))), 3.0 * 256 * 512 * 4);
  // At the defaults a puzzle unit is one element: 4 bytes.
  Value w = valueOf(Kind::Weight, IntSet::single(0), 1, IntSet());
  EXPECT_EQ(m.bytes(w), 4 * makeValue(w)->memory().asDouble());
  // The largest sizes stay exact (2^16 x 2^16 x 2 bytes).
  m.hidden = 65536;
  m.precision = Precision::Bf16;
  EXPECT_EQ(m.bytes(w), 65536.0 * 65536 * 2);
}

TEST(Bytes, Options) {
  ByteModel m;
  std::string error;
  EXPECT_FALSE(m.given);
  EXPECT_EQ(byteModelFlag("--hidden=64"), "--hidden");
  EXPECT_EQ(byteModelFlag("--hiddenx"), "");
  EXPECT_TRUE(parseByteModelOption("--precision", "bf16", m, error));
  EXPECT_TRUE(parseByteModelOption("--optimizer", "adam", m, error));
  EXPECT_TRUE(parseByteModelOption("--tokens", "7", m, error));
  EXPECT_EQ(error, "");
  EXPECT_TRUE(m.given);
  EXPECT_EQ(m.describe(), "hidden 512, tokens 7, bf16, 2 optimizer states");
  EXPECT_TRUE(parseByteModelOption("--grad-precision", "fp32", m, error));
  EXPECT_EQ(m.describe(), "hidden 512, tokens 7, bf16 with fp32 gradients, 2 optimizer states");
  EXPECT_EQ(byteModelFlag("--grad-precision=fp32"), "--grad-precision");
  EXPECT_TRUE(parseByteModelOption("--hidden", "65537", m, error));
  EXPECT_EQ(error, "--hidden needs a size from 1 to 65536");
  EXPECT_FALSE(parseByteModelOption("--seed", "1", m, error));
  EXPECT_EQ(bytesText(3 << 20), "3145728 bytes (3.0 MiB)");
}

TEST(Bf16, RoundsToNearestEven) {
  using cpu::roundToBf16;
  EXPECT_EQ(roundToBf16(1.0f), 1.0f);
  EXPECT_EQ(roundToBf16(-0.0f), -0.0f);
  // bf16 keeps 7 mantissa bits: the spacing above 1 is 2^-7.
  EXPECT_EQ(roundToBf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);                            // a tie: to the even 1
  EXPECT_EQ(roundToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6)); // a tie: up to even
  EXPECT_EQ(roundToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(roundToBf16(-1.0f - std::ldexp(1.0f, -8) - std::ldexp(1.0f, -20)), -1.0f - std::ldexp(1.0f, -7));
  EXPECT_TRUE(std::isinf(roundToBf16(std::numeric_limits<float>::max()))); // beyond bf16's largest
  EXPECT_TRUE(std::isinf(roundToBf16(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(roundToBf16(std::numeric_limits<float>::quiet_NaN())));
  float smallest = std::numeric_limits<float>::denorm_min(); // rounds to zero
  EXPECT_EQ(roundToBf16(smallest), 0.0f);
}

} // namespace
} // namespace schedc::sim
