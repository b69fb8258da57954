#!/usr/bin/env python3
"""plan.py [SCHEDC] — the figures of `schedc plan` (docs/plan.md), each the median of three runs:

  1. Megatron 175B on 64 A100 80GB, global batch 64: the plan's wall time, what it searched,
     its winner, and schedc's own prediction for the paper's configuration (TP 8, PP 8,
     interleaved v = 3, SP + selective recomputation: Narayanan et al. 2021) beside it;
  2. Llama 3 70B on 64 H100, global batch 1024: the same (a fitting plan in 60 s or less);
  3. checks a second for 70B on 64 GPUs: every Megatron configuration with TP 8 and SP
     checked (--exhaustive), at global batches 64 and 256 (a check's work grows with the
     micro-batches of the step: 1024 sequences are 16 times 64's);
  4. the searched pipeline order at 1F1B's activation budget beside 1F1B (Llama 3 8B, TP 2
     with SP, 4 stages, 32 micro-batches).
Not a test: it prints figures (docs/performance.md quotes them)."""
import json
import statistics
import subprocess
import sys
import time

schedc = sys.argv[1] if len(sys.argv) > 1 else "build/bin/schedc"


def plan(args, runs=3):
    walls, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run([schedc, "plan", "--format=json"] + args, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        if out.returncode not in (0, 1):
            sys.exit(f"plan {' '.join(args)}: exit {out.returncode}\n{out.stderr}")
        result = json.loads(out.stdout)
    return result, statistics.median(walls)


def check(args):
    out = subprocess.run([schedc, "check", "--format=json"] + args, capture_output=True, text=True)
    return json.loads(out.stdout)


def summary(name, result, wall):
    n = result["counts"]
    best = result["best"]
    print(f"{name}: {wall:.2f} s wall ({result['wall_seconds']:.2f} s of search on {result['threads']} threads), "
          f"{n['enumerated']} configurations: {n['same_run']} the same run, {n['pruned_memory']} cannot fit, "
          f"{n['pruned_time']} bounded slower, {n['checked']} checked ({n['over_memory']} over memory); "
          f"{n['enumerated'] / result['wall_seconds']:.0f} configurations decided a second")
    if best:
        print(f"  best {best['configuration']}: {best['step_s']:.4g} s, MFU {100 * best['mfu']:.1f}%, "
              f"{best['peak_bytes'] / 2**30:.2f} GiB")
    return best


# 1. Megatron 175B
result, wall = plan(["--model=megatron-175b", "--hardware=dgx-a100-80gb", "--gpus=64", "--global-batch=64"])
best = summary("megatron-175b, 64 A100, batch 64", result, wall)
paper = check(["stdlib/megatron.sched", "-D", "ranks=8", "-D", "stages=8", "-D", "tensors=1", "-D", "chunks=3", "-D",
               "batches=64", "--model=megatron-175b", "--hardware=dgx-a100-80gb", "--model-set=tensor_parallel=8",
               "--model-set=sequence_parallel=true", "--model-set=recompute=selective"])
step = paper["hardware"]["step_seconds"]
print(f"  the paper's configuration (t=8 p=8 v=3 sp selective): {step:.4g} s, "
      f"{paper['max_bytes'] / 2**30:.2f} GiB; best / paper {best['step_s'] / step:.3f}")

# 1b. the same in mixed precision with Adam (as Megatron-LM trains it)
mixed = ["--precision=bf16", "--optimizer=adam"]
result, wall = plan(["--model=megatron-175b", "--hardware=dgx-a100-80gb", "--gpus=64", "--global-batch=64"] + mixed)
best = summary("megatron-175b, 64 A100, batch 64, bf16 + Adam", result, wall)
paper = check(["stdlib/megatron.sched", "-D", "ranks=8", "-D", "stages=8", "-D", "tensors=1", "-D", "chunks=3", "-D",
               "batches=64", "--model=megatron-175b", "--hardware=dgx-a100-80gb", "--model-set=tensor_parallel=8",
               "--model-set=sequence_parallel=true", "--model-set=recompute=selective"] + mixed)
step = paper["hardware"]["step_seconds"]
print(f"  the paper's configuration: {step:.4g} s, {paper['max_bytes'] / 2**30:.2f} GiB; "
      f"best / paper {best['step_s'] / step:.3f}")

# 2. Llama 3 70B
result, wall = plan(["--model=llama3-70b", "--hardware=dgx-h100", "--gpus=64", "--global-batch=1024"])
summary("llama3-70b, 64 H100, batch 1024", result, wall)

# 3. checks a second, 70B on 64 GPUs
for batch in (64, 256):
    result, wall = plan(["--model=llama3-70b", "--hardware=dgx-h100", "--gpus=64", f"--global-batch={batch}",
                         "--schedules=megatron", "--model-set=tensor_parallel=8", "--model-set=sequence_parallel=true",
                         "--exhaustive"], runs=1 if batch > 64 else 3)
    n = result["counts"]
    print(f"llama3-70b, 64 H100, batch {batch}, every megatron t=8 sp configuration checked: {n['checked']} checks "
          f"in {result['wall_seconds']:.2f} s, {n['checked'] / result['wall_seconds']:.0f} checks a second")

# 4. the searched order beside 1F1B
result, wall = plan(["--model=llama3-8b", "--hardware=dgx-h100", "--gpus=8", "--global-batch=32", "--precision=bf16",
                     "--optimizer=adam", "--model-set=tensor_parallel=2", "--model-set=sequence_parallel=true",
                     "--model-set=micro_batch=1", "--model-set=recompute=none", "--schedules=1f1b,zbsearch",
                     "--top=10"], runs=1)
for e in result["ranked"]:
    print(f"  {e['configuration']:40} {e['step_s']:.4f} s  {e['peak_bytes'] / 2**30:.2f} GiB")
