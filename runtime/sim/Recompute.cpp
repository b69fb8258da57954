// Recompute implementation: samples by event, corrections as intervals, applied with one
// running sum at the end.
#include "sim/Recompute.h"

#include <algorithm>

namespace schedc::sim {

void RecomputedBytes::sampled(size_t event, double bytes) {
  if (samples_.size() <= event)
    samples_.resize(event + 1, 0);
  samples_[event] = bytes;
}

void RecomputedBytes::stored(const void *input, size_t next) {
  inputs_[input] = Input{next, false};
}

bool RecomputedBytes::forwardReads(const void *input, size_t event, double saved) {
  auto it = inputs_.find(input);
  if (it == inputs_.end())
    return false;
  Input &in = it->second;
  const bool again = in.forwarded;
  if (again && saved > 0 && in.since < event) // the earlier forward kept nothing
    corrections_.push_back({in.since, event, saved});
  if (again)
    in.since = event; // from this forward on its tensors are kept
  in.forwarded = true;
  return again;
}

void RecomputedBytes::backwardReads(const void *input, size_t event) {
  auto it = inputs_.find(input);
  if (it != inputs_.end())
    it->second = Input{event + 1, false};
}

std::vector<double> RecomputedBytes::settledSamples() const {
  std::vector<double> change(samples_.size() + 1, 0);
  for (const Correction &c : corrections_) {
    change[c.from] -= c.bytes;
    change[std::min(c.to, samples_.size())] += c.bytes;
  }
  std::vector<double> settled(samples_.size());
  double off = 0;
  for (size_t i = 0; i < samples_.size(); ++i) {
    off += change[i];
    settled[i] = samples_[i] + off;
  }
  return settled;
}

} // namespace schedc::sim
