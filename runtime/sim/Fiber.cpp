// Fiber implementation on ucontext, stacks from mmap with a PROT_NONE guard page.
#include "sim/Fiber.h"

#include <cstdint>
#include <new>
#include <stdexcept>
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
  self->body_(); // bodies catch everything: nothing may unwind past this frame
  self->finished_ = true;
  // Returning resumes uc_link: the caller context.
}

bool Fiber::resume() {
  if (finished_)
    return true;
  if (!started_) {
    started_ = true;
    stack_ = mmap(nullptr, stackBytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                  -1, 0);
    if (stack_ == MAP_FAILED) {
      stack_ = nullptr;
      throw std::bad_alloc();
    }
    mprotect(stack_, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE); // guard page
    valgrindStack_ = SCHEDC_STACK_REGISTER(static_cast<char *>(stack_), static_cast<char *>(stack_) + stackBytes_);
    getcontext(&context_);
    context_.uc_stack.ss_sp = stack_;
    context_.uc_stack.ss_size = stackBytes_;
    context_.uc_link = &caller_;
    auto p = reinterpret_cast<uintptr_t>(this);
    makecontext(&context_, reinterpret_cast<void (*)()>(&Fiber::entry), 2, static_cast<unsigned>(p & 0xFFFFFFFFu),
                static_cast<unsigned>(p >> 32));
  }
  Fiber *previous = running;
  running = this;
  swapcontext(&caller_, &context_);
  running = previous;
  return finished_;
}

void Fiber::yield() {
  Fiber *self = running;
  swapcontext(&self->context_, &self->caller_);
}

} // namespace schedc::sim
