// ThreadAllocation — the bytes the calling thread has allocated so far, as the allocator counts
// them: a load, cheap enough for every statement of a run (engine/Budget.h looks at the process's
// memory each time a thread has allocated another slice of the limit).
#pragma once

#include <cstdint>

namespace schedc::memory {

// jemalloc's count of the bytes this thread has allocated ("thread.allocatedp": it only grows,
// and frees are not taken off). Where the executable does not run on jemalloc (the sanitizer
// builds), a count that stays 0. Valid for the calling thread's lifetime; read it on that
// thread only.
const uint64_t *threadAllocatedBytes();

} // namespace schedc::memory
