// HugePages: a jemalloc arena whose extent hooks are jemalloc's own, except that every mapping
// they make is then marked MADV_HUGEPAGE; the calling thread is bound to it (mallctl
// "arenas.create" with hooks, then "thread.arena": jemalloc's documented interface).
#include "memory/HugePages.h"

#include "memory/ThreadAllocation.h"

#include <jemalloc/jemalloc.h>
#include <sys/mman.h>

// Weak: resolved where jemalloc is linked in (its malloc and mallctl are one object), null
// elsewhere.
#pragma weak mallctl

namespace schedc::memory {
namespace {

extent_hooks_t *jemallocHooks = nullptr; // the default hooks the arena's own hooks call
extent_hooks_t hugePageHooks;

void *allocateOnHugePages(extent_hooks_t *, void *at, size_t size, size_t alignment, bool *zero, bool *commit,
                          unsigned arena) {
  // When mmap fails, jemalloc's own hook tries sbrk, whose bookkeeping it allocates from the
  // arena's base, through these hooks again: that call fails at once instead of recursing
  // until the stack overflows, and the allocation fails cleanly (operator new's handler then reports it:
  // engine/Budget.cpp).
  thread_local bool inside = false;
  if (inside)
    return nullptr;
  inside = true;
  // Start on a huge page: a mapping's pages before its first 2 MiB boundary stay small.
  constexpr size_t kHugePage = size_t{2} << 20;
  if (!at && alignment < kHugePage)
    alignment = kHugePage;
  void *p = jemallocHooks->alloc(jemallocHooks, at, size, alignment, zero, commit, arena);
  inside = false;
  if (p)
    madvise(p, size, MADV_HUGEPAGE); // advice: where the kernel refuses, pages stay small
  return p;
}

// The arena, created once (the first thread that asks); -1 if jemalloc refused.
int hugePageArena() {
  static const int arena = [] {
    if (!mallctl) // not on jemalloc (the sanitizer builds)
      return -1;
    size_t size = sizeof(jemallocHooks);
    if (mallctl("arena.0.extent_hooks", &jemallocHooks, &size, nullptr, 0) != 0 || !jemallocHooks)
      return -1;
    hugePageHooks = *jemallocHooks;
    hugePageHooks.alloc = allocateOnHugePages;
    extent_hooks_t *hooks = &hugePageHooks;
    unsigned index = 0;
    size = sizeof(index);
    if (mallctl("arenas.create", &index, &size, &hooks, sizeof(hooks)) != 0)
      return -1;
    return static_cast<int>(index);
  }();
  return arena;
}

// This thread: whether it has moved (or cannot), and jemalloc's count of its allocated bytes.
struct ThreadState {
  bool settled = false;
  unsigned calls = 0;
  const uint64_t *allocated = nullptr;
};

// Calls before the first look at the count: the first mallctl call sets up jemalloc's control
// tables (some 40 page faults), which a small check (basic.sched: about 20 events) never needs.
constexpr unsigned kCallsBeforeLooking = 64;

void moveToHugePages() {
  int arena = hugePageArena();
  if (arena < 0)
    return;
  auto index = static_cast<unsigned>(arena);
  mallctl("thread.arena", nullptr, nullptr, &index, sizeof(index));
}

thread_local ThreadState state;

} // namespace

void useHugePagesNow() {
  if (state.settled)
    return;
  state.settled = true;
  moveToHugePages();
}

void useHugePagesOnceLarge() {
  if (state.settled)
    return;
  if (!state.allocated) {
    if (++state.calls < kCallsBeforeLooking)
      return;
    state.allocated = threadAllocatedBytes(); // (a count that stays 0 without jemalloc)
  }
  if (*state.allocated < kLargeRunBytes)
    return;
  state.settled = true;
  moveToHugePages();
}

} // namespace schedc::memory
