#!/usr/bin/env python3
"""within.py SECONDS CMD... — runs CMD, passing its output and exit status through, and
fails with 124 if it has not ended within SECONDS (it is killed then)."""
import subprocess
import sys

try:
    sys.exit(subprocess.run(sys.argv[2:], timeout=float(sys.argv[1])).returncode)
except subprocess.TimeoutExpired:
    sys.stderr.write(f"within: still running after {sys.argv[1]} s: {' '.join(sys.argv[2:])}\n")
    sys.exit(124)
