// The allocator's configuration, linked into every executable that runs the simulator (schedc,
// schedc-llvm and the executables `schedc build` links), which link jemalloc statically
// (Debian's libjemalloc-dev) in place of glibc's malloc. jemalloc reads this string at its
// first allocation (its documented compile-time `malloc_conf`; the MALLOC_CONF environment
// variable still overrides it).
//
// Why jemalloc: a large check allocates its events, storage and values a few hundred bytes at a
// time, and on machines whose transparent huge pages are `madvise` (Debian's and Ubuntu's
// kernels) every fresh 4 KiB page is a fault. glibc asks for huge pages only for its main arena
// and only when told by the environment, and the simulator runs on a thread of its own; jemalloc
// lets a large run move to an arena of huge pages (memory/HugePages.h).
//   narenas:1             one arena for ordinary allocations: the driver's threads allocate
//                         one at a time, and every arena is set up and touched at its first
//                         allocation (basic.sched: 356 page faults at start, 382 with 8 arenas).
//   oversize_threshold:0  no separate arena for allocations of 8 MiB and more, likewise: the
//                         allocation reserve (sim/Budget.cpp) would create it at start (377).
extern "C" {
// NOLINTNEXTLINE: the name is jemalloc's.
const char *malloc_conf = "narenas:1,oversize_threshold:0";
}
