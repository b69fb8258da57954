// Channels — the messages of a run on their way from a send to the receive that takes
// them. Under tagged point-to-point (sim/PointToPoint.h) they wait in the receiver's inbox
// per (source, tag); under ordered, each pair of ranks has one PairChannel, the stream
// PyTorch's runtime puts a pair's sends and receives on: each rank's operations on it
// complete in the order it issued them, and the head operations of the two sides complete
// together when one is a send and the other a receive (the k-th send of one side is then
// the k-th receive of the other). Heads of one kind (two sends, two receives) wait for
// each other forever. The operations a rank issued in one `group` (batch_isend_irecv) are
// its head together: a send and a receive among the two sides' head groups complete, each
// the earliest pending of its kind on its side; a receive posted in a group is taken once
// every operation of the group has completed (PyTorch waits on a batch's one work).
// Invariant: no send of one side's head group and receive of the other's are both pending.
#pragma once

#include "diagnostics/SourceManager.h"
#include "numbers/Number.h"
#include "sim/Value.h"

#include <array>
#include <cstdint>
#include <deque>
#include <optional>

namespace schedc::sim {

// A message sent: its value, where it was sent, the id its send's and its receive's events
// share, when the send's event ends, and its tag.
struct InFlight {
  ValuePtr value;
  SourceRange sentAt;
  int32_t flow = -1;
  Number sentEnd;
  int64_t tag = 0;
};

// A receive a rank posted under ordered point-to-point (`post_recv`, or its `recv` where it
// posted none), until that `recv` takes its message.
struct PostedRecv {
  int64_t from = 0, tag = 0;
  SourceRange at;
  std::optional<InFlight> message; // once its channel matched it with a send
  uint32_t group = 0;              // its rank's `group` (0: none): taken once the whole group completed
};

// An operation a rank issued on a pair's channel.
struct PairOp {
  bool send = false;
  uint32_t group = 0; // its rank's `group` (0: none, an operation alone)
  SourceRange at;
  int64_t tag = 0;
  InFlight message;           // a send's
  PostedRecv *post = nullptr; // a receive's, in its rank's list of posted receives
};

struct PairChannel {
  std::array<std::deque<PairOp>, 2> pending; // [0]: the lower rank's, [1]: the higher's
};

} // namespace schedc::sim
