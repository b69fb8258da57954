// OrderedStreams implementation: a rank's head batch is its first operation with the rest of
// its `group`; within it, only the first operation of each kind with each peer may match.
#include "engine/OrderedStreams.h"

#include <algorithm>

namespace schedc::sim {

namespace {

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

std::string streamOpName(const StreamOp &op) {
  return op.send ? "send" : "receive";
}

void OrderedStreams::issue(int64_t from, StreamOp op, const Complete &complete) {
  if (streams_.empty())
    streams_.resize(static_cast<size_t>(ranks_));
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

std::vector<Diagnostic> OrderedStreams::notes(int64_t rank, const PostedRecv *post, int64_t peer) const {
  std::vector<Diagnostic> notes;
  if (!post || streams_.empty())
    return notes;
  const Stream &mine = streams_[static_cast<size_t>(rank)];
  std::string me = "rank " + std::to_string(rank);
  if (post->message) { // its group is what it waits for: the first operation of it still open
    auto open = std::find_if(mine.begin(), mine.end(), [&](const StreamOp &op) { return op.group == post->group; });
    notes.push_back(open != mine.end()
                        ? note(open->at, "this " + streamOpName(*open) + (open->send ? " to rank " : " from rank ") +
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
                                              streamOpName(mine.front()) +
                                              (mine.front().send ? " to rank " : " from rank ") +
                                              std::to_string(mine.front().peer) + ", which has not completed"));
  const Stream &theirs = streams_[static_cast<size_t>(peer)];
  if (theirs.empty())
    return notes;
  std::string other = "rank " + std::to_string(peer);
  const StreamOp &head = theirs.front();
  if (head.peer == rank && !mine.empty() && mine.front().peer == peer && head.send == mine.front().send)
    notes.push_back(note(head.at, other + "'s next operation with " + me + " is a " + streamOpName(head) +
                                      " too: each waits for the other to " + (head.send ? "receive" : "send") +
                                      " first (PyTorch runs a rank's batched sends and receives in the order it "
                                      "issued them, on one stream)"));
  else if (atHead)
    notes.push_back(note(head.at, other + "'s stream is at this " + streamOpName(head) +
                                      (head.send ? " to rank " : " from rank ") + std::to_string(head.peer) +
                                      ", which has not completed: its send to " + me + " comes after it"));
  return notes;
}

void OrderedStreams::pending(const std::function<bool(int64_t)> &stopped, const Report &report) const {
  for (size_t rank = 0; rank < streams_.size(); ++rank) {
    const Stream &mine = streams_[rank];
    if (mine.empty() || stopped(static_cast<int64_t>(rank)))
      continue;
    const StreamOp &head = mine.front();
    auto peer = static_cast<size_t>(head.peer);
    const Stream &theirs = streams_[peer];
    if (stopped(static_cast<int64_t>(peer)))
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
      why = other + "'s next operation with " + me + " is a " + streamOpName(theirs.front()) +
            " too, and each waits for the other to " + (head.send ? "receive" : "send") +
            " first (PyTorch runs a rank's batched sends and receives in the order it issued them, on one stream)";
      notes.push_back(note(theirs.front().at, other + "'s " + streamOpName(theirs.front()) + " is here"));
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
    report(static_cast<int64_t>(rank), head, std::move(why), std::move(notes));
  }
}

} // namespace schedc::sim
