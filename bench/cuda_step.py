#!/usr/bin/env python3
"""cuda_step.py [SCHEDC] — one training step of a stack of layers on one GPU.

`basic` with 8 layers, H = 8192, T = 4096, one micro-batch, SGD, on the cuda backend, in
fp32 and with --tf32. Prints each run's --stats line: the step's achieved rate (GEMM FLOPs
over the whole forward + backward + update on the device) and cuBLAS's own H x H x H rate
measured in the same run. The issue's target is at least 70% of cuBLAS's rate at bf16,
which this backend does not have yet (see docs/cuda.md); until it does the figures are
fp32/TF32. Prints a line and exits 0 where there is no GPU. A benchmark: it prints figures."""
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from stats_run import run_and_report  # noqa: E402

schedc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "bin", "schedc")
smi = shutil.which("nvidia-smi")
if not smi or not subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.startswith("GPU "):
    print("no GPU on this machine: nothing to measure")
    sys.exit(0)
print(subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.strip())
with tempfile.TemporaryDirectory() as tmp:
    exe = os.path.join(tmp, "basic")
    subprocess.run([schedc, "build", "--cuda", os.path.join(here, "..", "examples", "puzzles", "basic.sched"), "-o",
                    exe], check=True)
    for extra in ([], ["--tf32"]):
        run_and_report(f"{'tf32' if extra else 'fp32'}: 8 layers, H=8192 T=4096",
                       ["mpirun", "--allow-run-as-root", "-np", "1", exe, "--backend=cuda", "--hidden=8192",
                        "--tokens=4096", "-D", "layers=8", "-D", "batches=1", "--stats", *extra])
