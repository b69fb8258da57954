#!/usr/bin/env python3
"""hardware_claims.py SCHEDC STDLIB

The hardware cost model's claims about real schedules, each checked on the figures
`schedc check --format=json` prints (docs/costs.md):
1. Pipelines on a DGX H100 with a 70B-class model (Llama 3 70B, FlashAttention, bf16,
   Adam), p = 8 stages and m = 32 micro-batches: ZB-H1 and interleaved 1F1B take a shorter
   step than 1F1B, and 1F1B holds less memory than GPipe at its fullest rank.
2. Data parallelism on one DGX H100 node (Llama 3 8B, 8 ranks): DDP's all-reduces overlap
   the backward — the compute stream is idle for under 15% of the time the collectives
   stream is busy (what remains is the last layer's collective, with the embedding's 0.5 B
   parameters, which no compute follows), and links 1000 times faster shorten the step by
   under 1% — and FSDP with
   prefetching (stdlib/fsdp_prefetch) hides its all-gathers the same way, where ZeRO-3
   without it (stdlib/zero3, whose backward gathers wait behind the reduce-scatters on the
   one collectives stream) leaves most of them exposed.
3. The model responds to what it models: links 100 times slower lengthen every step.
4. Tensor parallelism written in the schedule (stdlib/megatron, tensors = 8, no sequence
   parallelism; Megatron 175B, 8 stages, DGX A100) holds per GPU what the model-level
   account (1f1b with tensor_parallel = 8, Korthikanti et al.'s formulas) predicts, within
   3%; with sequence parallelism, less.
5. Interleaved stages in stdlib/megatron (Megatron 175B, p = 8, t = 8, v = 2 and 3 model
   chunks per stage): a shorter step than without, and the first stage's extra activation
   bytes are Korthikanti et al.'s (p - 1)/(p v) of the L layers' activations, within 1%.
6. The distributed optimizer in stdlib/megatron (Megatron 175B, 2 replicas): the first
   stage's peak drops by exactly the half of its optimizer state a replica no longer keeps.
7. The two spellings of tensor parallelism time the same step: stdlib/megatron with
   tensors = 8 in the schedule against tensor_parallel = 8 in the model (Megatron 22B on one
   stage, 175B on 8, the latter also with full recomputation; with and without sequence
   parallelism), within 1% — each of the
   schedule's activation collectives stands for a layer's two (after attention and after
   the MLP), and its sequence shards put the norms and residual adds on 1/t of the
   sequence, as the model's Megatron-LM traffic does.
8. Recomputation by its name on any schedule (recompute = full in the model): FSDP with
   activation checkpointing (stdlib fsdp_prefetch and zero3) and 1F1B keep only each
   layer's input — Llama 3 8B on 8 H100, one micro-batch per rank: FSDP's peak holds exactly
   32 checkpoints of 2sbh bytes — and pay for it with a longer step.
9. Megatron's tied embedding under pipeline parallelism (Megatron 175B, tied, 8 stages x
   tensor parallelism 8 in stdlib/megatron): the last stage keeps its own copy of the word
   embedding for the output layer, so every rank holds exactly what the untied model's
   does; the first and last stage all-reduce its gradient before their updates, so the step
   is longer; on one stage the tied model holds one copy, less than the untied one."""
import json
import os
import subprocess
import sys

schedc, stdlib = sys.argv[1:3]
failures = 0


def report(ok, what):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + what)


def check(schedule, model, ranks, batches, *extra):
    args = [schedc, "check", os.path.join(stdlib, schedule + ".sched"), "--format=json", "--model=" + model,
            "--model-set=flash_attention=true", "--hardware=dgx-h100", "--precision=bf16", "--optimizer=adam",
            "-D", f"ranks={ranks}", "-D", f"batches={batches}", *extra]
    run = subprocess.run(args, capture_output=True, text=True)
    doc = json.loads(run.stdout)
    if not doc.get("correct"):
        report(False, f"{schedule}: not correct: {run.stderr[-300:]}")
    return doc


pipelines = {s: check(s, "llama3-70b", 8, 32) for s in ("gpipe", "1f1b", "interleaved", "zbh1")}
step = {s: d["hardware"]["step_seconds"] for s, d in pipelines.items()}
for s in ("zbh1", "interleaved"):
    report(step[s] < step["1f1b"], f"{s} steps in {step[s]:.3f} s, ahead of 1f1b's {step['1f1b']:.3f} s")
report(pipelines["1f1b"]["max_bytes"] < pipelines["gpipe"]["max_bytes"],
       f"1f1b holds {pipelines['1f1b']['max_bytes'] / 1e9:.1f} GB, below gpipe's "
       f"{pipelines['gpipe']['max_bytes'] / 1e9:.1f} GB")

faster = ["--hardware-set=intra_node_bandwidth_gbs=1e6", "--hardware-set=intra_node_latency_us=0"]
slower = ["--hardware-set=intra_node_bandwidth_gbs=4.5"]
for schedule, hidden in (("ddp", True), ("fsdp_prefetch", True), ("zero3", False)):
    doc = check(schedule, "llama3-8b", 8, 8)
    rank = doc["hardware"]["per_rank"][0]
    exposed = rank["compute_idle"] / rank["collectives_busy"]
    ok = exposed < 0.15 if hidden else exposed > 0.5
    report(ok, f"{schedule}: compute idle {rank['compute_idle'] * 1e3:.1f} ms while collectives run "
               f"{rank['collectives_busy'] * 1e3:.1f} ms ({100 * exposed:.0f}%: {'hidden' if hidden else 'exposed'})")
    seconds = doc["hardware"]["step_seconds"]
    fast = check(schedule, "llama3-8b", 8, 8, *faster)["hardware"]["step_seconds"]
    if hidden:
        report((seconds - fast) / seconds < 0.01,
               f"{schedule}: links 1000x faster shorten the step from {seconds:.4f} to {fast:.4f} s (< 1%)")
    slow = check(schedule, "llama3-8b", 8, 8, *slower)["hardware"]["step_seconds"]
    report(slow > 1.5 * seconds, f"{schedule}: links 100x slower lengthen the step from {seconds:.4f} to {slow:.4f} s")

def peak_bytes(schedule, *extra):
    args = [schedc, "check", os.path.join(stdlib, schedule + ".sched"), "--format=json", "--model=megatron-175b",
            "--hardware=dgx-a100-80gb", "--precision=bf16", "--optimizer=adam", "-D", "batches=32", *extra]
    doc = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    return doc["max_bytes"] if doc.get("correct") else float("nan")


model_level = peak_bytes("1f1b", "--model-set=tensor_parallel=8", "-D", "ranks=8")
mesh = ["-D", "ranks=64", "-D", "stages=8", "-D", "tensors=8"]
written = peak_bytes("megatron", *mesh, "-D", "sequence=0")
sequence = peak_bytes("megatron", *mesh, "-D", "sequence=1")
report(abs(written / model_level - 1) < 0.03,
       f"megatron 175B, tensor parallelism in the schedule: {written / 1e9:.1f} GB per GPU, "
       f"the model-level account {model_level / 1e9:.1f} GB")
report(sequence < written, f"with sequence parallelism: {sequence / 1e9:.1f} GB per GPU")


def megatron_175b(chunks):
    args = [schedc, "check", os.path.join(stdlib, "megatron.sched"), "--format=json", "--model=megatron-175b",
            "--hardware=dgx-a100-80gb", "--precision=bf16", "--optimizer=adam", "-D", "batches=32", *mesh,
            "-D", "sequence=0", "-D", f"chunks={chunks}"]
    return json.loads(subprocess.run(args, capture_output=True, text=True).stdout)


# Interleaving (Narayanan et al. 2021): v model chunks per stage shrink the bubble, and the
# first stage keeps (1 + (p - 1)/(p v)) times the activations of 1F1B's p micro-batches
# (Korthikanti et al. 2022, section 4.2.3). One layer of one micro-batch keeps
# sbh(10 + 24/t + 5as/(ht)) bytes (their Table 2, tensor parallelism only).
p, layers, seq, hidden, heads = 8, 96, 2048, 12288, 96
per_layer = seq * hidden * (10 + 24 / 8 + 5 * heads * seq / (hidden * 8))
plain = megatron_175b(1)
for v in (2, 3):
    inter = megatron_175b(v)
    if not inter.get("correct"):
        report(False, f"megatron 175B with {v} chunks per stage is not correct")
        continue
    report(inter["hardware"]["step_seconds"] < plain["hardware"]["step_seconds"],
           f"megatron 175B, {v} model chunks per stage: step {inter['hardware']['step_seconds']:.3f} s, "
           f"without {plain['hardware']['step_seconds']:.3f} s")
    extra, expected = inter["max_bytes"] - plain["max_bytes"], layers * per_layer * (p - 1) / (p * v)
    report(abs(extra / expected - 1) < 0.01,
           f"  and keeps {extra / 1e9:.2f} GB more activations on the first stage; (p - 1)/(p v) of L layers' "
           f"is {expected / 1e9:.2f} GB")

# The distributed optimizer (megatron `distributed = 1`) on d = 2 replicas: each GPU keeps
# the optimizer state (fp32 master and two Adam moments, 12 bytes a parameter) of 1/d of
# its part, so the first stage's peak drops by 12 (1 - 1/d) bytes per parameter it holds:
# a GPT layer's 12h² + 13h (matrices, biases, two LayerNorms) for each of its L/p layers
# and the token and position embeddings (Vh + sh), split t = 8 ways in the schedule.
def megatron_175b_dp2(distributed):
    args = [schedc, "check", os.path.join(stdlib, "megatron.sched"), "--format=json", "--model=megatron-175b",
            "--hardware=dgx-a100-80gb", "--precision=bf16", "--optimizer=adam", "-D", "batches=32",
            "-D", "ranks=128", "-D", "stages=8", "-D", "tensors=8", "-D", "sequence=0", "-D", f"distributed={distributed}"]
    doc = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    return doc["max_bytes"] if doc.get("correct") else float("nan")


stage_parameters = (layers // p * (12 * hidden * hidden + 13 * hidden) + 51200 * hidden + seq * hidden) / 8
saved = megatron_175b_dp2(0) - megatron_175b_dp2(1)
expected = 12 * (1 - 1 / 2) * stage_parameters
report(abs(saved / expected - 1) < 1e-6,
       f"megatron 175B on 2 replicas, the distributed optimizer saves {saved / 1e9:.3f} GB per GPU of the first "
       f"stage; 12 (1 - 1/d) bytes a parameter of its part is {expected / 1e9:.3f} GB")


def megatron_step(model, stages, tensors, sequence, model_tp, recompute="none"):
    args = [schedc, "check", os.path.join(stdlib, "megatron.sched"), "--format=json", "--model=" + model,
            "--hardware=dgx-a100-80gb", "--precision=bf16", "--optimizer=adam", "-D", "batches=16",
            "-D", f"ranks={stages * tensors}", "-D", f"stages={stages}", "-D", f"tensors={tensors}",
            "-D", f"sequence={sequence if tensors > 1 else 0}", f"--model-set=recompute={recompute}"]
    if model_tp > 1:
        args += [f"--model-set=tensor_parallel={model_tp}", f"--model-set=sequence_parallel={str(bool(sequence)).lower()}"]
    doc = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    return doc["hardware"]["step_seconds"] if doc.get("correct") else float("nan")


for model, stages, recompute in (("megatron-22b", 1, "none"), ("megatron-175b", 8, "none"),
                                 ("megatron-175b", 8, "full")):
    for sequence in (0, 1):
        in_schedule = megatron_step(model, stages, 8, sequence, 1, recompute)
        in_model = megatron_step(model, stages, 1, sequence, 8, recompute)
        report(abs(in_schedule / in_model - 1) < 0.01,
               f"{model}, {stages} stage(s), tensor parallelism 8{' with sequence parallelism' if sequence else ''}, "
               f"recompute {recompute}: {in_schedule:.4f} s in the schedule, {in_model:.4f} s in the model")

checkpoint = 2 * 8192 * 4096  # 2sbh bytes: one bf16 layer input of Llama 3 8B, s = 8192, b = 1
for schedule in ("fsdp_prefetch", "zero3", "1f1b"):
    kept, recomputed = (check(schedule, "llama3-8b", 8, 8, f"--model-set=recompute={r}")["hardware"]
                        for r in ("none", "full"))
    held = [h["peak_breakdown"]["activations"] for h in (kept, recomputed)]
    exact = schedule == "1f1b" or held[1] == 32 * checkpoint
    report(held[1] < held[0] and exact and recomputed["step_seconds"] > kept["step_seconds"],
           f"{schedule} with recompute = full: activations {held[0] / 2**30:.2f} -> {held[1] / 2**30:.2f} GiB"
           f"{' (32 checkpoints of 2sbh)' if schedule != '1f1b' else ''}, step {kept['step_seconds']:.3f} -> "
           f"{recomputed['step_seconds']:.3f} s")

def megatron_ranks(stages, tied):
    args = [schedc, "check", os.path.join(stdlib, "megatron.sched"), "--format=json", "--model=megatron-175b",
            "--hardware=dgx-a100-80gb", "--precision=bf16", "--optimizer=adam", "-D", "batches=16",
            "-D", f"ranks={stages * 8}", "-D", f"stages={stages}", "-D", "tensors=8", "-D", "sequence=1",
            f"--model-set=tied_embeddings={str(tied).lower()}"]
    doc = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    return [r["peak_bytes"] for r in doc["per_rank"]], doc["hardware"]["step_seconds"]


(tied, tied_step), (untied, untied_step) = megatron_ranks(8, True), megatron_ranks(8, False)
report(tied == untied and tied_step > untied_step,
       f"megatron 175B, 8 stages, tied embedding: the last stage holds {tied[-1] / 2**30:.2f} GiB, as untied "
       f"({untied[-1] / 2**30:.2f}); the embedding's all-reduce: step {untied_step:.4f} -> {tied_step:.4f} s")
(one_tied, _), (one_untied, _) = megatron_ranks(1, True), megatron_ranks(1, False)
report(one_tied[0] < one_untied[0],
       f"one stage: the tied embedding held once, {one_tied[0] / 2**30:.2f} GiB against {one_untied[0] / 2**30:.2f}")

print("all passed" if not failures else f"{failures} failed")
sys.exit(1 if failures else 0)
