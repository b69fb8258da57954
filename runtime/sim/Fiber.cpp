// Fiber implementation on ucontext, stacks from mmap with a PROT_NONE guard page.
#include "sim/Fiber.h"

#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>

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

namespace {
thread_local Fiber *running = nullptr;
}

Fiber::Fiber(std::function<void()> body, size_t stackBytes) : body_(std::move(body)), stackBytes_(stackBytes) {}

Fiber::~Fiber() {
  if (stack_) {
    SCHEDC_STACK_DEREGISTER(valgrindStack_);
    munmap(stack_, stackBytes_);
  }
}

Fiber *Fiber::current() {
  return running;
}

void Fiber::entry(unsigned lo, unsigned hi) {
  auto *self = reinterpret_cast<Fiber *>((static_cast<uintptr_t>(hi) << 32) | lo);
  SCHEDC_FINISH_SWITCH(nullptr, &self->callerStack_, &self->callerStackBytes_);
  self->body_(); // bodies catch everything: nothing may unwind past this frame
  self->finished_ = true;
  // Returning resumes uc_link, the caller context; this stack is not used again.
  SCHEDC_START_SWITCH(nullptr, self->callerStack_, self->callerStackBytes_);
}

bool Fiber::prepare() {
  if (started_)
    return true;
  void *stack = mmap(nullptr, stackBytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return false;
  if (mprotect(stack, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE) != 0) { // guard page
    munmap(stack, stackBytes_);
    return false;
  }
  stack_ = stack;
  started_ = true;
  valgrindStack_ = SCHEDC_STACK_REGISTER(static_cast<char *>(stack_), static_cast<char *>(stack_) + stackBytes_);
  getcontext(&context_);
  context_.uc_stack.ss_sp = stack_;
  context_.uc_stack.ss_size = stackBytes_;
  context_.uc_link = &caller_;
  auto p = reinterpret_cast<uintptr_t>(this);
  makecontext(&context_, reinterpret_cast<void (*)()>(&Fiber::entry), 2, static_cast<unsigned>(p & 0xFFFFFFFFu),
              static_cast<unsigned>(p >> 32));
  return true;
}

bool Fiber::resume() {
  if (finished_ || !prepare())
    return finished_;
  Fiber *previous = running;
  running = this;
  void *fakeStack = nullptr;
  SCHEDC_START_SWITCH(&fakeStack, stack_, stackBytes_);
  swapcontext(&caller_, &context_);
  SCHEDC_FINISH_SWITCH(fakeStack, nullptr, nullptr);
  running = previous;
  return finished_;
}

void Fiber::yield() {
  Fiber *self = running;
  void *fakeStack = nullptr;
  SCHEDC_START_SWITCH(&fakeStack, self->callerStack_, self->callerStackBytes_);
  swapcontext(&self->context_, &self->caller_);
  SCHEDC_FINISH_SWITCH(fakeStack, &self->callerStack_, &self->callerStackBytes_);
}

} // namespace schedc::sim
