// Unit tests of the cuda backend's cross-stream ordering (cost/StreamOrder.h), on a model
// of streams instead of a GPU: each stream is a sequence of operations with a vector clock,
// an event is a snapshot of its stream's clock, and waiting on one merges it — so "A
// happens before B" is exactly what CUDA guarantees for the same records and waits. The
// tests drive StreamOrder the way CudaRank and PointToPoint do (compute operations,
// collectives, sends, receives, frees) and check that every read happens after the buffer
// was made, every free after every use, that collectives and sends overlap the compute
// that does not need them, and that neither the compute nor the collectives stream ever
// waits for a send. A test of the checker itself shows it catches a missing wait.
#include "cost/StreamOrder.h"

#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <vector>

namespace schedc::cost {
namespace {

constexpr int kStreams = 5;
constexpr int kCompute = 0, kCollectives = 1, kSendA = 2, kSendB = 3, kReceive = 4;

struct Op {
  int stream = -1;
  std::vector<int> clock; // after the operation
};

// Streams as vector clocks.
struct ModelDevice {
  using Stream = int;
  using Event = std::shared_ptr<const std::vector<int>>;
  std::vector<std::vector<int>> clocks = std::vector<std::vector<int>>(kStreams, std::vector<int>(kStreams, 0));
  int waitsWithoutEvent = 0;

  Event record(Stream s) { return std::make_shared<const std::vector<int>>(clocks[s]); }
  void wait(Stream s, const Event &e) {
    if (!e) {
      ++waitsWithoutEvent;
      return;
    }
    for (int i = 0; i < kStreams; ++i)
      clocks[s][i] = std::max(clocks[s][i], (*e)[i]);
  }
  Op op(Stream s) {
    ++clocks[s][s];
    return Op{s, clocks[s]};
  }
};

bool happensBefore(const Op &a, const Op &b) {
  return b.clock[a.stream] >= a.clock[a.stream];
}

using Order = StreamOrder<ModelDevice>;

struct Buffer {
  Order::Uses uses;
  Op made;
  std::vector<Op> reads;
};

// Drives an Order as the cuda backend does and records what happened, for the checks.
class Harness {
public:
  Harness() : order(device, kCompute, kCollectives) {}

  // Work on `s` reading `operands`, making one new buffer (a kernel, a collective, a
  // receive). `skipEnter` leaves out the ordering, to test the checker.
  Buffer *work(int s, const std::vector<Buffer *> &operands, bool skipEnter = false) {
    if (!skipEnter)
      order.enter(s, usesOf(operands));
    auto made = std::make_unique<Buffer>();
    Order::made(made->uses, s);
    Op op = device.op(s);
    for (Buffer *b : operands)
      read(*b, op);
    made->made = op;
    std::vector<Order::Uses *> touched = usesOf(operands);
    touched.push_back(&made->uses);
    order.leave(s, touched);
    buffers.push_back(std::move(made));
    return buffers.back().get();
  }
  // A send on channel `s`: reads, makes nothing.
  Op send(int s, const std::vector<Buffer *> &operands) {
    order.enter(s, usesOf(operands));
    Op op = device.op(s);
    for (Buffer *b : operands)
      read(*b, op);
    order.leave(s, usesOf(operands));
    sends.push_back(op);
    return op;
  }
  // The last holder drops `b`: the free goes where the order says.
  void free(Buffer *b) {
    int s = order.release(b->uses);
    Op op = device.op(s);
    freeStreams.push_back(s);
    if (!happensBefore(b->made, op))
      ++problems;
    for (const Op &r : b->reads)
      if (!happensBefore(r, op))
        ++problems;
    for (auto it = buffers.begin(); it != buffers.end(); ++it)
      if (it->get() == b) {
        buffers.erase(it);
        break;
      }
  }

  ModelDevice device;
  Order order;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<Op> sends;
  std::vector<int> freeStreams;
  int problems = 0; // reads before the buffer was made, frees before a use

private:
  static std::vector<Order::Uses *> usesOf(const std::vector<Buffer *> &operands) {
    std::vector<Order::Uses *> uses;
    for (Buffer *b : operands)
      uses.push_back(&b->uses);
    return uses;
  }
  void read(Buffer &b, const Op &op) {
    if (!happensBefore(b.made, op))
      ++problems;
    b.reads.push_back(op);
  }
};

TEST(StreamOrder, CheckerCatchesAReadWithoutItsWait) {
  Harness h;
  Buffer *g = h.work(kCollectives, {});
  h.work(kCompute, {g}, /*skipEnter=*/true);
  EXPECT_EQ(h.problems, 1);
}

TEST(StreamOrder, CollectiveOverlapsComputeThatDoesNotNeedIt) {
  Harness h;
  Buffer *x = h.work(kCompute, {});
  Buffer *g = h.work(kCompute, {x});                      // a gradient
  Buffer *reduced = h.work(kCollectives, {g});            // its all-reduce
  Buffer *next = h.work(kCompute, {x});                   // the next layer's backward
  EXPECT_TRUE(happensBefore(g->made, reduced->made));     // waited for what it reduces
  EXPECT_FALSE(happensBefore(reduced->made, next->made)); // compute did not wait for it
  Buffer *updated = h.work(kCompute, {reduced});          // the update uses the result
  EXPECT_TRUE(happensBefore(reduced->made, updated->made));
  h.free(g); // last used by the collective: freed there
  EXPECT_EQ(h.freeStreams.back(), kCollectives);
  EXPECT_EQ(h.problems, 0);
}

TEST(StreamOrder, SendNeitherBlocksComputeNorIsOvertakenByTheFree) {
  Harness h;
  Buffer *y = h.work(kCompute, {});
  Op sent = h.send(kSendA, {y});
  Buffer *later = h.work(kCompute, {y}); // compute reads what it sent
  EXPECT_TRUE(happensBefore(y->made, sent));
  EXPECT_FALSE(happensBefore(sent, later->made));
  h.free(y); // on the channel, after the compute read
  EXPECT_EQ(h.freeStreams.back(), kSendA);
  EXPECT_EQ(h.problems, 0);
  EXPECT_EQ(h.device.clocks[kCompute][kSendA], 0);
}

TEST(StreamOrder, ComputeWaitsForAReceiveOnlyWhereItUsesIt) {
  Harness h;
  Buffer *x = h.work(kCompute, {});
  Buffer *received = h.work(kReceive, {});
  Buffer *unrelated = h.work(kCompute, {x});
  EXPECT_FALSE(happensBefore(received->made, unrelated->made));
  Buffer *user = h.work(kCompute, {received});
  EXPECT_TRUE(happensBefore(received->made, user->made));
  h.free(received);
  EXPECT_EQ(h.freeStreams.back(), kReceive);
  EXPECT_EQ(h.problems, 0);
}

TEST(StreamOrder, RandomProgramsKeepEveryRuleAndNeverMakeComputeWaitForASend) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::mt19937 random(seed);
    Harness h;
    auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
    for (int step = 0; step < 300; ++step) {
      std::vector<Buffer *> operands;
      if (!h.buffers.empty())
        for (size_t k = pick(4); k > 0; --k)
          operands.push_back(h.buffers[pick(h.buffers.size())].get());
      switch (pick(6)) {
      case 0:
      case 1: h.work(kCompute, operands); break;
      case 2: h.work(kCollectives, operands); break;
      case 3:
        if (!operands.empty())
          h.send(pick(2) ? kSendA : kSendB, operands);
        break;
      case 4: h.work(kReceive, {}); break;
      case 5:
        if (!h.buffers.empty())
          h.free(h.buffers[pick(h.buffers.size())].get());
        break;
      }
    }
    while (!h.buffers.empty())
      h.free(h.buffers.front().get());
    ASSERT_EQ(h.problems, 0) << "seed " << seed;
    ASSERT_EQ(h.device.waitsWithoutEvent, 0) << "seed " << seed;
    for (int waiter : {kCompute, kCollectives})
      for (int channel : {kSendA, kSendB})
        ASSERT_EQ(h.device.clocks[waiter][channel], 0)
            << "seed " << seed << ": stream " << waiter << " waited for a send";
  }
}

} // namespace
} // namespace schedc::cost
