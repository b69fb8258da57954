#!/usr/bin/env python3
"""same_on_threads.py STATUS OUT CMD... — runs CMD with --threads=1, 2 and 8 (each within 60 s)
and fails unless the three exit with STATUS and print the same standard output and error,
byte for byte; writes the one-thread run's standard error, then its output, to OUT. threads.test runs the faults that used to hang the lanes with it."""
import subprocess
import sys

want, out, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
runs = {}
for threads in ("1", "2", "8"):
    try:
        done = subprocess.run(command + ["--threads=" + threads], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        sys.exit(f"same_on_threads: --threads={threads} runs past 60 s: {' '.join(command)}")
    runs[threads] = (done.returncode, done.stdout, done.stderr)
if runs["1"][0] != want:
    sys.exit(f"same_on_threads: expected exit status {want}, got {runs['1'][0]}: {' '.join(command)}")
for threads in ("2", "8"):
    if runs[threads] != runs["1"]:
        sys.exit(f"same_on_threads: --threads={threads} reports otherwise than --threads=1 "
                 f"(status {runs[threads][0]} against {runs['1'][0]}): {' '.join(command)}")
with open(out, "wb") as f:
    f.write(runs["1"][2] + runs["1"][1])
