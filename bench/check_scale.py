#!/usr/bin/env python3
"""check_scale.py [SCHEDC] — how fast `schedc check` verifies large schedules.

Runs `schedc check` on ddp and fsdp with ranks = batches = 1024 and 32 layers, and on
gpipe with 64 stages and 256 micro-batches (the scale targets of the checker: each under
2 s and 1 GB on a 2-core machine). For each it prints the best wall time of three runs,
the events simulated, events per second, and the peak resident memory of the process.
A benchmark, not a test: it prints figures and fails only if schedc itself fails."""
import json
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
schedc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "bin", "schedc")
examples = os.path.join(here, "..", "examples", "puzzles")
cases = [
    ("ddp", ["-D", "layers=32", "-D", "batches=1024"]),
    ("fsdp", ["-D", "layers=32", "-D", "batches=1024"]),
    ("gpipe", ["-D", "layers=64", "-D", "ranks=64", "-D", "batches=256"]),
]

print(f"{'schedule':<8} {'ranks':>6} {'events':>9} {'seconds':>8} {'events/s':>11} {'peak RSS':>10}  verdict")
for name, params in cases:
    best, rss, doc = None, 0, None
    for _ in range(3):
        start = time.perf_counter()
        proc = subprocess.Popen([schedc, "check", os.path.join(examples, name + ".sched"), "--format=json"] + params,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.exit(f"schedc failed on {name} (exit {code})")
        doc = json.loads(out)
        best = elapsed if best is None else min(best, elapsed)
        rss = max(rss, usage.ru_maxrss)  # KiB on Linux
    print(f"{name:<8} {doc['ranks']:>6} {doc['events']:>9} {best:>8.2f} {doc['events'] / best:>11,.0f} "
          f"{rss / 1024:>7.0f} MiB  {doc['verdict']}")
