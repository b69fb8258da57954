// Mailboxes — a run's tagged messages in flight (--p2p=tagged, schedc's own backends): each
// rank's inbox keeps, per (source, tag), the messages in the order they were sent, so a
// receive takes the oldest with its tag from that peer and a send never waits. In a parallel
// run each inbox is under the lock of its stripe. Also the run's message flows (a send and
// the receive of its message share one) and its routes (every (sender, receiver) pair a send
// was made for). Ordered point-to-point is engine/OrderedChannels.cpp's.
#pragma once

#include "sim/Channels.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace schedc::sim {

class Mailboxes {
public:
  // Messages by (source, tag), each queue in the order they were sent.
  using Inbox = std::map<std::pair<int64_t, int64_t>, std::deque<InFlight>>;
  using Routes = std::set<std::pair<int64_t, int64_t>>;

  explicit Mailboxes(int64_t ranks) : inbox_(static_cast<size_t>(ranks)) {}

  // In a parallel run, the lock of `to`'s inbox, taken; on one thread, none.
  std::unique_lock<std::mutex> lock(int64_t to, bool parallel) {
    return parallel ? std::unique_lock<std::mutex>(locks_[static_cast<size_t>(to) % kStripes])
                    : std::unique_lock<std::mutex>();
  }
  // The messages to `to` from `from` with `tag` (under lock(to)).
  std::deque<InFlight> &queue(int64_t to, int64_t from, int64_t tag) { return inbox_[to][{from, tag}]; }
  // What `to` has not received (at the end of the run).
  const Inbox &inbox(int64_t to) const { return inbox_[static_cast<size_t>(to)]; }
  // The flow of a new message.
  int32_t newFlow() { return flows_.fetch_add(1, std::memory_order_relaxed); }
  // The run's routes (a parallel run's lanes' are merged into them at its end).
  Routes &routes() { return routes_; }
  const Routes &routes() const { return routes_; }

private:
  static constexpr size_t kStripes = 64;
  std::vector<Inbox> inbox_;
  std::array<std::mutex, kStripes> locks_;
  std::atomic<int32_t> flows_{0};
  Routes routes_;
};

} // namespace schedc::sim
