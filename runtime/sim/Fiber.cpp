// Fiber implementation on Boost.Context's fcontext (make_fcontext / jump_fcontext), stacks
// from mmap with a PROT_NONE guard page, kept in a per-thread pool when their fiber ends.
// A guarded stack is two memory mappings (the guard splits it), and the system limits a
// process's mappings (vm.max_map_count, 65 530 by default), so after kGuardedStacks guarded
// stacks in a thread (half the default limit), or once the limit refuses one, later stacks
// come without a guard page from slabs, one mapping each, of 64 stacks, then 128, ... (a
// 65 536-rank run takes a dozen). The guard is a safety net, not a need: a schedule's
// depth is bounded (sema allows 10 000 nested calls and no recursion) and the stack is
// sized for it.
#include "sim/Fiber.h"

#include <algorithm>
#include <boost/context/detail/fcontext.hpp>
#include <cerrno>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>
#include <vector>

// Tell valgrind about fiber stacks (no cost outside valgrind), so it checks them as stacks.
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SCHEDC_STACK_REGISTER(begin, end) VALGRIND_STACK_REGISTER(begin, end)
#define SCHEDC_STACK_DEREGISTER(id) VALGRIND_STACK_DEREGISTER(id)
#else
#define SCHEDC_STACK_REGISTER(begin, end) 0u
#define SCHEDC_STACK_DEREGISTER(id) ((void)(id))
#endif

// Tell AddressSanitizer about every switch of stacks (it would otherwise take a fiber's
// frames for a corrupted stack). SCHEDC_ASAN comes from Fiber.h.
#ifdef SCHEDC_ASAN
#include <sanitizer/common_interface_defs.h>
#define SCHEDC_START_SWITCH(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define SCHEDC_FINISH_SWITCH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define SCHEDC_START_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define SCHEDC_FINISH_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#endif

namespace schedc::sim {

namespace fc = boost::context::detail;

namespace {

thread_local Fiber *running = nullptr;

// Unmaps a stack; where the system refuses (unmapping part of a merged mapping splits it,
// which needs a mapping the limit may not allow), at least gives its pages back.
void unmapStack(void *base, size_t bytes) {
  if (munmap(base, bytes) != 0)
    madvise(base, bytes, MADV_DONTNEED);
}

// Stacks of ended fibers, by size, for the next fibers of this thread. A reused stack's
// touched pages are still there: no system call and no page fault to start a fiber on it.
struct StackPool {
  struct Stack {
    void *base;
    size_t bytes;
  };
  std::vector<Stack> stacks;

  ~StackPool() {
    for (const Stack &s : stacks)
      unmapStack(s.base, s.bytes);
  }
  void *take(size_t bytes) {
    for (size_t i = stacks.size(); i-- > 0;)
      if (stacks[i].bytes == bytes) {
        void *base = stacks[i].base;
        stacks[i] = stacks.back();
        stacks.pop_back();
        return base;
      }
    return nullptr;
  }
  void give(void *base, size_t bytes) {
    if (stacks.size() < Fiber::kPooledStacks)
      stacks.push_back({base, bytes});
    else
      unmapStack(base, bytes);
  }
};

thread_local StackPool pool;

void *mapAnonymous(size_t bytes) {
  void *p =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Unguarded stacks, carved from slabs once guarded ones have run out (see the top).
constexpr size_t kGuardedStacks = 16384;
struct Slabs {
  size_t guarded = 0; // guarded stacks mapped so far
  bool inUse = false; // take every later stack from a slab
  char *next = nullptr;
  size_t left = 0;  // stacks left in the current slab
  size_t size = 32; // the last slab's stacks (each slab twice the last, up to 4096)
  size_t bytes = 0;
};
thread_local Slabs slabs;

void *slabStack(size_t bytes) {
  if (slabs.left == 0 || slabs.bytes != bytes) {
    size_t size = std::min<size_t>(slabs.size * 2, 4096);
    auto *slab = static_cast<char *>(mapAnonymous(size * bytes));
    if (!slab) // the address space may not hold a slab: one stack, then
      slab = static_cast<char *>(mapAnonymous((size = 1) * bytes));
    if (!slab)
      return nullptr;
    slabs.next = slab, slabs.left = size, slabs.size = size, slabs.bytes = bytes;
  }
  --slabs.left;
  return std::exchange(slabs.next, slabs.next + bytes);
}

// A fresh stack of `bytes`: its lowest page a guard page, or from a slab without one once
// the mapping limit refused a guard (ENOMEM); null if the system refuses the memory.
void *mapStack(size_t bytes) {
  if (slabs.inUse || slabs.guarded >= kGuardedStacks) {
    slabs.inUse = true;
    return slabStack(bytes);
  }
  void *stack = mapAnonymous(bytes);
  if (!stack)
    return nullptr;
  if (mprotect(stack, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE) == 0) {
    ++slabs.guarded;
    return stack;
  }
  bool tooManyMappings = errno == ENOMEM; // the guard would split the mapping in two
  munmap(stack, bytes);
  if (!tooManyMappings)
    return nullptr;
  slabs.inUse = true;
  return slabStack(bytes);
}

} // namespace

// The first frame of every fiber: runs its body, then leaves for good.
struct FiberEntry {
  static void run(fc::transfer_t from) {
    auto *self = static_cast<Fiber *>(from.data);
    self->caller_ = from.fctx;
    SCHEDC_FINISH_SWITCH(nullptr, &self->callerStack_, &self->callerStackBytes_);
    self->body_(); // bodies catch everything: nothing may unwind past this frame
    self->finished_ = true;
    SCHEDC_START_SWITCH(nullptr, self->callerStack_, self->callerStackBytes_); // this stack is done
    fc::jump_fcontext(self->caller_, nullptr);
    __builtin_unreachable(); // a finished fiber is never resumed
  }
};

Fiber::Fiber(std::function<void()> body, size_t stackBytes) : body_(std::move(body)), stackBytes_(stackBytes) {}

Fiber::~Fiber() {
  if (stack_) {
    SCHEDC_STACK_DEREGISTER(valgrindStack_);
    pool.give(stack_, stackBytes_);
  }
}

Fiber *Fiber::current() {
  return running;
}

size_t Fiber::pooledStacks() {
  return pool.stacks.size();
}

bool Fiber::prepare() {
  if (started_)
    return true;
  void *stack = pool.take(stackBytes_);
  if (!stack && !(stack = mapStack(stackBytes_)))
    return false;
  stack_ = stack;
  started_ = true;
  char *top = static_cast<char *>(stack_) + stackBytes_;
  valgrindStack_ = SCHEDC_STACK_REGISTER(static_cast<char *>(stack_), top);
  context_ = fc::make_fcontext(top, stackBytes_, &FiberEntry::run);
  return true;
}

bool Fiber::resume() {
  if (finished_ || !prepare())
    return finished_;
  Fiber *previous = running;
  running = this;
  void *fakeStack = nullptr;
  SCHEDC_START_SWITCH(&fakeStack, stack_, stackBytes_);
  fc::transfer_t back = fc::jump_fcontext(context_, this);
  SCHEDC_FINISH_SWITCH(fakeStack, nullptr, nullptr);
  context_ = back.fctx; // where the fiber stopped (unused once it finished)
  running = previous;
  return finished_;
}

void Fiber::yield() {
  Fiber *self = running;
  void *fakeStack = nullptr;
  SCHEDC_START_SWITCH(&fakeStack, self->callerStack_, self->callerStackBytes_);
  fc::transfer_t back = fc::jump_fcontext(self->caller_, nullptr);
  SCHEDC_FINISH_SWITCH(fakeStack, &self->callerStack_, &self->callerStackBytes_);
  self->caller_ = back.fctx; // who resumed it this time
}

} // namespace schedc::sim
