// Recompute — the bytes of recomputed activations, told apart after the fact. Under a
// transformer byte model an activation that is the input of layer l stands for all that
// layer l keeps for its backward (Korthikanti et al. 2022). A schedule that recomputes
// (checkpointing: stdlib recompute, gpipe's `segment`) runs forward(l) on such an input once
// in its first pass and again before backward(l): the first pass kept nothing of layer l
// (PyTorch runs it without autograd's saved tensors), only the input itself, one sequence
// x micro_batch x hidden tensor (Korthikanti et al.'s full recomputation, 2sbh bytes a
// layer at 16 bits). The rank cannot know this when it logs the first pass, so it keeps the
// bytes it sampled at each event and, when a forward reads the same input a second time
// before any backward has, takes the difference off every sample since the input was stored
// (or since its last forward's recomputation); the peak is taken again at the end of the run.
// Schedules that never read an input twice with forward keep their figures exactly.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace schedc::sim {

class RecomputedBytes {
public:
  // The rank logs event `event` holding `bytes` (events come in order, from 0).
  void sampled(size_t event, double bytes);
  // An activation `input` was stored before event `next`.
  void stored(const void *input, size_t next);
  // Forward (event `event`) reads `input`, which holds `saved` bytes more than its tensor
  // alone while its layer's saved tensors are counted in it. Returns whether this forward
  // is a recomputation (a forward read the input already, and no backward has since).
  bool forwardReads(const void *input, size_t event, double saved);
  // A backward, or either half, (event `event`) reads `input`: what was kept was needed.
  void backwardReads(const void *input, size_t event);
  // Whether a forward read `input` since it was stored (or since a backward last read it).
  bool forwarded(const void *input) const {
    auto it = inputs_.find(input);
    return it != inputs_.end() && it->second.forwarded;
  }
  // `input` is freed or replaced: nothing more is learnt of it.
  void dropped(const void *input) { inputs_.erase(input); }
  // Whether any input was found recomputed (else the samples stand as they are).
  bool anyRecomputed() const { return !corrections_.empty(); }
  // Every event's sample with the differences taken off.
  std::vector<double> settledSamples() const;

private:
  struct Input {
    size_t since = 0;       // the first event whose sample counts it whole and may be too much
    bool forwarded = false; // a forward read it since `since`
  };
  struct Correction {
    size_t from, to; // events [from, to)
    double bytes;
  };
  std::vector<double> samples_;
  std::unordered_map<const void *, Input> inputs_;
  std::vector<Correction> corrections_;
};

} // namespace schedc::sim
