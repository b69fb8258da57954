// HugePages — lets a large simulation take its memory in transparent huge pages.
//
// A check of thousands of ranks allocates hundreds of megabytes a few hundred bytes at a time,
// and on a kernel whose transparent huge pages are `madvise` (Debian's, Ubuntu's) each fresh
// 4 KiB page costs a fault: on the machine measured, faults took a third of a 1024-rank fsdp
// check. A small check should not pay a 2 MiB page per size class of the allocator, so a
// thread moves to huge pages only once it has allocated kLargeRunBytes.
#pragma once

#include <cstdint>

namespace schedc::memory {

// 2 MiB: below it a run takes at most 512 faults; above it, each further 2 MiB costs one
// fault instead of 512. Measured (perf stat, /usr/bin/time): basic.sched and gpipe.sched at
// their defaults allocate less and keep 5.9 and 6.7 MiB; gpipe on 64 ranks x 256
// micro-batches took 1856 faults against 3125 at the 8 MiB this was (wall 0.96); at 1 MiB,
// gpipe.sched's defaults went to 10.2 MiB.
constexpr uint64_t kLargeRunBytes = uint64_t{2} << 20;

// Once the calling thread has allocated kLargeRunBytes in all, its allocations come from an
// allocator arena whose memory is marked MADV_HUGEPAGE. Cheap enough to call per event (a
// thread-local flag and a counter's load; the count is first looked at on the 64th call).
// A no-op where the executable does not run on jemalloc (the sanitizer builds): glibc's
// malloc cannot do this for a thread's arena.
void useHugePagesOnceLarge();

// The same move now, whatever the thread has allocated (memory/WarmMemory.h: memory faulted
// in ahead of a run must be in the arena the run's large allocations will come from).
void useHugePagesNow();

} // namespace schedc::memory
