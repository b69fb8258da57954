// Channels — the messages of a run on their way from a send to the receive that takes
// them. Under tagged point-to-point (sim/PointToPoint.h) they wait in the receiver's inbox
// per (source, tag). Under ordered, each rank has one stream, the one PyTorch's pipelining
// runs its point-to-point on: every action is a batch_isend_irecv (_batch_p2p), for which
// ProcessGroupNCCL takes the process group's whole communicator (pointToPoint:
// getKeyFromDevices) and its one stream. A rank's operations complete there in the order it
// issued them, a batch (a `group`, or an operation alone) at a time: a send and a receive
// complete together when each is in its rank's head batch and each is the earliest pending
// of its kind with the other rank (the k-th send of A to B is B's k-th receive from A). A
// receive posted in a group is taken once every operation of the group has completed
// (PyTorch waits on a batch's one work). Invariant: no send and matching receive are both
// in their ranks' head batches.
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
  std::optional<InFlight> message; // once the streams matched it with a send
  uint32_t group = 0;              // its rank's `group` (0: none): taken once the whole group completed
};

// An operation a rank issued on its stream.
struct StreamOp {
  bool send = false;
  int64_t peer = 0;   // the rank it sends to or receives from
  uint32_t group = 0; // its rank's `group` (0: none, an operation alone)
  SourceRange at;
  int64_t tag = 0;
  InFlight message;           // a send's
  PostedRecv *post = nullptr; // a receive's, in its rank's list of posted receives
};

// A rank's stream: what it issued and has not completed, in order.
using Stream = std::deque<StreamOp>;

} // namespace schedc::sim
