#!/usr/bin/env python3
"""expect_exit.py N CMD... — runs CMD (passing its output through) and exits 0 only if CMD
exited with status N; otherwise says what it got and exits 1. lit's `not` only knows
"non-zero"; schedc's exit codes are documented and tested exactly."""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.call(sys.argv[2:])
if got != want:
    sys.stderr.write(f"expect_exit: expected exit status {want}, got {got}: {' '.join(sys.argv[2:])}\n")
    sys.exit(1)
