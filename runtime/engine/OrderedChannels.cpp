// Ordered point-to-point (sim/PointToPoint.h, sim/Channels.h): sends and posted receives go
// on their rank's stream in the order it issues them, and complete there in pairs, a batch
// (`group`) at a time; a `recv` waits until its posted receive has a message (and its group
// has completed), and reports one that was sent for another receive (another tag), naming
// both places. A rank never waits at a send or a post (PyTorch's runtime issues them
// asynchronously and waits only where a computation needs a received tensor, and for its
// sends at the end of the step): what the streams cannot complete shows as a `recv` that
// never returns, or as operations left at the end. The streams and their matching are
// engine/OrderedStreams.h's; here, what the ranks do with them.
#include "engine/World.h"

#include <algorithm>

namespace schedc::sim {

void World::complete(int64_t rank, StreamOp &op, StreamOp &other) {
  StreamOp &send = op.send ? op : other, &receive = op.send ? other : op;
  Rank &sender = *ranks_[static_cast<size_t>(op.send ? rank : op.peer)];
  Rank &receiver = *ranks_[static_cast<size_t>(op.send ? op.peer : rank)];
  receive.post->message = std::move(send.message);
  sender.completedInGroup(send.group);
  receiver.completedInGroup(receive.group);
  if (receiver.ordered().awaitingPost == receive.post) {
    receiver.ordered().awaitingPost = nullptr;
    schedule(receiver);
  }
}

void Rank::group(SourceRange at, bool begin) {
  closeCall(); // (at its end; at its beginning there is none)
  inGroup_ = begin;
  if (world_.options_.p2p == PointToPoint::Ordered) // (under tagged a group changes nothing to messages)
    ordered().group = begin ? ++ordered().groups : 0;
}

void Rank::completedInGroup(uint32_t group) {
  auto open = ordered().groupOpen.find(group);
  if (group == 0 || --open->second != 0)
    return;
  ordered().groupOpen.erase(open);
  if (ordered().awaitingPost &&
      ordered().awaitingPost->group == group) { // its receive waited for the rest of the group
    ordered().awaitingPost = nullptr;
    world_.schedule(*this);
  }
}

void Rank::issueOrdered(StreamOp op) {
  op.group = ordered().group;
  if (op.group)
    ++ordered().groupOpen[op.group];
  world_.ordered_.issue(id_, std::move(op),
                        [&](int64_t rank, StreamOp &op, StreamOp &other) { world_.complete(rank, op, other); });
}

void Rank::sendOrdered(SourceRange at, int64_t to, InFlight message) {
  int64_t tag = message.tag;
  issueOrdered(StreamOp{.send = true, .peer = to, .at = at, .tag = tag, .message = std::move(message)});
}

PostedRecv &Rank::postOrdered(SourceRange at, int64_t from, int64_t tag) {
  PostedRecv &posted = ordered().posted.emplace_back(
      PostedRecv{.from = from, .tag = tag, .at = at, .message = {}, .group = ordered().group});
  issueOrdered(StreamOp{.send = false, .peer = from, .at = at, .tag = tag, .message = {}, .post = &posted});
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
  auto posted = std::find_if(ordered().posted.begin(), ordered().posted.end(),
                             [&](const PostedRecv &p) { return p.from == from && p.tag == tag; });
  if (posted == ordered().posted.end()) { // posted here, as it is taken
    postOrdered(at, from, tag);
    posted = std::prev(ordered().posted.end());
  }
  PostedRecv &p = *posted;
  auto ready = [&] {
    if (p.message && !ordered().groupOpen.count(p.group))
      return true;
    ordered().awaitingPost = &p;
    return false;
  };
  if (!waitUntil(ready, Wait{.at = at, .peer = from, .tag = tag, .post = &p})) {
    ordered().awaitingPost = nullptr;
    return poison(Kind::Activation);
  }
  InFlight m = std::move(*p.message);
  SourceRange postedAt = p.at;
  ordered().posted.erase(posted);
  cost::Producers made =
      logEvent({.kind = EventKind::Pass}, nullptr, at, {}, cost::AlsoWaits::message(m.sentEnd), m.flow);
  if (world_.options_.recordTransfers)
    records_.transfers.push_back({figures_.events - 1, from, false, m.value->kind, m.value->layer, m.value->batches});
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

void World::reportPendingStreams() {
  ordered_.pending([&](int64_t rank) { return ranks_[static_cast<size_t>(rank)]->stopped_; },
                   [&](int64_t rank, const StreamOp &head, std::string why, std::vector<Diagnostic> notes) {
                     std::string me = "rank " + std::to_string(rank), other = "rank " + std::to_string(head.peer);
                     record(Severity::Error, head.at, "p2p-pending",
                            me + "'s " + streamOpName(head) + " here " + (head.send ? "to " : "from ") + other +
                                withTag(head.tag) + " never completes: " + why,
                            rank, std::move(notes));
                   });
  for (const auto &r : ranks_) {
    if (!r->ordered_ || r->stopped_)
      continue;
    for (const PostedRecv &p : r->ordered_->posted)
      if (p.message)
        record(Severity::Warning, p.at, "unreceived",
               "the receive posted here from rank " + std::to_string(p.from) + withTag(p.tag) +
                   " is never taken by a `recv` (take it, or pass --no-warn=unreceived if it is meant)",
               r->id_);
  }
}

} // namespace schedc::sim
