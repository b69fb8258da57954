#!/usr/bin/env python3
"""megatron_memory.py [SCHEDC] — Megatron-LM's configurations with tensor parallelism, as schedc predicts them.

For the GPT models of Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", Table 3: 22B, 175B, 530B and 1T, sequence 2048, micro-batch 1,
tensor-parallel size 8, pipeline-parallel sizes 1, 8, 35 and 64), runs stdlib 1f1b with
`--model=megatron-* --model-set=tensor_parallel=8` on the DGX A100 80 GB preset (bf16,
Adam) twice: tensor parallelism alone, and with sequence parallelism and selective
recomputation (`sequence_parallel`, `recompute = "selective"`). It prints, per accelerator of the
first stage (the fullest: 1F1B keeps p micro-batches there), schedc's predicted peak bytes
beside what the paper's formulas give for it — 16 bytes per parameter of the stage / t
(bf16 weight and gradient, fp32 master and two moments) plus p micro-batches of L/p
layers' activations, sbh(10 + 24/t + 5as/(ht)) each, or 34sbh/t — and the predicted step
time, MFU and HFU (which counts the recomputed attention scores). The micro-batches per step are this script's choice (4 per stage, m = 4p;
the paper's global batches are not used), so the step includes a 1F1B bubble of
(p - 1)/(m + p - 1).
A benchmark, not a test: it prints figures (the activation formulas are tested in
test/unit/TransformerTest.cpp)."""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
schedc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "bin", "schedc")
stdlib = os.path.join(here, "..", "stdlib")

# name, heads, hidden, layers, pipeline size (Korthikanti et al. 2022, Table 3)
configs = [
    ("megatron-22b", 64, 6144, 48, 1),
    ("megatron-175b", 96, 12288, 96, 8),
    ("megatron-530b", 128, 20480, 105, 35),
    ("megatron-1t", 160, 25600, 128, 64),
]
t, s, b, vocab = 8, 2048, 1, 51200


def run(name, p, m, selective):
    sets = ["--model-set=tensor_parallel=%d" % t]
    if selective:
        sets += ["--model-set=sequence_parallel=true", "--model-set=recompute=selective"]
    cmd = [schedc, "check", os.path.join(stdlib, "1f1b.sched"), "--model=" + name] + sets + [
        "--hardware=dgx-a100-80gb", "--precision=bf16", "--optimizer=adam",
        "-D", "ranks=%d" % p, "-D", "batches=%d" % m, "--format=json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("schedc failed (%d): %s\n%s" % (out.returncode, " ".join(cmd), out.stderr + out.stdout))
    return json.loads(out.stdout)


def formula_bytes(heads, h, layers, p, selective):
    """The first stage's bytes per accelerator by the paper's formulas."""
    per_stage = layers // p
    # GPT layer: 12h² matrices and the column-parallel biases (Q, K, V: 3h; the MLP's
    # first: 4h) split by t; the row-parallel biases (2h) and two LayerNorms (4h) whole.
    # The first stage adds the embedding (V x h, split by t) and learned positions (s x h).
    layer_params = (12 * h * h + 7 * h) / t + 6 * h
    params = per_stage * layer_params + vocab * h / t + s * h
    if p == 1:
        params += 2 * h  # the final LayerNorm
    sbh = s * b * h
    per_layer = 34 * sbh / t if selective else sbh * (10 + 24 / t + 5 * heads * s / (h * t))
    in_flight = p  # 1F1B's first stage holds p micro-batches
    return 16 * params + in_flight * per_stage * per_layer


print("per accelerator of the first stage; DGX A100 80 GB, bf16 + Adam, t = 8, 1F1B, m = 4p micro-batches of 1")
print("%-14s %3s %4s  %-22s %10s %10s %6s %8s %6s %6s" % (
    "model", "p", "m", "", "schedc GB", "formula GB", "ratio", "step s", "MFU", "HFU"))
for name, heads, h, layers, p in configs:
    m = 4 * p
    for selective in (False, True):
        report = run(name, p, m, selective)
        hw = report["hardware"]
        predicted = report["max_bytes"]
        formula = formula_bytes(heads, h, layers, p, selective)
        label = "TP + SP + selective" if selective else "TP only"
        print("%-14s %3d %4d  %-22s %10.1f %10.1f %6.3f %8.2f %5.1f%% %5.1f%%" % (
            name, p, m, label, predicted / 1e9, formula / 1e9, predicted / formula, hw["step_seconds"],
            100 * hw["mfu"], 100 * hw["hfu"]))
