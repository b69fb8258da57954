// Fiber implementation on Boost.Context's fcontext (make_fcontext / jump_fcontext). Stacks
// of the default size come from slabs, one memory mapping of 16 stacks, then 32, ... up to
// 1024 (fewer where the address space refuses), each stack's lowest page a guard; an ended
// fiber's stack goes to its thread's pool, and a later fiber takes it without a system
// call. Stacks are not unmapped one by one: a mmap, an mprotect and a munmap per rank were
// about half of what a wide run spends per rank, so a thread's slabs stay until it ends
// (the main thread's are left to the kernel at the process's exit), holding at most the
// touched pages of the most fibers it had alive at once. A guard is a marker in the page
// table (madvise's MADV_GUARD_INSTALL, Linux 6.13), one system call that leaves the mapping
// whole: an mprotect'ed PROT_NONE page splits the slab's mapping, which costs a wide run a
// large share of its time (the figures: docs/performance.md). On an older kernel a guard is
// that PROT_NONE page; the system limits a process's mappings (vm.max_map_count, 65 530 by
// default), so after kGuardedStacks such guards in a thread (half that limit), or once the
// limit refuses one, later stacks have no guard. The guard is a safety net, not a need:
// sema allows 10 000 nested calls and no recursion, and the checker's interpreter stops a
// rank whose nesting reaches half its stack (check/Interpreter.cpp, stackFloor below). A
// shallow program's smaller stacks (kShallowStackBytes) come from slabs of their own in the
// same way; stacks of other sizes (the driver's) are a mapping each, with a guard, and
// pooled likewise.
#include "engine/Fiber.h"

#include <algorithm>
#include <atomic>
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

// Tell ThreadSanitizer which fiber runs (it would otherwise see one thread's code on many
// stacks): each fiber is one of its fibers, switched to before each jump.
#ifdef SCHEDC_TSAN
#include <sanitizer/tsan_interface.h>
#define SCHEDC_TSAN_CREATE() __tsan_create_fiber(0)
#define SCHEDC_TSAN_CURRENT() __tsan_get_current_fiber()
#define SCHEDC_TSAN_SWITCH(fiber) __tsan_switch_to_fiber(fiber, 0)
#define SCHEDC_TSAN_DESTROY(fiber) __tsan_destroy_fiber(fiber)
#else
#define SCHEDC_TSAN_CREATE() nullptr
#define SCHEDC_TSAN_CURRENT() nullptr
#define SCHEDC_TSAN_SWITCH(fiber) ((void)(fiber))
#define SCHEDC_TSAN_DESTROY(fiber) ((void)(fiber))
#endif

namespace schedc::sim {

namespace fc = boost::context::detail;

namespace {

thread_local Fiber *running = nullptr;

// The system's page size (a guard is one page), asked once, before main (no fiber runs then).
const auto kPageBytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// Unmaps `bytes` at `base`; where the system refuses, at least gives their pages back.
void unmap(void *base, size_t bytes) {
  if (munmap(base, bytes) != 0)
    madvise(base, bytes, MADV_DONTNEED);
}

void *mapAnonymous(size_t bytes) {
  void *p =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

constexpr size_t kGuardedStacks = 16384; // PROT_NONE guards per thread (see the top)

// madvise's MADV_GUARD_INSTALL (Linux 6.13; Debian 12's headers predate it): the page faults
// as a PROT_NONE page would, but the mapping is not split. Whether the kernel has it is
// learnt from the first refusal (EINVAL), once for every thread.
constexpr int kMadvGuardInstall = 102;
std::atomic<bool> markerGuards{true};
constexpr size_t kFirstSlab = 16, kLargestSlab = 1024;

// The memory one page-table page maps (x86-64 and AArch64 with 4 KiB pages). A stack's guard
// lies just above the previous stack's top, the pages every fiber touches; a marker guard
// is an entry in a page table, so where a stack boundary falls on a table's edge the guard
// needs a table of its own (4 KiB a stack, outside RSS: twice the VmPTE, measured). Slabs
// start stacks halfway into a table, so each guard shares its neighbour's.
constexpr size_t kTableSpan = size_t(2) << 20;
static_assert(kFiberStackBytes % kTableSpan == 0, "every stack boundary the same distance into a table");
static_assert(kTableSpan % kShallowStackBytes == 0 || kShallowStackBytes == kFiberStackBytes,
              "shallow stacks tile a table");

// The offset from `slab` at which the first stack starts halfway into a page table's span.
size_t midTable(const void *slab) {
  auto at = reinterpret_cast<uintptr_t>(slab);
  return (kTableSpan / 2 - at % kTableSpan + kTableSpan) % kTableSpan;
}

// This thread's stacks: the slabs and other mappings it made, and the stacks free in them.
struct StackPool {
  struct Span {
    void *base;
    size_t bytes;
  };
  // The slabs of stacks of one size.
  struct Slabs {
    size_t stackBytes;
    char *next = nullptr; // the current slab's first unused stack
    size_t left = 0;      // its unused stacks
    size_t slabStacks = kFirstSlab / 2;
  };
  std::vector<Span> mappings; // slabs and other stacks mapped, unmapped when the thread ends
  std::vector<Span> free;     // ended fibers' stacks, their touched pages still there
  Slabs slabs[2] = {{kFiberStackBytes}, {kShallowStackBytes}};
  size_t guarded = 0;
  bool guarding = true; // false past kGuardedStacks, or once the mapping limit refused a guard

  // A thread's slabs go when it ends; the main thread's when the process does: its
  // thread-local objects are destroyed at exit, where the kernel takes the whole address
  // space at once (unmapping a wide run's stacks one by one first costs it: docs/performance.md).
  ~StackPool() {
    if (gettid() == getpid())
      return;
    for (const Span &m : mappings)
      unmap(m.base, m.bytes);
  }

  void *take(size_t bytes) {
    for (size_t i = free.size(); i-- > 0;)
      if (free[i].bytes == bytes) {
        void *base = free[i].base;
        free[i] = free.back();
        free.pop_back();
        return base;
      }
    void *stack = bytes == kFiberStackBytes     ? fromSlab(slabs[0])
                  : bytes == kShallowStackBytes ? fromSlab(slabs[1])
                                                : mapped(bytes);
    if (stack)
      guard(stack);
    return stack;
  }
  void give(void *base, size_t bytes) { free.push_back({base, bytes}); }

  // A fresh stack of the slabs' size from the current slab, or from a new one: twice the
  // last (up to kLargestSlab stacks), or as many as the address space still holds.
  void *fromSlab(Slabs &s) {
    if (s.left == 0) {
      size_t stacks = std::min(s.slabStacks * 2, kLargestSlab);
      void *slab = nullptr;
      for (; stacks > 0 && !(slab = mapAnonymous(stacks * s.stackBytes + kTableSpan)); stacks /= 2) {
      }
      if (!slab)
        return nullptr;
      mappings.push_back({slab, stacks * s.stackBytes + kTableSpan});
      s.next = static_cast<char *>(slab) + midTable(slab), s.left = stacks, s.slabStacks = stacks;
    }
    --s.left;
    return std::exchange(s.next, s.next + s.stackBytes);
  }
  void *mapped(size_t bytes) {
    void *stack = mapAnonymous(bytes);
    if (stack)
      mappings.push_back({stack, bytes});
    return stack;
  }
  // Makes the stack's lowest page a guard: a guard marker in the page table where the kernel
  // has them, else a PROT_NONE page while such guards are allowed (see the top); a stack the
  // system refuses a guard (the mapping limit) runs without one.
  void guard(void *stack) {
    if (markerGuards.load(std::memory_order_relaxed)) {
      if (madvise(stack, kPageBytes, kMadvGuardInstall) == 0)
        return;
      if (errno == EINVAL) // a kernel before 6.13 (or a tool that does not pass the advice on)
        markerGuards.store(false, std::memory_order_relaxed);
    }
    if (!guarding)
      return;
    if (guarded < kGuardedStacks && mprotect(stack, kPageBytes, PROT_NONE) == 0)
      ++guarded;
    else
      guarding = false;
  }
};

thread_local StackPool pool;

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
    SCHEDC_TSAN_SWITCH(self->tsanCaller_);
    fc::jump_fcontext(self->caller_, nullptr);
    __builtin_unreachable(); // a finished fiber is never resumed
  }
};

Fiber::Fiber(std::function<void()> body, size_t stackBytes) : body_(std::move(body)), stackBytes_(stackBytes) {}

Fiber::~Fiber() {
  if (tsanFiber_)
    SCHEDC_TSAN_DESTROY(tsanFiber_);
  if (stack_) {
    SCHEDC_STACK_DEREGISTER(valgrindStack_);
    pool.give(stack_, stackBytes_);
  }
}

Fiber *Fiber::current() {
  return running;
}

uintptr_t Fiber::stackFloor() {
  return running ? reinterpret_cast<uintptr_t>(running->stack_) + kPageBytes : 0; // above the guard
}

size_t Fiber::stackBytes() {
  return running ? running->stackBytes_ : 0;
}

size_t Fiber::pooledStacks() {
  return pool.free.size();
}

bool Fiber::prepare() {
  if (started_)
    return true;
  void *stack = pool.take(stackBytes_);
  if (!stack)
    return false;
  stack_ = stack;
  started_ = true;
  char *top = static_cast<char *>(stack_) + stackBytes_;
  valgrindStack_ = SCHEDC_STACK_REGISTER(static_cast<char *>(stack_), top);
  tsanFiber_ = SCHEDC_TSAN_CREATE();
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
  tsanCaller_ = SCHEDC_TSAN_CURRENT();
  SCHEDC_TSAN_SWITCH(tsanFiber_);
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
  SCHEDC_TSAN_SWITCH(self->tsanCaller_);
  fc::transfer_t back = fc::jump_fcontext(self->caller_, nullptr);
  SCHEDC_FINISH_SWITCH(fakeStack, &self->callerStack_, &self->callerStackBytes_);
  self->caller_ = back.fctx; // who resumed it this time
}

} // namespace schedc::sim
