#!/usr/bin/env python3
"""readme_test_command.py README CI_RUN

The README's test command (the second line of its first ```sh block, its comment dropped)
must be the command .ci/run runs (its last line): CI runs what the README tells users to
run. Prints both; exits 1 when they differ or either is missing."""
import re
import sys

readme, ci_run = (open(p).read() for p in sys.argv[1:3])
block = re.search(r"^```sh\n(.*?)^```", readme, re.S | re.M)
lines = block.group(1).splitlines() if block else []
readme_command = lines[1].split("#")[0].strip() if len(lines) > 1 else ""
ci_lines = [line.strip() for line in ci_run.splitlines() if line.strip() and not line.startswith("#")]
ci_command = ci_lines[-1] if ci_lines else ""
print(f"README's test command: {readme_command!r}; .ci/run runs: {ci_command!r}")
if not readme_command or readme_command != ci_command:
    sys.exit("they differ: update the README or .ci/run")
