// PointToPoint — how sends and receives meet (--p2p; docs/checks.md#point-to-point):
//   - tagged: a receive takes the oldest message from its source with its tag, early
//     messages wait in the receiver's inbox, and a send never waits. schedc's own backends
//     (MPI with tags; NCCL channels the cuda backend keeps per message) run so.
//   - ordered: PyTorch's pipelining over NCCL. A stage's receive carries no tag
//     (torch/distributed/pipelining/stage.py, _get_recv_ops), so the k-th message a rank
//     sends a peer is the peer's k-th receive from it, whatever it was posted for; and a
//     rank's sends and receives, with every peer, run in the order it issued them on one
//     stream (every action is a batch_isend_irecv, which ProcessGroupNCCL runs on the
//     process group's whole communicator: sim/Channels.h), a send completing only when the
//     peer's receive runs.
// A PyTorch file is ordered unless told otherwise, a schedule tagged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace schedc::sim {

enum class PointToPoint : uint8_t { Tagged, Ordered };

inline const char *pointToPointName(PointToPoint p) {
  return p == PointToPoint::Ordered ? "ordered" : "tagged";
}

// --p2p's value; nullopt for one it does not name.
inline std::optional<PointToPoint> parsePointToPoint(const std::string &value) {
  if (value == "tagged")
    return PointToPoint::Tagged;
  if (value == "ordered")
    return PointToPoint::Ordered;
  return std::nullopt;
}

} // namespace schedc::sim
