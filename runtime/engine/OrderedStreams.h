// OrderedStreams — ordered point-to-point's streams (--p2p=ordered: PyTorch's pipelining over
// NCCL, docs/pytorch.md#point-to-point): each rank's sends and posted receives on one stream,
// in the order it issued them. A send and a receive complete together when each is the
// first of its kind with the other rank in its rank's head batch (its first operation with
// the rest of its `group`: batch_isend_irecv); completing a pair can bring a rank's next
// batch to the head, and so on. Also, in words: what holds up a receive, and what is left
// on the streams at the end of the step. The matching is here; what completing a pair does to
// the ranks (the message handed over, the receiver woken) is the World's.
#pragma once

#include "diagnostics/Diagnostics.h"
#include "sim/Channels.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace schedc::sim {

class OrderedStreams {
public:
  // A send and the receive it matches complete (`op` rank `rank`'s, `other` its peer's).
  using Complete = std::function<void(int64_t rank, StreamOp &op, StreamOp &other)>;
  // Rank `rank`'s head operation `head` never completes: why, with notes.
  using Report =
      std::function<void(int64_t rank, const StreamOp &head, std::string why, std::vector<Diagnostic> notes)>;

  explicit OrderedStreams(int64_t ranks) : ranks_(ranks) {}

  // Puts `op` of rank `from` on its stream, and completes, through `complete`, every pair
  // that can.
  void issue(int64_t from, StreamOp op, const Complete &complete);
  // What holds up rank `rank`'s receive `post` from `peer`, on its stream and its peer's, as
  // notes for a deadlock's report.
  std::vector<Diagnostic> notes(int64_t rank, const PostedRecv *post, int64_t peer) const;
  // The end of the step: each rank's head operation that never completes (a rank would wait
  // for it forever), reported once for two heads that wait for each other; ranks `stopped`
  // at an error are left out.
  void pending(const std::function<bool(int64_t)> &stopped, const Report &report) const;

private:
  int64_t ranks_;
  std::vector<Stream> streams_; // by rank, made at the first use (a tagged run makes none)
};

// "send" or "receive".
std::string streamOpName(const StreamOp &op);

} // namespace schedc::sim
