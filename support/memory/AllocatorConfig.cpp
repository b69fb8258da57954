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
//                         allocation (page faults at start).
//   oversize_threshold:0  no separate arena for allocations of 8 MiB and more, likewise: the
//                         allocation reserve (engine/Budget.cpp) would create it at start.
//   slab_sizes:1-4096:8   slabs of 8 pages for every small size class: a check's values (a
//                         value and its count share one 128-byte block) outlive the thread
//                         cache, which refills from a fresh slab every 32 of them with the
//                         default 1-page slab. Pages of a slab no block has used are never
//                         touched, so resident memory does not grow.
// The figures behind each are in docs/performance.md, "Figures behind design choices".
extern "C" {
// NOLINTNEXTLINE: the name is jemalloc's.
const char *malloc_conf = "narenas:1,oversize_threshold:0,slab_sizes:1-4096:8";
}
