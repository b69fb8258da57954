#!/usr/bin/env python3
"""cpu_step.py [SCHEDC] — one training step of ddp and fsdp on the cpu backend.

H = 2048, T = 512, 4 layers, 2 ranks (2 micro-batches), one MPI process per rank with one
BLAS thread each. Prints, per rank, the GFLOP/s the step's forward/backward GEMMs reached,
the BLAS's own cblas_sgemm rate at 2048 x 2048 measured in the same run, the ratio (the
target is at least 80%), and the seconds spent in MPI. A benchmark: it prints figures."""
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from stats_run import run_and_report  # noqa: E402

schedc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "bin", "schedc")
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "OPENBLAS_NUM_THREADS=1"]
with tempfile.TemporaryDirectory() as tmp:
    for name in ("ddp", "fsdp"):
        exe = os.path.join(tmp, name)
        subprocess.run([schedc, "build", os.path.join(here, "..", "examples", "puzzles", name + ".sched"), "-o", exe],
                       check=True)
        run_and_report(f"{name}: step on 2 ranks, H=2048 T=512, 4 layers",
                       mpirun + ["-np", "2", exe, "--backend=cpu", "--hidden=2048", "--tokens=512", "-D", "layers=4",
                                 "-D", "batches=2", "--stats"])
