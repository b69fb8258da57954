// HugePages: a thread moves to the huge-page arena only once it has allocated kLargeRunBytes,
// and what it allocates then lies in a mapping marked MADV_HUGEPAGE ("hg" in its VmFlags); a
// wide run's World looks as it makes its ranks.
// Skipped where the tests do not run on jemalloc (the sanitizer builds).
#include "memory/HugePages.h"
#include "engine/World.h"

#include <gtest/gtest.h>
#include <jemalloc/jemalloc.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#pragma weak mallctl

namespace {

unsigned threadArena() {
  unsigned arena = 0;
  size_t size = sizeof(arena);
  EXPECT_EQ(mallctl("thread.arena", &arena, &size, nullptr, 0), 0);
  return arena;
}

// The VmFlags of the mapping that holds `p`, from /proc/self/smaps.
std::string mappingFlags(const void *p) {
  auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

TEST(HugePages, AThreadMovesOnlyOnceItHasAllocatedALargeRun) {
  if (!mallctl)
    GTEST_SKIP() << "not linked with jemalloc";
  std::thread([] {
    unsigned before = threadArena();
    std::vector<std::unique_ptr<char[]>> kept;
    kept.emplace_back(new char[1 << 20]);
    for (int call = 0; call < 100; ++call) // as per event: past the calls before it looks
      schedc::memory::useHugePagesOnceLarge();
    EXPECT_EQ(threadArena(), before) << "moved after 1 MiB";

    for (uint64_t total = 1 << 20; total <= schedc::memory::kLargeRunBytes; total += 1 << 20)
      kept.emplace_back(new char[1 << 20]);
    schedc::memory::useHugePagesOnceLarge();
    unsigned after = threadArena();
    EXPECT_NE(after, before) << "still in the first arena after 9 MiB";

    auto *fresh = new char[4 << 20];
    fresh[0] = 1;
    EXPECT_NE(mappingFlags(fresh).find(" hg"), std::string::npos) << mappingFlags(fresh);
    delete[] fresh;

    schedc::memory::useHugePagesOnceLarge(); // once moved, it stays
    EXPECT_EQ(threadArena(), after);
  }).join();
}

// A wide run's ranks are its first large allocation (1024 ranks: some 1.5 MB of Rank objects,
// 384 page faults in 4 KiB pages): the World looks at the thread's count as it makes them,
// so a thread that has allocated a large run moves before the last ranks are made, and those
// lie in huge pages (without the look, the first events moved it, after every rank was made).
TEST(HugePages, AWideRunsLastRanksLieInHugePages) {
  if (!mallctl)
    GTEST_SKIP() << "not linked with jemalloc";
  std::thread([] {
    unsigned before = threadArena();
    std::vector<std::unique_ptr<char[]>> kept; // what a front end allocated before the run
    for (uint64_t total = 0; total <= schedc::memory::kLargeRunBytes; total += 1 << 20)
      kept.emplace_back(new char[1 << 20]);
    schedc::sim::World world(schedc::sim::Model{1, 1, 256}, {}, schedc::sim::Options{});
    EXPECT_NE(threadArena(), before) << "still in the first arena after making 256 ranks";
    const void *last = &world.rank(255);
    EXPECT_NE(mappingFlags(last).find(" hg"), std::string::npos) << mappingFlags(last);
  }).join();
}

} // namespace
