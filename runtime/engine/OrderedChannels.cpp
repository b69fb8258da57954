// Ordered point-to-point (sim/PointToPoint.h, sim/Channels.h): sends and posted receives go
// on their rank's stream in the order it issues them, and complete there in pairs, a batch
// (`group`) at a time; a `recv` waits until its posted receive has a message (and its group
// has completed), and reports one that was sent for another receive (another tag), naming
// both places. A rank never waits at a send or a post (PyTorch's runtime issues them
// asynchronously and waits only where a computation needs a received tensor, and for its
// sends at the end of the step): what the streams cannot complete shows as a `recv` that
// never returns, or as operations left at the end.
#include "engine/World.h"

#include <algorithm>

namespace schedc::sim {

namespace {

std::string opName(const StreamOp &op) {
  return op.send ? "send" : "receive";
}

// The end of the stream's head batch: its first operation, with the rest of its `group`.
Stream::const_iterator headEnd(const Stream &stream) {
  auto it = stream.begin();
  if (it == stream.end())
    return it;
  uint32_t group = it->group;
  for (++it; group != 0 && it != stream.end() && it->group == group; ++it) {
  }
  return it;
}

// The first operation with `peer` of kind `send` in the stream's head batch, or the end.
Stream::iterator firstInHead(Stream &stream, int64_t peer, bool send) {
  auto end = stream.begin() + (headEnd(stream) - stream.cbegin());
  auto it = std::find_if(stream.begin(), end, [&](const StreamOp &op) { return op.peer == peer && op.send == send; });
  return it == end ? stream.end() : it;
}

} // namespace

void World::issue(int64_t from, StreamOp op) {
  if (streams_.empty())
    streams_.resize(static_cast<size_t>(model_.ranks));
  streams_[static_cast<size_t>(from)].push_back(std::move(op));
  // A match can complete a rank's head batch and bring its next one to the head, which can
  // match on another rank's stream: ranks whose head batch changed are looked at again.
  std::vector<int64_t> changed{from};
  while (!changed.empty()) {
    int64_t r = changed.back();
    changed.pop_back();
    Stream &mine = streams_[static_cast<size_t>(r)];
    auto head = mine.begin() + (headEnd(mine) - mine.cbegin());
    for (auto it = mine.begin(); it != head; ++it) {
      // (only the first of each kind with each peer may match: the others come after it)
      Stream &theirs = streams_[static_cast<size_t>(it->peer)];
      auto other = firstInHead(mine, it->peer, it->send) == it ? firstInHead(theirs, r, !it->send) : theirs.end();
      if (other == theirs.end())
        continue;
      complete(r, *it, *other);
      changed.push_back(it->peer);
      changed.push_back(r); // (looked at again: its head batch may be a new one)
      theirs.erase(other);
      mine.erase(it);
      break;
    }
  }
}

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
  if (world_.options_.p2p == PointToPoint::Ordered) // (under tagged a group changes nothing)
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
  world_.issue(id_, std::move(op));
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

std::vector<Diagnostic> World::streamNotes(const Rank &r) const {
  std::vector<Diagnostic> notes;
  const PostedRecv *post = r.wait_.post;
  if (!post || streams_.empty())
    return notes;
  const Stream &mine = streams_[static_cast<size_t>(r.id_)];
  std::string me = "rank " + std::to_string(r.id_);
  if (post->message) { // its group is what it waits for: the first operation of it still open
    auto open = std::find_if(mine.begin(), mine.end(), [&](const StreamOp &op) { return op.group == post->group; });
    notes.push_back(open != mine.end()
                        ? note(open->at, "this " + opName(*open) + (open->send ? " to rank " : " from rank ") +
                                             std::to_string(open->peer) +
                                             " in the same `group` as that receive has not completed: PyTorch "
                                             "waits for a batch_isend_irecv's operations together")
                        : note(post->at, "this receive has its message, but its `group` has operations that have "
                                         "not completed: PyTorch waits for a batch_isend_irecv's operations together"));
    return notes;
  }
  // What is at the head of its stream, if not that receive, and what is at its peer's.
  auto mineEnd = mine.begin() + (headEnd(mine) - mine.cbegin());
  bool atHead = std::any_of(mine.begin(), mineEnd, [&](const StreamOp &op) { return op.post == post; });
  if (!mine.empty() && !atHead)
    notes.push_back(note(mine.front().at, "on " + me + "'s stream that receive waits behind this " +
                                              opName(mine.front()) + (mine.front().send ? " to rank " : " from rank ") +
                                              std::to_string(mine.front().peer) + ", which has not completed"));
  int64_t peer = r.wait_.peer;
  const Stream &theirs = streams_[static_cast<size_t>(peer)];
  if (theirs.empty())
    return notes;
  std::string other = "rank " + std::to_string(peer);
  const StreamOp &head = theirs.front();
  if (head.peer == r.id_ && !mine.empty() && mine.front().peer == peer && head.send == mine.front().send)
    notes.push_back(note(head.at, other + "'s next operation with " + me + " is a " + opName(head) +
                                      " too: each waits for the other to " + (head.send ? "receive" : "send") +
                                      " first (PyTorch runs a rank's batched sends and receives in the order it "
                                      "issued them, on one stream)"));
  else if (atHead)
    notes.push_back(note(head.at, other + "'s stream is at this " + opName(head) +
                                      (head.send ? " to rank " : " from rank ") + std::to_string(head.peer) +
                                      ", which has not completed: its send to " + me + " comes after it"));
  return notes;
}

void World::reportPendingStreams() {
  for (size_t rank = 0; rank < streams_.size(); ++rank) {
    const Stream &mine = streams_[rank];
    if (mine.empty() || ranks_[rank]->stopped_)
      continue;
    const StreamOp &head = mine.front();
    auto peer = static_cast<size_t>(head.peer);
    const Stream &theirs = streams_[peer];
    if (ranks_[peer]->stopped_)
      continue; // stopped at an error: what it left is its echo
    bool facing =
        !theirs.empty() && theirs.front().peer == static_cast<int64_t>(rank) && theirs.front().send == head.send;
    if (facing && peer < rank)
      continue; // the two heads that wait for each other are reported once, at the lower rank
    std::string me = "rank " + std::to_string(rank), other = "rank " + std::to_string(peer);
    std::string why;
    std::vector<Diagnostic> notes;
    bool counterpart = std::any_of(theirs.begin(), theirs.end(), [&](const StreamOp &op) {
      return op.peer == static_cast<int64_t>(rank) && op.send != head.send;
    });
    if (facing) {
      why = other + "'s next operation with " + me + " is a " + opName(theirs.front()) +
            " too, and each waits for the other to " + (head.send ? "receive" : "send") +
            " first (PyTorch runs a rank's batched sends and receives in the order it issued them, on one stream)";
      notes.push_back(note(theirs.front().at, other + "'s " + opName(theirs.front()) + " is here"));
    } else if (!counterpart) {
      why = other + (head.send ? " posts no receive for it" : " sends nothing more to " + me) +
            ", and PyTorch's runtime waits for every operation at the end of the step (a pair's "
            "messages are matched in the order they were sent)";
    } else {
      why = other + "'s stream never reaches its " + (head.send ? "receive" : "send") +
            ": it waits at this operation, which has not completed (PyTorch runs a rank's batched sends and "
            "receives in the order it issued them, on one stream)";
      notes.push_back(note(theirs.front().at, other + "'s stream waits here"));
    }
    record(Severity::Error, head.at, "p2p-pending",
           me + "'s " + opName(head) + " here " + (head.send ? "to " : "from ") + other + withTag(head.tag) +
               " never completes: " + why,
           static_cast<int64_t>(rank), std::move(notes));
  }
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
