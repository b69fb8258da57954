// WarmMemory: jemalloc's documented mallctl interface ("arenas.dirty_decay_ms" for arenas
// created later, "arena.<i>.dirty_decay_ms" for each there now; the same for muzzy pages),
// and one allocation touched a page at a time.
#include "memory/WarmMemory.h"

#include "memory/HugePages.h"

#include <cstdlib>
#include <jemalloc/jemalloc.h>
#include <string>
#include <unistd.h>

#pragma weak mallctl // null where jemalloc is not linked in (memory/HugePages.cpp)

namespace schedc::memory {

namespace {

// Every arena there now, and every one made later, keeps the pages it frees.
void keepFreedPages() {
  ssize_t never = -1;
  unsigned arenas = 0;
  size_t size = sizeof(arenas);
  if (mallctl("arenas.narenas", &arenas, &size, nullptr, 0) != 0)
    return;
  for (const char *kind : {"dirty_decay_ms", "muzzy_decay_ms"}) {
    mallctl((std::string("arenas.") + kind).c_str(), nullptr, nullptr, &never, sizeof(never));
    for (unsigned arena = 0; arena < arenas; ++arena) // (MALLCTL_ARENAS_ALL is refused here)
      mallctl(("arena." + std::to_string(arena) + "." + kind).c_str(), nullptr, nullptr, &never, sizeof(never));
  }
}

} // namespace

void allocateWarm(uint64_t bytes) {
  if (!mallctl) // without jemalloc nothing keeps the pages: no use
    return;
  useHugePagesNow(); // first: the arena exists when its decay is set
  keepFreedPages();
  if (bytes == 0)
    return;
  auto *memory = static_cast<volatile char *>(std::malloc(bytes));
  if (!memory) // not there to warm: the run will find out for itself
    return;
  const long reported = sysconf(_SC_PAGESIZE);
  const uint64_t page = reported > 0 ? static_cast<uint64_t>(reported) : 4096;
  for (uint64_t at = 0; at < bytes; at += page)
    memory[at] = 0;
  std::free(const_cast<char *>(memory));
}

} // namespace schedc::memory
