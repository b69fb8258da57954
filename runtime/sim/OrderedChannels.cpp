// Ordered point-to-point (sim/PointToPoint.h, sim/Channels.h): sends and posted receives go
// on their pair's channel in the order each rank issues them, and complete there in pairs;
// a `recv` waits until its posted receive has a message, and reports one that was sent for
// another receive (another tag), naming both places. A rank never waits at a send or a post
// (PyTorch's runtime issues them asynchronously and waits only where a computation needs a
// received tensor, and for its sends at the end of the step): what a channel cannot
// complete shows as a `recv` that never returns, or as operations left at the end.
#include "sim/World.h"

#include <algorithm>

namespace schedc::sim {

namespace {

std::string opName(const PairOp &op) {
  return op.send ? "send" : "receive";
}

} // namespace

namespace {

// The first operation of `kind` (send or not) in the side's head group (its first operation,
// with the rest of its `group`), or the side's end.
std::deque<PairOp>::iterator firstInHeadGroup(std::deque<PairOp> &side, bool send) {
  for (auto it = side.begin(); it != side.end(); ++it) {
    if (it != side.begin() && (it->group == 0 || it->group != side.front().group))
      break;
    if (it->send == send)
      return it;
  }
  return side.end();
}

} // namespace

void World::issue(int64_t from, int64_t to, PairOp op) {
  PairChannel &ch = channels_[channelKey(from, to)];
  ch.pending[from < to ? 0 : 1].push_back(std::move(op));
  for (bool matched = true; matched;) {
    matched = false;
    for (size_t sender : {0, 1}) { // a send of each side with the other's receive
      std::deque<PairOp> &sends = ch.pending[sender], &receives = ch.pending[1 - sender];
      auto send = firstInHeadGroup(sends, true), receive = firstInHeadGroup(receives, false);
      if (send == sends.end() || receive == receives.end())
        continue;
      Rank &receiver = *ranks_[sender == 0 ? std::max(from, to) : std::min(from, to)];
      Rank &senderRank = *ranks_[sender == 0 ? std::min(from, to) : std::max(from, to)];
      receive->post->message = std::move(send->message);
      senderRank.completedInGroup(send->group);
      receiver.completedInGroup(receive->group);
      if (receiver.awaitingPost_ == receive->post) {
        receiver.awaitingPost_ = nullptr;
        schedule(receiver);
      }
      sends.erase(send);
      receives.erase(receive);
      matched = true;
    }
  }
}

void Rank::group(SourceRange at, bool begin) {
  group_ = begin ? ++groups_ : 0;
}

void Rank::completedInGroup(uint32_t group) {
  auto open = groupOpen_.find(group);
  if (group == 0 || --open->second != 0)
    return;
  groupOpen_.erase(open);
  if (awaitingPost_ && awaitingPost_->group == group) { // its receive waited for the rest of the group
    awaitingPost_ = nullptr;
    world_.schedule(*this);
  }
}

void Rank::sendOrdered(SourceRange at, int64_t to, InFlight message) {
  int64_t tag = message.tag;
  if (group_)
    ++groupOpen_[group_];
  world_.issue(id_, to, PairOp{.send = true, .group = group_, .at = at, .tag = tag, .message = std::move(message)});
}

PostedRecv &Rank::postOrdered(SourceRange at, int64_t from, int64_t tag) {
  PostedRecv &posted =
      posted_.emplace_back(PostedRecv{.from = from, .tag = tag, .at = at, .message = {}, .group = group_});
  if (group_)
    ++groupOpen_[group_];
  world_.issue(id_, from, PairOp{.send = false, .group = group_, .at = at, .tag = tag, .message = {}, .post = &posted});
  return posted;
}

void Rank::postRecv(SourceRange at, int64_t from, int64_t tag) {
  if (cancelled() || refusedInPair(at, "post_recv") || badRoute(at, false, from, tag))
    return;
  if (world_.options_.p2p == PointToPoint::Ordered)
    postOrdered(at, from, tag);
}

ValuePtr Rank::recvOrdered(SourceRange at, int64_t from, int64_t tag) {
  if (cancelled())
    return poison(Kind::Activation);
  auto posted =
      std::find_if(posted_.begin(), posted_.end(), [&](const PostedRecv &p) { return p.from == from && p.tag == tag; });
  if (posted == posted_.end()) { // posted here, as it is taken
    postOrdered(at, from, tag);
    posted = std::prev(posted_.end());
  }
  PostedRecv &p = *posted;
  auto ready = [&] {
    if (p.message && !groupOpen_.count(p.group))
      return true;
    awaitingPost_ = &p;
    return false;
  };
  if (!waitUntil(ready, Wait{.at = at, .peer = from, .tag = tag, .post = &p})) {
    awaitingPost_ = nullptr;
    return poison(Kind::Activation);
  }
  InFlight m = std::move(*p.message);
  SourceRange postedAt = p.at;
  posted_.erase(posted);
  cost::Producers made =
      logEvent({.kind = EventKind::Pass}, nullptr, at, {}, cost::AlsoWaits::message(m.sentEnd), m.flow);
  if (world_.options_.recordTransfers)
    transfers_.push_back({figures_.events - 1, from, false, m.value->kind, m.value->layer, m.value->batches});
  if (m.tag != tag) {
    errorWith(postedAt, "p2p-order", [&] {
      std::string sender = "rank " + std::to_string(from);
      auto tagged = [&](int64_t t) { return t ? world_.withTag(t) : " with tag 0"; };
      return std::pair{"rank " + std::to_string(id_) + "'s receive here" + tagged(tag) + " would take the message " +
                           sender + " sent" + tagged(m.tag) +
                           ": under ordered point-to-point (PyTorch over NCCL) a rank takes a peer's messages in "
                           "the order the peer sent them, whatever it posted the receive for",
                       std::vector<Diagnostic>{note(m.sentAt, sender + " sends that message here")}};
    });
    Value wrong = *m.value;
    wrong.poisoned = true;
    return madeBy(makeValue(std::move(wrong)), made);
  }
  return madeBy(m.value, made);
}

std::vector<Diagnostic> World::channelNotes(const Rank &r) const {
  std::vector<Diagnostic> notes;
  const PostedRecv *post = r.wait_.post;
  int64_t peer = r.wait_.peer;
  if (post && post->message) { // its group is what it waits for: the first operation of it still open
    const PairOp *open = nullptr;
    for (const auto &[key, ch] : channels_) {
      int64_t low = key / model_.ranks, high = key % model_.ranks;
      if (low == r.id_ || high == r.id_)
        for (const PairOp &op : ch.pending[r.id_ == low ? 0 : 1])
          if (!open && op.group == post->group)
            open = &op;
    }
    notes.push_back(open
                        ? note(open->at, "this " + opName(*open) +
                                             " in the same `group` as that receive has not "
                                             "completed: PyTorch waits for a batch_isend_irecv's "
                                             "operations together")
                        : note(post->at, "this receive has its message, but its `group` has operations that have "
                                         "not completed: PyTorch waits for a batch_isend_irecv's operations together"));
  }
  auto found = channels_.find(channelKey(r.id_, peer));
  if (!post || found == channels_.end())
    return notes;
  const std::deque<PairOp> &mine = found->second.pending[r.id_ < peer ? 0 : 1];
  const std::deque<PairOp> &theirs = found->second.pending[r.id_ < peer ? 1 : 0];
  std::string me = "rank " + std::to_string(r.id_), other = "rank " + std::to_string(peer);
  bool sameGroup = !mine.empty() && post->group != 0 && mine.front().group == post->group;
  if (!mine.empty() && mine.front().post != post && !sameGroup)
    notes.push_back(note(mine.front().at, "on " + me + "'s stream with " + other + " that receive waits behind this " +
                                              opName(mine.front()) + ", which has not completed"));
  if (!mine.empty() && !theirs.empty() && mine.front().send == theirs.front().send)
    notes.push_back(note(theirs.front().at, other + "'s next operation with " + me + " is a " + opName(theirs.front()) +
                                                " too: each waits for the other to " +
                                                (theirs.front().send ? "receive" : "send") +
                                                " first (PyTorch runs a pair's sends and receives in the order "
                                                "each rank issued them, on one stream per pair)"));
  return notes;
}

void World::reportPendingChannels() {
  std::vector<int64_t> keys;
  for (const auto &[key, ch] : channels_)
    if (!ch.pending[0].empty() || !ch.pending[1].empty())
      keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (int64_t key : keys) {
    const PairChannel &ch = channels_.at(key);
    int64_t low = key / model_.ranks, high = key % model_.ranks;
    size_t side = ch.pending[0].empty() ? 1 : 0;
    int64_t rank = side ? high : low, peer = side ? low : high;
    if (ranks_[rank]->stopped_ || ranks_[peer]->stopped_)
      continue; // stopped at an error: what it left is its echo
    const PairOp &head = ch.pending[side].front();
    const std::deque<PairOp> &theirs = ch.pending[1 - side];
    std::string me = "rank " + std::to_string(rank), other = "rank " + std::to_string(peer);
    std::string why;
    std::vector<Diagnostic> notes;
    if (theirs.empty()) {
      why = other + (head.send ? " posts no receive for it" : " sends nothing more to " + me) +
            ", and PyTorch's runtime waits for every operation at the end of the step (a pair's "
            "messages are matched in the order they were sent)";
    } else {
      why = other + "'s next operation with " + me + " is a " + opName(theirs.front()) +
            " too, and each waits for the other to " + (head.send ? "receive" : "send") +
            " first (PyTorch runs a pair's sends and receives in the order each rank issued them, on one "
            "stream per pair)";
      notes.push_back(note(theirs.front().at, other + "'s " + opName(theirs.front()) + " is here"));
    }
    record(Severity::Error, head.at, "p2p-pending",
           me + "'s " + opName(head) + " here " + (head.send ? "to " : "from ") + other + withTag(head.tag) +
               " never completes: " + why,
           rank, std::move(notes));
  }
  for (const auto &r : ranks_)
    for (const PostedRecv &p : r->posted_)
      if (p.message && !r->stopped_)
        record(Severity::Warning, p.at, "unreceived",
               "the receive posted here from rank " + std::to_string(p.from) + withTag(p.tag) +
                   " is never taken by a `recv` (take it, or pass --no-warn=unreceived if it is meant)",
               r->id_);
}

} // namespace schedc::sim
