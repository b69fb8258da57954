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
  with few extra micro-batches the two peaks coincide);
- peak activation memory (activations and their gradients, A = one layer's activation of
  one micro-batch, c layers per stage): GPipe's stage s < p - 1 holds (m c + 1) A (every
  micro-batch's stage activations plus the output on its way out), its last stage
  m (c + 1) A (the output waits for the loss); 1F1B's stage s (min(p - s, m) c + 1) A;
- interleaved 1F1B with v chunks of c layers (Narayanan et al., 2021): correct for every m;
  when m is a multiple of p its bubble is (p - 1) / (v m + p - 1), for Megatron-LM's
  warm-up (slack 1) and the lean one (slack 0) alike, and rank r holds
  (min(w_r + 1, v m) c + 1) A of activations, w_r = (p - r - 1)(1 + slack) + (v - 1) p
  its warm-up forwards (for rank 0 with slack 1, p + (p - 1) / v micro-batches of stage
  activations: 1F1B's p times 1 + (p - 1) / (p v), the published figure; p > 1: on one rank
  the gradient one chunk hands the next waits in storage, one A more); its bubble is
  never above 1F1B's; with one chunk and slack 0 it is 1F1B, figure for figure;
- Breadth-First (Lamy-Poirier, 2022): bubble (p - 1) / (v m + p - 1) when m >= p, with all
  m micro-batches in flight on every stage, as GPipe.
- under `--cost-model=equal-phases` (T_F = T_B = T_W, communication free: the zero-bubble
  paper's idealisation; Qi et al. 2023, and the table of its authors' schedule comparison),
  with bubble rate = idle / useful time = b / (1 - b) of the bubble fraction b: 1F1B's is
  (p - 1) / m and ZB-H1's (p - 1) / (3m) when m >= p; ZB-V (2p chunks of one layer, V-shaped)
  has zero bubble when m >= 2p — every rank computes without a gap from its first operation
  to its last (the paper's parallelogram), so the whole step's bubble fraction is only the
  staggered start, (p - 1) / (6m + p - 1) — and passes exactly twice 1F1B's messages;
- DualPipeV (two chunks of one layer a rank, V-shaped; m >= 2p) holds at most
  ((p + 1) c + 1) A of activations on a rank, c = 2 its layers: PP + 1 micro-batches of a
  rank's layers against 1F1B's PP, the activation column of DualPipe's published table
  (github.com/deepseek-ai/DualPipe); and under equal phases (F = W = 1, a whole backward
  B = 2) its bubble column, (PP/2 - 1)(F&B + B - 3W) with PP/2 = p ranks: the most idle
  time of a rank from the first computation to the last, (p - 1)(F&B - 1), for the pair
  times F&B = 3, 2.5 and 2 (--overlap 0, 0.5 and 1: each `overlap` pair one block of
  max(F, B) + (1 - share) min(F, B)).

Prints one line per case and exits 1 on the first mismatch list."""
import csv
import json
import os
import subprocess
import sys
import tempfile

schedc, stdlib = sys.argv[1:3]
failures = []


A = 512 * 256


EVENTS = os.path.join(tempfile.mkdtemp(), "events.csv")


def rank_gaps(events, p):
    """Each rank's idle time between the start of its first computation and the end of its last."""
    gaps = []
    for r in range(p):
        rows = [row for row in csv.DictReader(open(events, newline=""))
                if row["rank"] == str(r) and row["typ"] in ("forward", "backward", "backward_input", "backward_weight")]
        span = max(float(x["time"]) + float(x["length"]) for x in rows) - min(float(x["time"]) for x in rows)
        gaps.append(round(span - sum(float(x["length"]) for x in rows), 9))
    return gaps


def check(schedule, p, m, *extra, layers=None):
    args = [schedc, "check", os.path.join(stdlib, schedule + ".sched"), "--format=json",
            "-D", f"ranks={p}", "-D", f"batches={m}", "-D", f"layers={layers or 2 * p}", *extra]
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
        gpipe_puzzle, one_f_one_b_puzzle = check("gpipe", p, m), check("1f1b", p, m)
        gpipe_memory = gpipe_puzzle["per_rank"][0]["peak_memory"]
        one_f_one_b_memory = one_f_one_b_puzzle["per_rank"][0]["peak_memory"]
        for name, doc, expected in (
                ("gpipe", gpipe_puzzle, [(m * 2 + 1) * A] * (p - 1) + [m * 3 * A]),
                ("1f1b", one_f_one_b_puzzle, [(min(p - s, m) * 2 + 1) * A for s in range(p)])):
            activations = [r["peak_activation_memory"] for r in doc["per_rank"]]
            if activations != expected:
                failures.append(f"{name} p={p} m={m}: peak activations {activations}, expected {expected}")
        if one_f_one_b_memory > gpipe_memory:
            failures.append(f"p={p} m={m}: 1f1b peak {one_f_one_b_memory} above gpipe {gpipe_memory}")
        if m >= p + 4 and not one_f_one_b_memory < gpipe_memory:
            failures.append(f"p={p} m={m}: 1f1b peak {one_f_one_b_memory} not below gpipe {gpipe_memory}")
        print(f"p={p} m={m}: bubble gpipe/1f1b/zbh1 {gpipe['bubble_fraction']:.6f} / "
              f"{one_f_one_b['bubble_fraction']:.6f} / {zbh1_bubble:.6f} "
              f"(expected {expected_bubble:.6f}); stage-0 peak memory gpipe {gpipe_memory}, 1f1b {one_f_one_b_memory}")

        # Interleaved 1F1B and Breadth-First: v chunks of 2 layers per rank.
        for v in (1, 2, 3):
            looped = (p - 1) / (v * m + p - 1)
            for slack in (0, 1):
                doc = check("interleaved", p, m, "--cost-model=compute-only", "-D", f"chunks={v}", "-D", f"slack={slack}",
                            layers=2 * p * v)
                label = f"interleaved p={p} m={m} v={v} slack={slack}"
                bubble = doc["bubble_fraction"]
                if m % p == 0 and abs(bubble - looped) > 1e-9:
                    failures.append(f"{label}: bubble {bubble}, expected {looped}")
                if bubble > one_f_one_b["bubble_fraction"] + 1e-9:
                    failures.append(f"{label}: bubble {bubble} above 1f1b's {one_f_one_b['bubble_fraction']}")
                warmup = [min((p - r - 1) * (1 + slack) + (v - 1) * p, v * m) for r in range(p)]
                expected = [(min(w + 1, v * m) * 2 + 1) * A for w in warmup]
                activations = [r["peak_activation_memory"] for r in doc["per_rank"]]
                if p > 1 and m % p == 0 and activations != expected:
                    failures.append(f"{label}: peak activations {activations}, expected {expected}")
            doc = check("breadth_first", p, m, "--cost-model=compute-only", "-D", f"chunks={v}", "-D", f"stages={p}",
                        layers=2 * p * v)
            if m >= p and abs(doc["bubble_fraction"] - looped) > 1e-9:
                failures.append(f"breadth_first p={p} m={m} v={v}: bubble {doc['bubble_fraction']}, expected {looped}")
            in_flight = [r["peak_micro_batches_in_flight"] for r in doc["per_rank"]]
            if in_flight != [m] * p:
                failures.append(f"breadth_first p={p} m={m} v={v}: in flight {in_flight}, expected {[m] * p}")
            print(f"p={p} m={m} v={v}: bubble interleaved/breadth-first {bubble:.6f} / "
                  f"{doc['bubble_fraction']:.6f} (expected {looped:.6f} when m is a multiple of p)")
        # The zero-bubble papers' equal phases.
        equal = "--cost-model=equal-phases"
        for name, expected in (("1f1b", (p - 1) / m), ("zbh1", (p - 1) / (3 * m))):
            b = check(name, p, m, equal)["bubble_fraction"]
            if m >= p and abs(b / (1 - b) - expected) > 1e-9:
                failures.append(f"{name} p={p} m={m} equal phases: bubble rate {b / (1 - b)}, expected {expected}")
        zbv = check("zbv", p, m, equal, "--events=" + EVENTS)
        gaps = rank_gaps(EVENTS, p)
        if m >= 2 * p and (gaps != [0] * p or abs(zbv["bubble_fraction"] - (p - 1) / (6 * m + p - 1)) > 1e-9):
            failures.append(f"zbv p={p} m={m} equal phases: gaps {gaps}, bubble {zbv['bubble_fraction']}, expected none "
                            f"and {(p - 1) / (6 * m + p - 1)}")
        volume = check("1f1b", p, m, equal)["communication_volume"]
        if zbv["communication_volume"] != 2 * volume:
            failures.append(f"zbv p={p} m={m}: communication {zbv['communication_volume']}, expected 2 x 1f1b's {volume}")
        if p > 1 and m >= 2 * p:
            dualpipev = check("dualpipev", p, m, "--cost-model=compute-only")
            most = max(r["peak_activation_memory"] for r in dualpipev["per_rank"])
            if most != ((p + 1) * 2 + 1) * A:
                failures.append(f"dualpipev p={p} m={m}: peak activations {most}, expected {((p + 1) * 2 + 1) * A}")
            for share in (0, 0.5, 1):
                doc = check("dualpipev", p, m, equal, f"--overlap={share}")
                busy = [r["compute_time"] for r in doc["per_rank"]]
                span = sum(busy) / (p * (1 - doc["bubble_fraction"]))
                idle, expected = max(span - b for b in busy), (p - 1) * ((3 - share) + 2 - 3)
                if abs(idle - expected) > 1e-9:
                    failures.append(f"dualpipev p={p} m={m} equal phases, F&B = {3 - share}: bubble {idle}, expected "
                                    f"(PP/2 - 1)(F&B + B - 3W) = {expected}")
            print(f"p={p} m={m}: dualpipev under equal phases, F&B = 2: bubble {idle} = (p - 1)(F&B + B - 3W)")
        print(f"p={p} m={m}: zbv under equal phases: idle between each rank's first and last computation {gaps}, "
              f"bubble {zbv['bubble_fraction']:.6f}")

        # One chunk and the lean warm-up: 1F1B itself, every figure equal.
        for extra in ([], ["--cost-model=compute-only"]):
            same = check("interleaved", p, m, "-D", "chunks=1", "-D", "slack=0", *extra)
            reference = check("1f1b", p, m, *extra)
            for key in ("timesteps", "max_memory", "bubble_fraction", "per_rank"):
                if same[key] != reference[key]:
                    failures.append(f"interleaved p={p} m={m} chunks=1 slack=0: {key} {same[key]} != 1f1b's {reference[key]}")

for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
