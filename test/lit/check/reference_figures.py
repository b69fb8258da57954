#!/usr/bin/env python3
"""reference_figures.py SCHEDC EXAMPLES REFERENCE

For every row of REFERENCE/puzzles.csv, runs `schedc check` on the example of that name
with the row's (layers, batches, ranks) and requires the printed `Correct!`, `Timesteps:`
and `Maximum Memory:` lines to be exactly what the original library printed (the row's
figures, digit for digit, with the original's trailing space). Then compares the full
per-event trace (`--events`) of each row with REFERENCE/traces/NAME_L*_B*_R*.csv: every
event's kind, layer, batches, start, length and memory sample must be identical."""
import csv
import os
import subprocess
import sys
import tempfile

schedc, examples, reference = sys.argv[1:4]
failures = 0
rows = list(csv.DictReader(open(os.path.join(reference, "puzzles.csv"), newline="")))
for row in rows:
    name = row["schedule"]
    source = os.path.join(examples, "puzzles", name + ".sched")
    args = [schedc, "check", source, "-D", "layers=" + row["layers"], "-D", "batches=" + row["batches"],
            "-D", "ranks=" + row["ranks"]]
    trace = os.path.join(reference, "traces", f"{name}_L{row['layers']}_B{row['batches']}_R{row['ranks']}.csv")
    with tempfile.TemporaryDirectory() as tmp:
        events = os.path.join(tmp, "events.csv")
        run = subprocess.run(args + ["--events=" + events], capture_output=True, text=True)
        expected = [
            "Correct!",
            f"Timesteps: {row['timesteps']} ",
            f"Maximum Memory: {row['max_memory']} at GPU: {row['gpu']} time: {row['time']}",
        ]
        got = run.stdout.split("\n")[:3]
        if run.returncode != 0 or got != expected:
            failures += 1
            print(f"FAIL {name}: exit {run.returncode}\n  expected {expected}\n  got      {got}\n{run.stderr}")
            continue
        want = [l.rstrip("\r\n") for l in open(trace, newline="")]
        have = [l.rstrip("\n") for l in open(events)]
        if want != have:
            failures += 1
            diff = next(i for i in range(min(len(want), len(have)) + 1)
                        if i >= len(want) or i >= len(have) or want[i] != have[i])
            print(f"FAIL {name}: trace differs at line {diff + 1}\n  reference {want[diff:diff+1]}\n  schedc    {have[diff:diff+1]}")
            continue
        print(f"ok   {name}: {got[1].strip()} | {got[2]} | {len(have) - 1} events identical")
print(f"{len(rows) - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
