// WarmMemory — lets a real backend's measured step run in memory already faulted in, as a
// training loop's later steps run in the memory its first step faulted in (PyTorch's caching
// allocators keep freed blocks for the next step). Without it a one-step run pays the first
// touch of every page it ever allocates: on the machine measured, a page touched for the first
// time was written at 0.6–3 GB/s against 20–39 GB/s thereafter (bench/first_touch.py), and
// that made the cpu backend's ddp step a fifth slower than its events' work
// (docs/performance.md).
#pragma once

#include <cstdint>

namespace schedc::memory {

// From now on the calling thread allocates as a measured step should: from the huge-page
// arena its large runs would move to (memory/HugePages.h), every arena keeping the pages it
// frees (jemalloc: no decay purging), and `bytes` of that arena faulted in already (0: none).
// A no-op without jemalloc (the sanitizer builds), and where `bytes` cannot be allocated
// nothing is faulted in.
void allocateWarm(uint64_t bytes);

} // namespace schedc::memory
