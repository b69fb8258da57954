#!/usr/bin/env python3
"""plan_claims.py SCHEDC — the claims of `schedc plan` (docs/plan.md), each checked on small
problems where every configuration can be checked:
  1. pruning never drops a winner: the plan's top K is the exhaustive search's (--exhaustive:
     every configuration checked), configuration for configuration and figure for figure,
     once the exhaustive list leaves out what the plan leaves out as the same run: a
     configuration with more recomputation and the same figures as its twin with less;
  2. the bounds are bounds: in the exhaustive runs no correct configuration's step or peak
     bytes comes out below its bound (plan/Bounds.cpp), and the search counted none;
  3. no ranked configuration is incorrect or over the memory it was given;
  4. every ranked configuration re-checks to the same figures: its `schedc check` line, run,
     says Correct with the same step and peak bytes — with a model file whose own settings
     (tensor parallelism, recomputation) the configurations differ from, too — and the
     ranking is the same on one thread as on three;
  5. where nothing fits, the plan exits 1 and says how much the least configuration needs;
  6. megatron with one replica is the same run as 1f1b (one chunk) or interleaved (more), so
     the plan leaves it to them: searched alone, each of its configurations has their figures;
  7. the searched pipeline order (zbsearch) under 1F1B's activation budget is never slower
     than 1F1B and never holds more, configuration for configuration; a searched winner's
     PyTorch file (--export) and its schedule (-o) re-check to the plan's figures, the file
     read as PyTorch's runtime runs it (its sends and receives added, ordered).
Exit 0 when every claim holds; each failure is printed."""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

schedc = sys.argv[1]
failures = []

# (what it tests, the plan's arguments): small models (layers cut) on up to 16 accelerators.
CASES = [
    ("data parallelism wins with room to spare",
     ["--model=llama3-8b", "--model-set=layers=8", "--hardware=dgx-h100", "--gpus=8", "--global-batch=16",
      "--precision=bf16", "--optimizer=adam"]),
    ("a tight cap: sharding, pipelines or tensor parallelism",
     ["--model=llama3-8b", "--model-set=layers=8", "--hardware=dgx-h100", "--gpus=8", "--global-batch=16",
      "--precision=bf16", "--optimizer=adam", "--memory-cap=9"]),
    ("pipeline families alone, across nodes",
     ["--model=megatron-22b", "--model-set=layers=16", "--hardware=dgx-a100-80gb", "--gpus=16", "--global-batch=32",
      "--precision=bf16", "--optimizer=adam", "--memory-cap=24",
      "--schedules=gpipe,1f1b,interleaved,zbh1,zbv,dualpipev,megatron"]),
    ("interleaving and accumulation with many micro-batches, fp32 gradients",
     ["--model=megatron-22b", "--model-set=layers=16", "--hardware=dgx-h100", "--gpus=16", "--global-batch=64",
      "--precision=bf16", "--grad-precision=fp32", "--optimizer=adam", "--memory-cap=30",
      "--schedules=gpipe,1f1b,interleaved,megatron,ddp,zero1"]),
    ("a mixture-of-experts model: expert parallelism (moe, ep groups) against whole layers",
     ["--model=mixtral-8x7b", "--model-set=layers=4", "--hardware=dgx-h100", "--gpus=8", "--global-batch=16",
      "--precision=bf16", "--optimizer=adam", "--memory-cap=40"]),
    ("dense first layers and multi-head latent attention (moe's dense_layers), across nodes",
     ["--model=deepseek-v3", "--model-set=layers=4", "--hardware=dgx-h100", "--gpus=16", "--global-batch=16",
      "--precision=bf16", "--optimizer=adam", "--schedules=1f1b,moe,dualpipev_moe"]),
    ("fp32, the check's default precision, with --headroom",
     ["--model=llama3-8b", "--model-set=layers=4", "--hardware=dgx-a100-80gb", "--gpus=4", "--global-batch=8",
      "--headroom=50"]),
]


def plan(args):
    run = subprocess.run([schedc, "plan", "--format=json", "--top=8"] + args, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        failures.append(f"plan {' '.join(args)}: exit {run.returncode}\n{run.stderr}")
        return None, run.returncode
    return json.loads(run.stdout), run.returncode


def recheck(name, command, entry):
    """Runs a `schedc check` line (a list): Correct, with `entry`'s step and peak bytes."""
    again = subprocess.run([schedc] + command[1:] + ["--format=json"], capture_output=True, text=True)
    report = json.loads(again.stdout) if again.stdout.startswith("{") else None
    if (again.returncode != 0 or report["verdict"] != "correct"
            or report["hardware"]["step_seconds"] != entry["step_s"] or report["max_bytes"] != entry["peak_bytes"]):
        failures.append(f"{name}: {entry['configuration']} re-checks to exit {again.returncode}, "
                        f"{report and (report['hardware']['step_seconds'], report['max_bytes'])}; the plan said "
                        f"{entry['step_s']} s, {entry['peak_bytes']} bytes: {' '.join(command)}\n{again.stderr}")


def recheck_ranked(name, result):
    """Each ranked configuration's `schedc check` line, run."""
    for e in result["ranked"]:
        if e["command"] is None:
            if e["schedule"] != "zbsearch":
                failures.append(f"{name}: {e['configuration']} has no command")
            continue
        recheck(name, shlex.split(e["command"]), e)


def figures(entry):
    return (entry["configuration"], entry["step_s"], entry["peak_bytes"], entry["fits"], entry["verdict"])


RECOMPUTATION = re.compile(r" (selective|full)(?= |$)")


def without_twins(ranked):
    """`ranked` less each configuration whose twin with less recomputation has its figures."""
    seen = {}
    kept = []
    for e in ranked:
        key = (RECOMPUTATION.sub("", e["configuration"]), e["step_s"], e["peak_bytes"])
        if key not in seen:
            seen[key] = e
            kept.append(e)
    return kept


exhaustively_checked = 0
for name, args in CASES:
    pruned, code = plan(args)
    every, every_code = plan(args + ["--exhaustive", "--top=1000"])
    if pruned is None or every is None:
        continue
    exhaustively_checked += every["counts"]["checked"]
    # 1. the same top K, the same winner
    if [figures(e) for e in pruned["ranked"]] != [figures(e) for e in without_twins(every["ranked"])[:8]]:
        failures.append(f"{name}: the pruned plan's top K differs from the exhaustive one's:\n  "
                        + "\n  ".join(f"{figures(a)} | {figures(b)}"
                                       for a, b in zip(pruned["ranked"], without_twins(every["ranked"]))))
    if code != every_code:
        failures.append(f"{name}: exit {code} pruned, {every_code} exhaustive")
    # 2. the bounds
    for result, how in ((pruned, "pruned"), (every, "exhaustive")):
        if result["counts"]["bound_violations"]:
            failures.append(f"{name} ({how}): {result['counts']['bound_violations']} bound violations")
    for e in every["ranked"] + every["not_ranked"]:
        if e["verdict"] != "correct":
            continue
        if e["step_s"] < e["step_bound_s"] * (1 - 1e-9):
            failures.append(f"{name}: {e['configuration']} steps {e['step_s']} s, below its bound {e['step_bound_s']}")
        if e["peak_bytes"] < e["peak_bytes_bound"] * (1 - 1e-9):
            failures.append(f"{name}: {e['configuration']} peaks at {e['peak_bytes']} bytes, below its bound "
                            f"{e['peak_bytes_bound']}")
    if every["counts"]["checked"] != every["counts"]["enumerated"]:
        failures.append(f"{name}: --exhaustive checked {every['counts']['checked']} of "
                        f"{every['counts']['enumerated']}")
    # 3. nothing ranked that is not a correct step that fits
    for e in pruned["ranked"]:
        if e["verdict"] != "correct" or not e["fits"] or e["peak_bytes"] > pruned["usable_bytes"]:
            failures.append(f"{name}: ranked {e['configuration']}: {e['verdict']}, fits {e['fits']}, "
                            f"{e['peak_bytes']} of {pruned['usable_bytes']} bytes")
    # 4. every ranked configuration, re-checked by its own command line (a searched one has
    # none: its order is written only for the winner, with --export)
    if pruned["best"] is None:
        failures.append(f"{name}: no winner")
    recheck_ranked(name, pruned)

# 4, with a model file's own settings, and on one thread and three
with tempfile.TemporaryDirectory() as folder:
    model = os.path.join(folder, "model.toml")
    with open(model, "w") as f:
        f.write('preset = "llama3-8b"\nlayers = 8\ntensor_parallel = 2\nrecompute = "full"\n')
    result, _ = plan([f"--model={model}", "--hardware=dgx-h100", "--gpus=8", "--global-batch=16", "--precision=bf16",
                      "--optimizer=adam"])
    if result:
        recheck_ranked("a model file's settings", result)
        if not any(e["tensor_parallel"] != 2 for e in result["ranked"]):
            failures.append("a model file's settings: no ranked configuration differs from the file's t = 2")
one, _ = plan(CASES[1][1] + ["--threads=1"])
three, _ = plan(CASES[1][1] + ["--threads=3"])
if one and three and [figures(e) for e in one["ranked"]] != [figures(e) for e in three["ranked"]]:
    failures.append("the ranking on one thread differs from the ranking on three")

# 5. nothing fits: exit 1, and the least configuration's need said (3 GiB: ZeRO-Infinity fits 5)
nothing = subprocess.run([schedc, "plan", "--model=llama3-8b", "--hardware=dgx-h100", "--gpus=8", "--global-batch=8",
                          "--memory-cap=3"], capture_output=True, text=True)
if nothing.returncode != 1 or "the least needs" not in nothing.stdout:
    failures.append(f"nothing fits: exit {nothing.returncode}, said:\n{nothing.stdout}{nothing.stderr}")

# 6. megatron with one replica against 1f1b and interleaved
twins = 0
for args in (["--model=llama3-8b", "--model-set=layers=8", "--hardware=dgx-h100", "--gpus=8", "--global-batch=16",
              "--precision=bf16", "--optimizer=adam"],
             ["--model=megatron-22b", "--model-set=layers=24", "--hardware=dgx-h100", "--gpus=8", "--global-batch=12"]):
    alone, _ = plan(args + ["--schedules=megatron", "--exhaustive", "--top=1000"])
    others, _ = plan(args + ["--schedules=1f1b,interleaved", "--exhaustive", "--top=1000"])
    if alone is None or others is None:
        continue
    named = {e["configuration"]: e for e in others["ranked"] + others["not_ranked"]}
    for e in alone["ranked"] + alone["not_ranked"]:
        if e["data_parallel"] != 1 or e["pipeline_parallel"] == 1:
            continue
        chunks = re.search(r" v=(\d+)", e["configuration"]).group(1)
        twin = (e["configuration"].replace("megatron", "1f1b").replace(" v=1 ", " ") if chunks == "1"
                else e["configuration"].replace("megatron", "interleaved"))
        other = named.get(twin)
        twins += 1
        if other is None or (other["step_s"], other["peak_bytes"], other["verdict"]) != (
                e["step_s"], e["peak_bytes"], e["verdict"]):
            failures.append(f"{e['configuration']}: {e['step_s']} s, {e['peak_bytes']} bytes; its twin {twin}: "
                            f"{other and (other['step_s'], other['peak_bytes'])}")
if twins < 50:
    failures.append(f"only {twins} megatron configurations of one replica were set beside their twins")

# 7. the searched order against 1F1B, same layout and model settings
compared = 0
for model, sequence in (("llama3-8b", 8192), ("llama3-8b", 4096), ("megatron-22b", 2048), ("megatron-22b", 1024)):
    for batch in (8, 32):
        for t in (1, 2, 4):
            result, _ = plan([f"--model={model}", f"--sequence={sequence}", "--hardware=dgx-h100", "--gpus=8",
                              f"--global-batch={batch}",
                              "--precision=bf16", "--optimizer=adam", f"--model-set=tensor_parallel={t}",
                              "--model-set=micro_batch=1", "--model-set=recompute=none", "--schedules=1f1b,zbsearch",
                              "--exhaustive", "--top=1000"])
            if result is None:
                continue
            every = result["ranked"] + result["not_ranked"]
            for one in (e for e in every if e["schedule"] == "1f1b"):
                p = one["pipeline_parallel"]
                same = [e for e in every if e["schedule"] == "zbsearch" and e["pipeline_parallel"] == p
                        and e["model_set"] == one["model_set"] and f"budget={p} " in e["configuration"]]
                if len(same) != 1:
                    failures.append(f"{model} batch {batch}: no searched order beside {one['configuration']}")
                    continue
                z = same[0]
                compared += 1
                if z["verdict"] != "correct" or z["step_s"] > one["step_s"] or z["peak_bytes"] > one["peak_bytes"]:
                    failures.append(f"{model} batch {batch}: {z['configuration']} {z['verdict']}, {z['step_s']} s, "
                                    f"{z['peak_bytes']} bytes against {one['configuration']}: {one['step_s']} s, "
                                    f"{one['peak_bytes']} bytes")
if compared < 10:
    failures.append(f"only {compared} searched orders were set beside 1F1B")

with tempfile.TemporaryDirectory() as folder:
    csv, sched = os.path.join(folder, "searched.csv"), os.path.join(folder, "searched.sched")
    args = ["--model=llama3-8b", "--hardware=dgx-h100", "--gpus=8", "--global-batch=32", "--precision=bf16",
            "--optimizer=adam", "--model-set=tensor_parallel=2", "--model-set=sequence_parallel=true",
            "--model-set=micro_batch=1", "--model-set=recompute=none", "--schedules=1f1b,zbsearch",
            f"--export={csv}", "-o", sched]
    result, code = plan(args)
    best = result and result["best"]
    if not best or best["schedule"] != "zbsearch":
        failures.append(f"searched winner: expected zbsearch to win, got {best and best['configuration']}")
    else:
        command = shlex.split(best["command"])
        recheck("the searched winner's file", command[:2] + [csv] + command[3:], best)
        recheck("the searched winner's schedule", command[:2] + [sched] + command[5:], best)  # less -D layers=

for f in failures:
    print("FAIL:", f)
print(f"{len(CASES)} plans against exhaustive search ({exhaustively_checked} configurations checked), {twins} megatron "
      f"twins, {compared} searched orders beside 1F1B: "
      f"{'all claims hold' if not failures else f'{len(failures)} failures'}")
sys.exit(1 if failures else 0)
