// Unit tests of a run on several threads (engine/Parallel.cpp): its ranks run on their lanes'
// threads, its figures and diagnostics are those of the run on one thread, and what only a
// run on one thread reports in a fixed order — an error, a deadlock, a limit — makes it
// diverge (stop, every rank unwound) rather than report.
#include "engine/World.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <new>
#include <sched.h>
#include <set>
#include <thread>

namespace schedc::sim {
namespace {

constexpr int64_t kRanks = 64;

Options onThreads(unsigned threads) {
  Options o;
  o.threads = threads;
  o.keepEvents = false;
  return o;
}

// Every rank: a forward of its own micro-batch, the result to the next rank round a ring and
// one from the previous, an all-reduce over every rank and one over its block of eight.
void ringAndReductions(Rank &rank) {
  SourceRange at;
  int64_t next = (rank.id() + 1) % kRanks, previous = (rank.id() + kRanks - 1) % kRanks;
  auto [weight, opt] = rank.load(at, 0, 0, 1);
  ValuePtr in = rank.input(at, IntSet::single(rank.id()));
  ValuePtr out = rank.forward(at, 0, in, weight);
  rank.store(0, SlotIndex{0}, out, at);
  rank.send(at, next, out, 7);
  rank.store(0, SlotIndex{1}, rank.recv(at, previous, 7), at);
  ValuePtr gradient = rank.backward(at, 0, in, rank.loss(at, out), weight).first;
  ValuePtr all = rank.collective(at, CollectiveKind::AllReduce, gradient, rank.allRanks());
  int64_t block = rank.id() / 8 * 8;
  ValuePtr eight = rank.collective(at, CollectiveKind::AllReduce, gradient, rank.rangeGroup(block, block + 8));
  rank.store(1, SlotIndex{0}, all, at);
  rank.store(1, SlotIndex{1}, eight, at);
}

std::vector<ArrayInfo> arrays() {
  return {ArrayInfo{"act", Kind::Activation}, ArrayInfo{"grad", Kind::WeightGrad}};
}

TEST(Parallel, FiguresAndDiagnosticsOnSeveralThreadsAreOnesOnOne) {
  World one(Model{1, kRanks, kRanks}, arrays(), onThreads(1));
  one.run(ringAndReductions);
  World four(Model{1, kRanks, kRanks}, arrays(), onThreads(4));
  four.run(ringAndReductions);
  ASSERT_FALSE(four.diverged());
  ASSERT_TRUE(four.completed());
  Report a = one.report(), b = four.report();
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.timesteps.str(), b.timesteps.str()); // Numbers compare as their printed figures
  EXPECT_EQ(a.makespan.str(), b.makespan.str());
  EXPECT_EQ(a.maxMemory.str(), b.maxMemory.str());
  EXPECT_EQ(a.communicationVolume, b.communicationVolume);
  for (int64_t r = 0; r < kRanks; ++r) {
    EXPECT_EQ(a.ranks[r].end.str(), b.ranks[r].end.str()) << "rank " << r;
    EXPECT_EQ(a.ranks[r].peakMemory.str(), b.ranks[r].peakMemory.str()) << "rank " << r;
    EXPECT_EQ(a.ranks[r].events, b.ranks[r].events) << "rank " << r;
  }
  std::vector<Diagnostic> da = one.diagnostics(), db = four.diagnostics();
  ASSERT_EQ(da.size(), db.size());
  ASSERT_FALSE(da.empty()); // the end's: values still held, the layer never updated
  for (size_t i = 0; i < da.size(); ++i)
    EXPECT_EQ(da[i].message, db[i].message);
  EXPECT_EQ(one.routes(), four.routes());
  EXPECT_EQ(one.collectiveGroups(), four.collectiveGroups());
}

TEST(Parallel, EachLaneOfConsecutiveRanksRunsOnAThreadOfItsOwn) {
  std::mutex lock;
  std::vector<std::thread::id> threadOf(kRanks);
  World world(Model{1, kRanks, kRanks}, arrays(), onThreads(4));
  world.run([&](Rank &rank) {
    {
      std::lock_guard<std::mutex> guard(lock);
      threadOf[rank.id()] = std::this_thread::get_id();
    }
    ringAndReductions(rank);
  });
  ASSERT_FALSE(world.diverged());
  std::set<std::thread::id> threads(threadOf.begin(), threadOf.end());
  EXPECT_EQ(threads.size(), 4u);
  for (int64_t r = 0; r < kRanks; ++r)
    EXPECT_EQ(threadOf[r], threadOf[r / 16 * 16]) << "rank " << r;
}

// A lane's thread is made bound away from its maker's processor (Parallel.cpp's Placement):
// once it runs it may use every processor the process may, as any thread.
TEST(Parallel, ALanesThreadMayRunOnEveryProcessorOfTheProcess) {
  cpu_set_t process;
  ASSERT_EQ(sched_getaffinity(0, sizeof process, &process), 0);
  std::mutex lock;
  std::vector<cpu_set_t> maskOf(kRanks);
  World world(Model{1, kRanks, kRanks}, arrays(), onThreads(4));
  world.run([&](Rank &rank) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    sched_getaffinity(0, sizeof mask, &mask);
    {
      std::lock_guard<std::mutex> guard(lock);
      maskOf[rank.id()] = mask;
    }
    ringAndReductions(rank);
  });
  ASSERT_FALSE(world.diverged());
  for (int64_t r = 0; r < kRanks; ++r)
    EXPECT_TRUE(CPU_EQUAL(&maskOf[r], &process))
        << "rank " << r << ": " << CPU_COUNT(&maskOf[r]) << " of " << CPU_COUNT(&process) << " processors";
}

TEST(Parallel, AnErrorMakesTheRunDivergeAndOneThreadReportsIt) {
  auto readsNothing = [](Rank &rank) {
    ringAndReductions(rank);
    if (rank.id() == 37)
      rank.read(0, SlotIndex{5}, SourceRange{});
  };
  World four(Model{1, kRanks, kRanks}, arrays(), onThreads(4));
  four.run(readsNothing);
  EXPECT_TRUE(four.diverged());
  EXPECT_FALSE(four.completed());
  EXPECT_TRUE(four.diagnostics().empty()); // its report is the one-thread run's to make
  World one(Model{1, kRanks, kRanks}, arrays(), onThreads(1));
  one.run(readsNothing);
  EXPECT_FALSE(one.diverged());
  EXPECT_TRUE(one.hasErrors());
}

// Every rank receives from the next before it sends: no rank can go on. The lanes all go
// idle, the run diverges, and every blocked rank is woken to unwind (the run returns).
TEST(Parallel, ADeadlockMakesTheRunDivergeAndEveryRankUnwinds) {
  int64_t unwound = 0;
  std::mutex lock;
  World world(Model{1, kRanks, kRanks}, arrays(), onThreads(3));
  world.run([&](Rank &rank) {
    SourceRange at;
    rank.recv(at, (rank.id() + 1) % kRanks);
    std::lock_guard<std::mutex> guard(lock);
    ++unwound;
  });
  EXPECT_TRUE(world.diverged());
  EXPECT_EQ(unwound, kRanks);
}

// With no more lanes than processors an idle lane watches for work before it sleeps
// (Parallel.cpp's watch; the tests above take 3 and 4 lanes, more than a 2-processor
// machine's): a run still ends, with one thread's figures — here rank 0 keeps the others
// waiting longer than a lane watches, so the other lane goes to sleep and must be woken —
// and a deadlock still settles, every rank unwound, while a lane watches.
TEST(Parallel, LanesThatWatchBeforeSleepingEndTheRunAndSettleADeadlock) {
  const unsigned lanes = std::min(2u, processors());
  auto late = [](Rank &rank) {
    if (rank.id() == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ringAndReductions(rank);
  };
  World one(Model{1, kRanks, kRanks}, arrays(), onThreads(1));
  one.run(late);
  World two(Model{1, kRanks, kRanks}, arrays(), onThreads(lanes));
  two.run(late);
  ASSERT_FALSE(two.diverged());
  EXPECT_EQ(one.report().makespan.str(), two.report().makespan.str());
  EXPECT_EQ(one.report().events, two.report().events);

  int64_t unwound = 0;
  std::mutex lock;
  World stuck(Model{1, kRanks, kRanks}, arrays(), onThreads(lanes));
  stuck.run([&](Rank &rank) {
    rank.recv(SourceRange{}, (rank.id() + 1) % kRanks);
    std::lock_guard<std::mutex> guard(lock);
    ++unwound;
  });
  EXPECT_EQ(stuck.diverged(), lanes > 1);
  EXPECT_EQ(unwound, kRanks);
}

// The statement limit holds over every lane's statements together: each of the four lanes
// runs 16 000, under the limit of 40 000, and all of them 64 000, over it.
TEST(Parallel, TheStatementLimitCountsEveryThreadsStatements) {
  Options options = onThreads(4);
  options.limits.maxSteps = 40000;
  World world(Model{1, kRanks, kRanks}, arrays(), options);
  world.run([](Rank &rank) {
    for (int i = 0; i < 1000 && rank.step(SourceRange{}); ++i) {
    }
  });
  EXPECT_TRUE(world.diverged()); // the one-thread run stops at the limit
}

// A parallel run that ran out of memory gave back operator new's reserve; before the run on
// one thread the reserve is taken again, so that run too stops at its next statement on a
// failed allocation rather than ending the process (without the renewal, the second call
// of the handler below ends this test's process: exit 6).
TEST(Parallel, TheAllocationReserveSpentByTheThreadsIsRenewedForTheRunOnOne) {
  installOutOfMemoryHandler();
  std::new_handler giveBack = std::get_new_handler();
  ASSERT_NE(giveBack, nullptr);
  giveBack(); // an allocation of the threads' run failed
  EXPECT_TRUE(Budget::allocationFailed.load());
  renewOutOfMemoryReserve();
  EXPECT_FALSE(Budget::allocationFailed.load());
  giveBack(); // one of the run on one thread fails: there is a reserve to give back again
  EXPECT_TRUE(Budget::allocationFailed.load());
  renewOutOfMemoryReserve();
  EXPECT_FALSE(Budget::allocationFailed.load());
}

// A set interned for the process is one set for every thread, and counted by no one: copies
// made and dropped on several threads at once leave it as it was.
TEST(Parallel, InternedSetsAreOneForEveryThreadAndNotCounted) {
  SetPtr single = singleSet(3);
  EXPECT_EQ(single->counting(), IntSet::Counting::Never);
  EXPECT_EQ(emptySet()->counting(), IntSet::Counting::Never);
  std::vector<const IntSet *> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&seen, t] {
      for (int i = 0; i < 10000; ++i)
        seen[t] = singleSet(3).get();
    });
  for (std::thread &t : threads)
    t.join();
  for (const IntSet *s : seen)
    EXPECT_EQ(s, single.get()); // (a table a thread, as before 04eff1b, gave each its own)
  EXPECT_EQ(single->holders(), 0u);
}

} // namespace
} // namespace schedc::sim
