// Unit tests of the sim's fibers (engine/Fiber.h): control passes back and forth at each yield,
// a fiber may resume another (a yield returns to whoever resumed it last), an ended
// fiber's stack goes to the pool and the next fiber takes it, a deep recursion fits in
// the stack the interpreter is promised, running past it hits its guard, more fibers than
// guarded stacks can run, and a thread's stacks are unmapped when it ends.
#include "engine/Fiber.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace schedc::sim {
namespace {

TEST(Fiber, YieldsBackAndForthInOrder) {
  std::vector<std::string> log;
  Fiber a([&] {
    log.push_back("a1");
    Fiber::yield();
    log.push_back("a2");
  });
  Fiber b([&] {
    log.push_back("b1");
    Fiber::yield();
    log.push_back("b2");
  });
  EXPECT_FALSE(a.resume());
  EXPECT_FALSE(b.resume());
  EXPECT_EQ(Fiber::current(), nullptr);
  EXPECT_TRUE(a.resume());
  EXPECT_TRUE(b.resume());
  EXPECT_TRUE(a.finished());
  EXPECT_EQ(log, (std::vector<std::string>{"a1", "b1", "a2", "b2"}));
}

TEST(Fiber, AFiberResumesAnother) {
  std::vector<int> log;
  Fiber outer([&] {
    Fiber inner([&] {
      log.push_back(1);
      Fiber::yield(); // back to outer, not to the test
      log.push_back(3);
    });
    inner.resume();
    log.push_back(2);
    EXPECT_TRUE(inner.resume());
    log.push_back(4);
  });
  EXPECT_TRUE(outer.resume());
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 4}));
}

TEST(Fiber, AnEndedFibersStackIsReused) {
  { // a fiber that ran: its stack goes back to the pool
    Fiber f([] {});
    f.resume();
  }
  size_t pooled = Fiber::pooledStacks();
  ASSERT_GE(pooled, 1u);
  {
    Fiber next([] {});
    ASSERT_TRUE(next.prepare());
    EXPECT_EQ(Fiber::pooledStacks(), pooled - 1); // taken from the pool, not mapped anew
    next.resume();
  }
  EXPECT_EQ(Fiber::pooledStacks(), pooled); // and given back
}

int depth(int n) {
  volatile char frame[256] = {};
  return n == 0 ? frame[0] : depth(n - 1) + frame[n % 256] + 1;
}

TEST(Fiber, DeepRecursionFitsItsStack) {
  int reached = 0;
  Fiber f([&] { reached = depth(10000); }); // ~3 MB of frames in 8 MiB
  f.resume();
  EXPECT_EQ(reached, 10000);
}

// Recurses until `bytes` of stack lie between `from` and its frame, then returns.
size_t descend(const char *from, size_t bytes) {
  volatile char frame[256] = {};
  const char *here = static_cast<const char *>(__builtin_frame_address(0));
  if (static_cast<size_t>(from - here) > bytes)
    return frame[0];
  return descend(from, bytes) + frame[1];
}

// In its own thread (a fresh pool: the two stacks are the first of a slab, both guarded),
// runs a fiber on a stack of `bytes` past its end beside a live neighbour; exits 0 if that
// does not crash.
void runPastAStack(size_t bytes) {
  std::thread t([bytes] {
    Fiber below([] { Fiber::yield(); }, bytes); // stays alive, so the next stack is its neighbour
    below.resume();
    Fiber past(
        [bytes] {
          const char *top = static_cast<const char *>(__builtin_frame_address(0));
          descend(top, bytes + (size_t(64) << 10));
        },
        bytes);
    past.resume();
  });
  t.join();
  std::exit(0);
}
bool crashed(int status) {
  return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
}

// A fiber that runs past its stack is stopped by the guard page below it, not let into the
// stack of the fiber before it in the slab: in a child process that must crash; without a
// guard the second fiber's frames land in the first's stack and the child exits 0.
TEST(FiberDeathTest, RunningPastTheStackHitsItsGuard) {
#ifdef SCHEDC_ASAN
  GTEST_SKIP() << "AddressSanitizer reports the overrun itself, a report scripts/sanitize.sh counts as an error";
#endif
  EXPECT_EXIT(runPastAStack(kFiberStackBytes), crashed, "");
}

// A shallow program's stacks (kShallowStackBytes) come from slabs of their own: two fibers
// alive at once in a fresh thread run on neighbouring stacks of that size, each knowing it;
// and one that runs past its stack hits the guard below, as a default stack's would.
TEST(Fiber, ShallowStacksAreSlabNeighbours) {
  uintptr_t floors[2] = {0, 0};
  size_t sizes[2] = {0, 0};
  std::thread t([&] {
    Fiber first([&] { floors[0] = Fiber::stackFloor(), sizes[0] = Fiber::stackBytes(), Fiber::yield(); },
                kShallowStackBytes);
    Fiber second([&] { floors[1] = Fiber::stackFloor(), sizes[1] = Fiber::stackBytes(); }, kShallowStackBytes);
    first.resume();
    second.resume();
    first.resume();
  });
  t.join();
  EXPECT_EQ(sizes[0], kShallowStackBytes);
  EXPECT_EQ(sizes[1], kShallowStackBytes);
  EXPECT_EQ(floors[1] - floors[0], kShallowStackBytes);
  EXPECT_EQ(Fiber::stackBytes(), 0u); // off a fiber
}

TEST(FiberDeathTest, RunningPastAShallowStackHitsItsGuard) {
#ifdef SCHEDC_ASAN
  GTEST_SKIP() << "AddressSanitizer reports the overrun itself, a report scripts/sanitize.sh counts as an error";
#endif
  EXPECT_EXIT(runPastAStack(kShallowStackBytes), crashed, "");
}

// More fibers alive at once than a process may have PROT_NONE-guarded stacks (each is two
// memory mappings; kernels before 6.13 guard so): the later ones take unguarded stacks from
// slabs (where guards are page-table markers every stack has one), and every fiber keeps its own
// stack (each writes its number on it, yields, and finds it there when resumed). 40 000
// stacks are 320 GiB reserved, a few pages each touched.
TEST(Fiber, MoreFibersThanGuardedStacksEachKeepTheirOwn) {
  constexpr int kFibers = 40000;
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<int> intact(kFibers, 0);
  for (int i = 0; i < kFibers; ++i)
    fibers.push_back(std::make_unique<Fiber>([i, &intact] {
      volatile int mine[64];
      for (volatile int &v : mine)
        v = i;
      Fiber::yield();
      int same = 1;
      for (volatile int &v : mine)
        same &= v == i;
      intact[static_cast<size_t>(i)] = same;
    }));
  for (auto &f : fibers)
    ASSERT_FALSE(f->resume()); // started: every fiber's stack in use at once
  for (auto &f : fibers)
    EXPECT_TRUE(f->resume());
  EXPECT_EQ(std::count(intact.begin(), intact.end(), 1), kFibers);
}

// Stacks are never unmapped one by one (they go back to the thread's pool), so a thread
// other than the main one must give its slabs back when it ends: the page a fiber ran on is
// no longer mapped once its thread has been joined (mincore says ENOMEM).
TEST(Fiber, AThreadsStacksGoWhenItEnds) {
  uintptr_t page = 0;
  std::thread t([&] {
    Fiber f([&] {
      volatile char here = 1;
      page = reinterpret_cast<uintptr_t>(&here) & ~static_cast<uintptr_t>(sysconf(_SC_PAGESIZE) - 1);
    });
    ASSERT_TRUE(f.resume());
    unsigned char resident = 0;
    EXPECT_EQ(mincore(reinterpret_cast<void *>(page), 1, &resident), 0) << "mapped while the thread runs";
  });
  t.join();
  ASSERT_NE(page, 0u);
  unsigned char resident = 0;
  EXPECT_EQ(mincore(reinterpret_cast<void *>(page), 1, &resident), -1);
  EXPECT_EQ(errno, ENOMEM) << "the stack's page is still mapped after its thread ended";
}

} // namespace
} // namespace schedc::sim
