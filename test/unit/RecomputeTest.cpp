// Unit tests of the bytes of recomputed activations (sim/Recompute.h): an input read by a
// second forward before any backward was a checkpoint from when it was stored, so its
// saved bytes come off every sample until that forward; one read by a backward kept what
// it counted; nothing changes when no input is read twice.
#include "sim/Recompute.h"

#include <gtest/gtest.h>
#include <vector>

namespace schedc::sim {
namespace {

// Samples 0..n-1, each `bytes`.
void sampleAll(RecomputedBytes &r, size_t n, double bytes) {
  for (size_t i = 0; i < n; ++i)
    r.sampled(i, bytes);
}

TEST(RecomputedBytes, ASecondForwardTakesTheSavedBytesOffSinceTheStore) {
  RecomputedBytes r;
  int input = 0;
  r.stored(&input, 1);           // held from event 1 on
  r.forwardReads(&input, 1, 30); // the first pass
  r.forwardReads(&input, 4, 30); // recomputed: events 1..3 held its tensor alone
  r.backwardReads(&input, 5);
  sampleAll(r, 7, 100);
  ASSERT_TRUE(r.anyRecomputed());
  EXPECT_EQ(r.settledSamples(), (std::vector<double>{100, 70, 70, 70, 100, 100, 100}));
}

TEST(RecomputedBytes, ABackwardBetweenTwoForwardsKeepsWhatWasCounted) {
  RecomputedBytes r;
  int input = 0;
  r.stored(&input, 0);
  r.forwardReads(&input, 0, 30);
  r.backwardReads(&input, 2);    // the first forward's tensors were needed
  r.forwardReads(&input, 3, 30); // a new forward, not a recomputation
  sampleAll(r, 5, 100);
  EXPECT_FALSE(r.anyRecomputed());
}

TEST(RecomputedBytes, ADroppedInputIsForgotten) {
  RecomputedBytes r;
  int input = 0;
  r.stored(&input, 0);
  r.forwardReads(&input, 0, 30);
  r.dropped(&input); // freed: a value stored later at the same address is another
  r.forwardReads(&input, 3, 30);
  EXPECT_FALSE(r.anyRecomputed());
}

} // namespace
} // namespace schedc::sim
