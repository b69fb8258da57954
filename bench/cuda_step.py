#!/usr/bin/env python3
"""cuda_step.py [SCHEDC] [--prebuilt=EXE --mpirun=MPIRUN] — one training step of a stack of layers on one GPU.

`basic` with 8 layers, H = 8192, T = 4096, one micro-batch, SGD, on the cuda backend, at
bf16 (mixed precision: the issue's benchmark), TF32 and fp32. Prints each run's --stats
line: the step's achieved rate (GEMM FLOPs over the whole forward + backward + update on
the device) and cuBLAS's own H x H x H rate at the same precision, measured in the same
run, and for bf16 whether the step reaches the issue's target of 70% of it. Prints a line
and exits 0 where there is no GPU. A benchmark: it prints figures. --prebuilt runs EXE,
`basic` compiled with --cuda elsewhere (scripts/gpu-bundle.sh), started by MPIRUN."""
import re
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from stats_run import run_and_report  # noqa: E402

options = dict(arg[2:].split("=", 1) for arg in sys.argv[1:] if arg.startswith("--") and "=" in arg)
positional = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
schedc = positional[0] if positional else os.path.join(here, "..", "build", "bin", "schedc")
smi = shutil.which("nvidia-smi")
if not smi or not subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.startswith("GPU "):
    print("no GPU on this machine: nothing to measure")
    sys.exit(0)
print(subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.strip())
with tempfile.TemporaryDirectory() as tmp:
    exe = options.get("prebuilt") or os.path.join(tmp, "basic")
    if "prebuilt" not in options:
        subprocess.run([schedc, "build", "--cuda", os.path.join(here, "..", "examples", "puzzles", "basic.sched"),
                        "-o", exe], check=True)
    for label, extra in (("bf16", ["--precision=bf16"]), ("tf32", ["--tf32"]), ("fp32", [])):
        lines = run_and_report(f"{label}: 8 layers, H=8192 T=4096",
                               [options.get("mpirun", "mpirun"), "--allow-run-as-root", "-np", "1", exe, "--backend=cuda", "--hidden=8192",
                                "--tokens=4096", "-D", "layers=8", "-D", "batches=1", "--stats", *extra])
        share = [int(m.group(1)) for line in lines for m in [re.search(r"step (\d+)% of it", line)] if m]
        if label == "bf16" and share:
            print(f"  target: the step at >= 70% of cuBLAS's bf16 rate: {'met' if share[0] >= 70 else 'missed'} "
                  f"({share[0]}%)")
