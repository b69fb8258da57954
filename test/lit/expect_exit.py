#!/usr/bin/env python3
"""expect_exit.py N[,M...] CMD... — runs CMD (passing its output through) and exits 0 only if
CMD exited with status N (or one of the listed statuses, where what a machine allows decides
between two documented outcomes); otherwise says what it got and exits 1. lit's `not` only
knows "non-zero"; schedc's exit codes are documented and tested exactly."""
import subprocess
import sys

want = {int(code) for code in sys.argv[1].split(",")}
got = subprocess.call(sys.argv[2:])
if got not in want:
    sys.stderr.write(f"expect_exit: expected exit status {sys.argv[1]}, got {got}: {' '.join(sys.argv[2:])}\n")
    sys.exit(1)
