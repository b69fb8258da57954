// WarmMemory — lets a real backend's measured step run in memory already faulted in, as a
// training loop's later steps run in the memory its first step faulted in (PyTorch's caching
// allocators keep freed blocks for the next step). Without it a one-step run pays the first
// touch of every page it ever allocates: on the machine measured, a page touched for the first
// time was written at 0.6 GB/s (huge pages) against 20–27 GB/s thereafter, and that alone made
// the cpu backend's ddp step a fifth slower than its events' work (docs/performance.md).
#pragma once

#include <cstdint>

namespace schedc::memory {

// From now on the allocator keeps the pages it frees (jemalloc: no decay purging, in every
// arena and in those created later), so they are used again instead of faulted in again.
// A no-op where the executable does not run on jemalloc.
void keepFreedPages();

// Faults in `bytes` of the calling thread's large-allocation arena (the huge-page one,
// memory/HugePages.h) and frees them: with keepFreedPages, a run's allocations up to that
// size find their pages touched already. A no-op without jemalloc, or where `bytes` cannot
// be allocated.
void faultIn(uint64_t bytes);

} // namespace schedc::memory
