#!/usr/bin/env python3
"""pipeline_formulas.py SCHEDC STDLIB

The standard library's pipeline schedules against the formulas of the papers they come
from, over a grid of stage counts p and micro-batch counts m, under
`--cost-model=compute-only` (communication free, so only the schedule's shape counts):

- GPipe and 1F1B are correct and their bubble fraction is (p - 1) / (m + p - 1);
- GPipe holds the activations of all m micro-batches on every stage; 1F1B's stage s
  holds at most min(p - s, m);
- ZB-H1 (zero bubble, split backward with B = W = half a backward, so F = B + W) has the
  bubble (p - 1)(F + B - W) / (m (F + B + W) + (p - 1)(F + B - W)) = (p - 1) / (2m + p - 1)
  when m >= p, below 1F1B's for every m when p > 1, while every stage holds min(p, m)
  micro-batches: the peak of 1F1B's stage 0, so the same peak in flight;
- under the puzzle cost model 1F1B's peak memory on stage 0 is never above GPipe's, and
  below it once m >= p + 4: 1F1B holds p micro-batches of activations plus the stage's
  gradient accumulators where GPipe holds m micro-batches of activations (the accumulators
  of a two-layer stage weigh as much as about two micro-batches of its activations, so
  with few extra micro-batches the two peaks coincide).

Prints one line per case and exits 1 on the first mismatch list."""
import json
import os
import subprocess
import sys

schedc, stdlib = sys.argv[1:3]
failures = []


def check(schedule, p, m, *extra):
    args = [schedc, "check", os.path.join(stdlib, schedule + ".sched"), "--format=json",
            "-D", f"ranks={p}", "-D", f"batches={m}", "-D", f"layers={2 * p}", *extra]
    run = subprocess.run(args, capture_output=True, text=True)
    document = json.loads(run.stdout)
    if run.returncode != 0 or document["verdict"] != "correct":
        failures.append(f"{schedule} p={p} m={m}: {document['verdict']} {document['diagnostics']}")
    return document


for p in (1, 2, 3, 4, 8):
    for m in (1, 2, 3, 4, 8, 16):
        expected_bubble = (p - 1) / (m + p - 1)
        gpipe = check("gpipe", p, m, "--cost-model=compute-only")
        one_f_one_b = check("1f1b", p, m, "--cost-model=compute-only")
        zbh1 = check("zbh1", p, m, "--cost-model=compute-only")
        zbh1_bubble = zbh1["bubble_fraction"]
        if m >= p and abs(zbh1_bubble - (p - 1) / (2 * m + p - 1)) > 1e-9:
            failures.append(f"zbh1 p={p} m={m}: bubble {zbh1_bubble}, expected {(p - 1) / (2 * m + p - 1)}")
        if p > 1 and not zbh1_bubble < one_f_one_b["bubble_fraction"]:
            failures.append(f"zbh1 p={p} m={m}: bubble {zbh1_bubble} not below 1f1b's")
        zbh1_in_flight = [r["peak_micro_batches_in_flight"] for r in zbh1["per_rank"]]
        if zbh1_in_flight != [min(p, m)] * p:
            failures.append(f"zbh1 p={p} m={m}: in flight {zbh1_in_flight}, expected {[min(p, m)] * p}")
        for name, doc, in_flight in (("gpipe", gpipe, [m] * p),
                                      ("1f1b", one_f_one_b, [min(p - s, m) for s in range(p)])):
            bubble = doc["bubble_fraction"]
            if bubble is None or abs(bubble - expected_bubble) > 1e-9:
                failures.append(f"{name} p={p} m={m}: bubble {bubble}, expected {expected_bubble}")
            measured = [r["peak_micro_batches_in_flight"] for r in doc["per_rank"]]
            if measured != in_flight:
                failures.append(f"{name} p={p} m={m}: in flight {measured}, expected {in_flight}")
        gpipe_memory = check("gpipe", p, m)["per_rank"][0]["peak_memory"]
        one_f_one_b_memory = check("1f1b", p, m)["per_rank"][0]["peak_memory"]
        if one_f_one_b_memory > gpipe_memory:
            failures.append(f"p={p} m={m}: 1f1b peak {one_f_one_b_memory} above gpipe {gpipe_memory}")
        if m >= p + 4 and not one_f_one_b_memory < gpipe_memory:
            failures.append(f"p={p} m={m}: 1f1b peak {one_f_one_b_memory} not below gpipe {gpipe_memory}")
        print(f"p={p} m={m}: bubble gpipe/1f1b/zbh1 {gpipe['bubble_fraction']:.6f} / "
              f"{one_f_one_b['bubble_fraction']:.6f} / {zbh1_bubble:.6f} "
              f"(expected {expected_bubble:.6f}); stage-0 peak memory gpipe {gpipe_memory}, 1f1b {one_f_one_b_memory}")

for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
