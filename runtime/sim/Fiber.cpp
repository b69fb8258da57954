// Fiber implementation on Boost.Context's fcontext (make_fcontext / jump_fcontext), stacks
// from mmap with a PROT_NONE guard page, kept in a per-thread pool when their fiber ends.
#include "sim/Fiber.h"

#include <boost/context/detail/fcontext.hpp>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>
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
      munmap(s.base, s.bytes);
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
      munmap(base, bytes);
  }
};

thread_local StackPool pool;

// A fresh stack of `bytes` whose lowest page is a guard page; null if the system refuses.
void *mapStack(size_t bytes) {
  void *stack =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return nullptr;
  if (mprotect(stack, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE) != 0) {
    munmap(stack, bytes);
    return nullptr;
  }
  return stack;
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
