#!/usr/bin/env python3
"""first_touch.py [MiB] — how fast this machine writes memory touched for the first time,
against memory written before (docs/costs.md, "The measured step is a warm one").

Maps MiB (default 256) of anonymous memory, in 4 KiB pages and then with MADV_HUGEPAGE,
copies a buffer into it once (every page faulted in and zeroed by the kernel first) and once
more (the pages there already), and prints both rates in GB/s. A virtual machine's first
touch can cost far more than its later writes; the cpu backend warms its memory before its
clock starts for that reason. A benchmark: it prints figures."""
import mmap
import sys
import time

size = (int(sys.argv[1]) if len(sys.argv) > 1 else 256) << 20
source = bytes(size)
source_view = memoryview(source)
for huge in (False, True):
    area = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge:
        area.madvise(mmap.MADV_HUGEPAGE)
    rates = []
    for _ in range(2):
        start = time.perf_counter()
        area[:] = source_view
        rates.append(size / (time.perf_counter() - start) / 1e9)
    area.close()
    print(f"{'huge pages' if huge else '4 KiB pages':12} first touch {rates[0]:6.2f} GB/s, again {rates[1]:6.2f} GB/s")
