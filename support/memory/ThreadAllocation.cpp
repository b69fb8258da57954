// ThreadAllocation implementation: jemalloc's documented "thread.allocatedp" control.
#include "memory/ThreadAllocation.h"

#include <cstddef>
#include <jemalloc/jemalloc.h>

// Weak: resolved where jemalloc is linked in, null elsewhere (as in HugePages.cpp).
#pragma weak mallctl

namespace schedc::memory {

const uint64_t *threadAllocatedBytes() {
  static const uint64_t none = 0;
  uint64_t *allocated = nullptr;
  size_t size = sizeof(allocated);
  if (!mallctl || mallctl("thread.allocatedp", &allocated, &size, nullptr, 0) != 0 || !allocated)
    return &none;
  return allocated;
}

} // namespace schedc::memory
