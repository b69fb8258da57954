#!/usr/bin/env python3
"""predicted_step.py [SCHEDC] — the hardware cost model's step time against the cpu backend's.

Calibrates this machine (`--calibrate`, 2 MPI ranks at H = 2048, T = 512: OpenBLAS GEMM
rate, the forward's and backward's other work, memory bandwidth, MPI latency and
all-reduce bandwidth; docs/costs.md), then runs ddp, zero3, gpipe and 1f1b from stdlib on
2 ranks, 4 layers, 4 micro-batches on the cpu backend with --hardware=that file,
five times each, and prints the predicted step, the median measured step (the first event's
start to the last's end, over both ranks) and their ratio. The issue's target: within 15%.
A benchmark, not a test: it prints figures."""
import os
import re
import statistics
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
schedc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "bin", "schedc")
stdlib = os.path.join(here, "..", "stdlib")
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "OPENBLAS_NUM_THREADS=1", "-np", "2"]
size = ["--hidden=2048", "--tokens=512"]
runs = 5


def step_times(output):
    predicted = re.search(r"^Step time: ([0-9.e+-]+) s", output, re.M)
    measured = re.search(r"^Measured step time: ([0-9.e+-]+) s", output, re.M)
    if not predicted or not measured:
        sys.exit("no step times in:\n" + output)
    return float(predicted.group(1)), float(measured.group(1))


with tempfile.TemporaryDirectory() as tmp:
    exes = {}
    for name in ("ddp", "zero3", "gpipe", "1f1b"):
        exes[name] = os.path.join(tmp, name)
        subprocess.run([schedc, "build", os.path.join(stdlib, name + ".sched"), "-o", exes[name]], check=True)
    hardware = os.path.join(tmp, "cpu.toml")
    subprocess.run(mpirun + [exes["ddp"], "--backend=cpu", "--calibrate=" + hardware] + size, check=True,
                   capture_output=True)
    print(open(hardware).read())
    print(f"{'schedule':10} {'predicted s':>12} {f'measured s (median of {runs})':>25} {'predicted/measured':>19}")
    for name, exe in exes.items():
        predicted, measured = None, []
        for _ in range(runs):
            run = subprocess.run(mpirun + [exe, "--backend=cpu", "--hardware=" + hardware, "-D", "ranks=2", "-D",
                                           "batches=4", "-D", "layers=4"] + size, capture_output=True, text=True)
            predicted, seconds = step_times(run.stdout)
            measured.append(seconds)
        median = statistics.median(measured)
        print(f"{name:10} {predicted:12.3f} {median:25.3f} {predicted / median:19.2f}")
