"""stats_run.py — what the real-backend benchmarks share: run a compiled schedule with
--stats, then print its wall time and each rank's stats line."""
import subprocess
import sys
import time


def run_and_report(label, command):
    """Runs `command` (an mpirun line ending in the executable's options, --stats among
    them); exits with its stderr if it fails, else prints `label`, the wall time (start-up
    included) and every `schedc: stats:` line, and returns those lines."""
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"{label} failed:\n{run.stderr}")
    print(f"{label}: {wall:.2f} s wall (start-up included)")
    lines = [line[len("schedc: stats: "):] for line in run.stderr.splitlines() if line.startswith("schedc: stats:")]
    for line in lines:
        print("  " + line)
    return lines
