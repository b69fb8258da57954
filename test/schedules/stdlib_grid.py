#!/usr/bin/env python3
"""stdlib_grid.py SCHEDC STDLIB

Every schedule of the standard library checked across a grid of its parameters: each run
must print `Correct!`, exit 0 and print nothing on stderr (no warning either: a stdlib
schedule frees what it no longer needs).

Then the ZeRO paper's per-rank model-state accounting (Rajbhandari et al., 2020, section
5): with N ranks and a model of L layers, where one layer's weight, gradient and optimizer
state each weigh W = 512 * 512 units in the puzzle cost model, the memory a rank holds when
its first update starts (every activation freed, every gradient reduced) is the model
state: DDP (stage 0) holds 3 L W; ZeRO-1 (sharded optimizer state) 2 L W + L W / N; ZeRO-2
(and sharded gradients) L W + 2 L W / N; ZeRO-3 (and sharded weights) 3 L W / N, with or
without prefetching (fsdp_prefetch).

Megatron's 3D schedule with one tensor-parallel part is hybrid's schedule exactly (step,
peak memory, events); with model chunks on one replica, interleaved 1F1B's (step under
compute-only, peak memory).

The expert-parallel schedule (moe) computes what hybrid's data-parallel pipelines do: under
`--cost-model=compute-only` every rank's compute time is one of hybrid's on the same stages
and pipelines (a layer's dense part and its experts each half a layer, the experts on 1/E of
the group's tokens) and holds as many of its own micro-batches in flight; with every layer
dense (`dense_layers = layers`) it is hybrid's step, event for event. DualPipeV with expert
parallelism (dualpipev_moe) computes on every rank what dualpipev's rank at the same stage
does, its pairs interleaved layer by layer or not.

Last, activation recomputation's trade against ddp: under `--cost-model=compute-only` its
step is longer by exactly the recomputed forwards, (L - ceil(L / k)) * (B / N) steps for
segments of k layers; its peak memory is never above ddp's, and below it with 8 layers,
segments of 2 or 4 and 8 micro-batches per rank (where activations, not gradients, make
the peak). The same trade inside a pipeline stage (gpipe's re-materialization, `segment`):
every stage computes exactly m (n - ceil(n / k)) more layer forwards (n layers per stage)
and its peak activation memory is never above plain gpipe's, and below it once m >= 2 and
k >= 2 (with one micro-batch the recomputed segment can weigh what was saved).

DDP's buckets, on the puzzle's one clock: every bucket size gives bucket 1's step, peaks
and events (grouping changes when a collective is issued, not what is held)."""
import csv
import json
import os
import subprocess
import sys
import tempfile

schedc, stdlib = sys.argv[1:3]
failures = []
W = 512 * 512


def check(schedule, events=None, **params):
    args = [schedc, "check", os.path.join(stdlib, schedule + ".sched")]
    for name, value in params.items():
        args += ["-D", f"{name}={value}"]
    if events:
        args.append("--events=" + events)
    run = subprocess.run(args, capture_output=True, text=True)
    label = f"{schedule} {params}"
    if run.returncode != 0 or not run.stdout.startswith("Correct!\n") or run.stderr:
        failures.append(f"{label}: exit {run.returncode}\n{run.stdout}{run.stderr}")
    return label


grid = {
    "ddp": [dict(layers=l, batches=r * k, ranks=r, bucket=b) for l in (1, 4) for r in (1, 2, 4, 8) for k in (1, 2)
            for b in (1, 2, 3, 5)],
    "zero1": [dict(layers=l, batches=r * k, ranks=r) for l in (1, 4) for r in (1, 2, 4, 8) for k in (1, 2)],
    "zero2": [dict(layers=l, batches=r * k, ranks=r) for l in (1, 4) for r in (1, 2, 4, 8) for k in (1, 2)],
    "zero3": [dict(layers=l, batches=r * k, ranks=r) for l in (1, 4) for r in (1, 2, 4, 8) for k in (1, 2)],
    "zero_offload": [dict(layers=l, batches=r * k, ranks=r) for l in (1, 4) for r in (1, 2, 4, 8) for k in (1, 2)],
    "zero_infinity": [dict(layers=l, batches=r * k, ranks=r) for l in (1, 2, 4) for r in (1, 2, 4, 8) for k in (1, 2)],
    "fsdp_prefetch": [dict(layers=l, batches=r * k, ranks=r) for l in (1, 2, 4) for r in (1, 2, 4, 8) for k in (1, 2)],
    "gpipe": [dict(layers=p * c, batches=m, ranks=p, segment=k) for p in (1, 2, 4) for c in (1, 2, 3)
              for m in (1, 4, 8) for k in range(1, c + 1)],
    "1f1b": [dict(layers=p * c, batches=m, ranks=p) for p in (1, 2, 4) for c in (1, 2) for m in (1, 4, 8)],
    "recompute": [dict(layers=l, batches=r * k, ranks=r, segment=s) for l in (1, 4, 5) for r in (1, 4)
                  for k in (1, 2) for s in (1, 2, 3)],
    "zbh1": [dict(layers=p * c, batches=m, ranks=p) for p in (1, 2, 4) for c in (1, 2) for m in (1, 4, 8)],
    "zbv": [dict(layers=2 * p * c, batches=m, ranks=p) for p in (1, 2, 3, 4) for c in (1, 2)
            for m in (1, 2, 3, 5, 8, 9)],
    "dualpipev": [dict(layers=2 * p * c, batches=2 * p + k, ranks=p) for p in (1, 2, 3, 4, 5) for c in (1, 2)
                  for k in (0, 1, 2, 3, 7)],
    "hybrid": [dict(layers=s * c, batches=(r // s) * k, ranks=r, stages=s) for s in (1, 2, 4) for r in (s, 2 * s, 4 * s)
               for c in (1, 2) for k in (1, 3)],
    "interleaved": [dict(layers=p * v * c, batches=m, ranks=p, chunks=v, slack=s) for p in (1, 2, 3, 4)
                    for v in (1, 2, 3) for c in (1, 2) for m in (1, 3, 4, 5, 8, 9) for s in (0, 1)],
    "breadth_first": [dict(layers=s * v * c, batches=(r // s) * k, ranks=r, stages=s, chunks=v) for s in (1, 2, 4)
                      for r in (s, 2 * s) for v in (1, 2, 3) for c in (1, 2) for k in (1, 3, 4)],
    "megatron": [dict(layers=s * v * c, batches=d * k, ranks=d * s * t, stages=s, tensors=t, sequence=q, chunks=v,
                      distributed=o, partition=a)
                 for s in (1, 2) for t in (1, 2, 4) for d in (1, 2) for c in (1, 2) for k in (1, 2) for q in (0, 1)
                 for v in ((1, 2) if s > 1 else (1,)) for o in (0, 1)  # interleaving needs two stages
                 for a in ((0, 1) if q == 0 and t > 1 else (0,))],  # partitioned checkpoints: over tp, not beside sequence shards
    "moe": [dict(layers=s * c, batches=d * e * k, ranks=s * d * e, stages=s, experts=e, dense_layers=f)
            for s in (1, 2) for d in (1, 2) for e in (1, 2, 4) for c in (1, 2) for k in (1, 3) for f in (0, 1)],
    "dualpipev_moe": [dict(layers=2 * s * c, batches=d * e * m, ranks=s * d * e, stages=s, experts=e, dense_layers=f,
                           interleave=i)
                      for s in (1, 2, 3) for d in (1, 2) for e in (1, 2) for c in (1, 2) for m in (2 * s, 2 * s + 3)
                      for f in (0, 1) for i in (0, 1)],
}
runs = 0
for schedule, cases in grid.items():
    for params in cases:
        check(schedule, **params)
        runs += 1
print(f"{runs} stdlib runs across the grids, {len(failures)} failures")

with tempfile.TemporaryDirectory() as tmp:
    events = os.path.join(tmp, "events.csv")
    for layers in (2, 4):
        for ranks in (1, 2, 4, 8):
            for schedule, expected in (("ddp", 3 * layers * W), ("zero1", 2 * layers * W + layers * W / ranks),
                                       ("zero2", layers * W + 2 * layers * W / ranks), ("zero3", 3 * layers * W / ranks),
                                       ("fsdp_prefetch", 3 * layers * W / ranks),
                                       ("zero_offload", layers * W),  # (its state and gradients in host memory)
                                       ("zero_infinity", 0)):  # (all of it on NVMe, the update's in host memory)
                label = check(schedule, events, layers=layers, batches=ranks, ranks=ranks)
                rows = list(csv.DictReader(open(events, newline="")))
                for rank in range(ranks):
                    first_update = next(r for r in rows if r["rank"] == str(rank) and r["typ"] == "update")
                    state = float(first_update["memory"])
                    if state != expected:
                        failures.append(f"{label} rank {rank}: model state {state}, ZeRO accounting {expected}")
                print(f"{label}: model state per rank {state} (expected {expected})")

def figures(schedule, *extra, **params):
    args = [schedc, "check", os.path.join(stdlib, schedule + ".sched"), "--format=json", *extra]
    for name, value in params.items():
        args += ["-D", f"{name}={value}"]
    return json.loads(subprocess.run(args, capture_output=True, text=True).stdout)


# Off the device, in bytes (4 a unit): ZeRO-Infinity's NVMe holds each rank's shard of every
# layer's weight, optimizer state and gradient when the update begins (3 layers W / ranks),
# ZeRO-Offload's host memory its shard of the optimizer state and the gradients (2 layers W
# / ranks).
for layers in (2, 4):
    for ranks in (1, 2, 4, 8):
        for schedule, tier, expected in (("zero_infinity", "nvme", 3 * layers * W / ranks),
                                         ("zero_offload", "host", 2 * layers * W / ranks)):
            doc = figures(schedule, layers=layers, batches=ranks, ranks=ranks)
            held = [f[f"peak_{tier}_bytes"] for f in doc["per_rank"]]
            if held != [4 * expected] * ranks:
                failures.append(f"{schedule} layers={layers} ranks={ranks}: peak {tier} bytes {held}, "
                                f"expected {4 * expected:.0f} on every rank")
            print(f"{schedule} layers={layers} ranks={ranks}: peak {tier} bytes per rank {held[0]} "
                  f"(expected {4 * expected:.0f})")


# Megatron's 3D schedule without tensor parallelism is hybrid's dp x pipeline schedule:
# the same step and the same peak memory, event for event.
for s in (1, 2, 4):
    for d in (1, 2):
        params = dict(layers=2 * s, batches=2 * d, ranks=d * s, stages=s)
        hybrid, megatron = figures("hybrid", **params), figures("megatron", tensors=1, **params)
        for key in ("timesteps", "max_memory", "events"):
            if hybrid[key] != megatron[key]:
                failures.append(f"megatron tensors=1 {params}: {key} {megatron[key]}, hybrid's {hybrid[key]}")
        print(f"megatron tensors=1 {params}: step {megatron['timesteps']}, as hybrid's")
# With model chunks and one replica it is interleaved 1F1B (Megatron-LM's warm-up: slack
# 1): the same step when collectives are free (megatron still all-reduces its gradients
# over the one-rank dp group) and the same peak memory.
for s in (2, 4):
    for v in (2, 3):
        for b in (s, 2 * s, 3 * s, s + 1, 2 * s + 1):
            params = dict(layers=s * v, batches=b, chunks=v)
            inter = figures("interleaved", "--cost-model=compute-only", ranks=s, slack=1, **params)
            megatron = figures("megatron", "--cost-model=compute-only", tensors=1, ranks=s, stages=s, **params)
            for key in ("timesteps", "max_memory"):
                if inter[key] is None or inter[key] != megatron[key]:
                    failures.append(f"megatron tensors=1 stages={s} {params}: {key} {megatron[key]}, "
                                    f"interleaved's {inter[key]}")
            print(f"megatron tensors=1 stages={s} {params}: step {megatron['timesteps']}, as interleaved's")

for s in (1, 2):
    for d in (1, 2):
        for e in (2, 4):
            params = dict(layers=2 * s, batches=2 * d * e, ranks=s * d * e, stages=s)
            hybrid = figures("hybrid", "--cost-model=compute-only", **params)
            for f in (0, 1, 2 * s):
                moe = figures("moe", "--cost-model=compute-only", experts=e, dense_layers=f, **params)
                label = f"moe {params} experts={e} dense_layers={f}"
                mine = sorted(r["compute_time"] for r in moe["per_rank"])
                theirs = sorted(r["compute_time"] for r in hybrid["per_rank"])
                if mine != theirs:
                    failures.append(f"{label}: compute times {mine}, hybrid's {theirs}")
                flight = sorted(r["peak_micro_batches_in_flight"] for r in moe["per_rank"])
                if flight != sorted(r["peak_micro_batches_in_flight"] for r in hybrid["per_rank"]):
                    failures.append(f"{label}: micro-batches in flight {flight}, not hybrid's (its own, not the "
                                    "tokens dispatched to it)")
                if f == 2 * s and (moe["timesteps"], moe["max_memory"], moe["events"]) != (
                        hybrid["timesteps"], hybrid["max_memory"], hybrid["events"]):
                    failures.append(f"{label}: step {moe['timesteps']}, peak {moe['max_memory']}, events "
                                    f"{moe['events']}; hybrid's {hybrid['timesteps']}, {hybrid['max_memory']}, "
                                    f"{hybrid['events']}")
                print(f"{label}: compute {mine[-1]} a rank, as hybrid's; step {moe['timesteps']}")

# DualPipeV with expert parallelism computes, on every rank, what DualPipeV's rank at the
# same stage does on one pipeline's share, with its pairs interleaved or not.
for s in (1, 2, 3):
    for e in (2, 4):
        for i in (0, 1):
            params = dict(layers=4 * s, stages=s, experts=e, interleave=i)
            theirs = figures("dualpipev", "--cost-model=compute-only", layers=4 * s, batches=2 * s + 1, ranks=s)
            moe = figures("dualpipev_moe", "--cost-model=compute-only", batches=e * (2 * s + 1), ranks=s * e,
                          dense_layers=1, **params)
            label = f"dualpipev_moe {params}"
            mine = sorted(set(r["compute_time"] for r in moe["per_rank"]))
            expected = sorted(set(r["compute_time"] for r in theirs["per_rank"]))
            if mine != expected:
                failures.append(f"{label}: compute times {mine}, dualpipev's {expected}")
            print(f"{label}: compute {mine[-1]} a rank, as dualpipev's; step {moe['timesteps']}")

for layers in (4, 8):
    for share in (1, 2, 8):
        for segment in (1, 2, 3, 4):
            params = dict(layers=layers, batches=4 * share, ranks=4)
            ddp = figures("ddp", "--cost-model=compute-only", **params)
            rec = figures("recompute", "--cost-model=compute-only", segment=segment, **params)
            extra = (layers - -(-layers // segment)) * share
            if float(rec["timesteps"]) - float(ddp["timesteps"]) != extra:
                failures.append(f"recompute {params} segment={segment}: step {rec['timesteps']} vs ddp "
                                f"{ddp['timesteps']}, expected {extra} more")
            if rec["max_memory"] > ddp["max_memory"]:
                failures.append(f"recompute {params} segment={segment}: peak {rec['max_memory']} above ddp's")
            if layers == 8 and share == 8 and segment in (2, 4) and not rec["max_memory"] < ddp["max_memory"]:
                failures.append(f"recompute {params} segment={segment}: peak {rec['max_memory']} not below ddp's")
            print(f"recompute {params} segment={segment}: +{extra} steps, peak {rec['max_memory']} vs {ddp['max_memory']}")

for p in (1, 2, 4):
    for n in (2, 3, 4):
        for m in (1, 2, 8):
            params = dict(layers=p * n, batches=m, ranks=p)
            plain = figures("gpipe", "--cost-model=compute-only", **params)
            for k in range(2, n + 1):
                rem = figures("gpipe", "--cost-model=compute-only", segment=k, **params)
                extra = m * (n - -(-n // k))
                for a, b in zip(plain["per_rank"], rem["per_rank"]):
                    label = f"gpipe {params} segment={k} rank {a['rank']}"
                    if b["compute_time"] - a["compute_time"] != extra:
                        failures.append(f"{label}: compute {b['compute_time']} vs {a['compute_time']}, "
                                        f"expected {extra} more")
                    if b["peak_activation_memory"] > a["peak_activation_memory"]:
                        failures.append(f"{label}: activations {b['peak_activation_memory']} above plain gpipe's")
                    if m >= 2 and not b["peak_activation_memory"] < a["peak_activation_memory"]:
                        failures.append(f"{label}: activations {b['peak_activation_memory']} not below plain gpipe's")
                print(f"gpipe {params} segment={k}: +{extra} forwards per stage, stage-0 activations "
                      f"{rem['per_rank'][0]['peak_activation_memory']} vs {plain['per_rank'][0]['peak_activation_memory']}")

# DDP's buckets (ddp's `bucket`, each a `group` of all-reduces) change when a collective is
# issued, not what a rank holds or, on the puzzle's one clock (0.3 a collective, grouped or
# not), its step: every bucket size gives bucket 1's step, peaks and events.
for layers in (1, 4, 5):
    for ranks in (1, 2, 4):
        params = dict(layers=layers, batches=2 * ranks, ranks=ranks)
        one = figures("ddp", bucket=1, **params)
        for bucket in (2, 3, layers):
            other = figures("ddp", bucket=bucket, **params)
            keys = ("timesteps", "max_memory", "max_bytes", "events")
            if [one[k] for k in keys] != [other[k] for k in keys]:
                failures.append(f"ddp {params} bucket={bucket}: {[other[k] for k in keys]} against bucket 1's "
                                f"{[one[k] for k in keys]}")
        print(f"ddp {params}: buckets 2, 3, {layers} as bucket 1 (step {one['timesteps']})")

for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
