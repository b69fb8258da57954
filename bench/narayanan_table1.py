#!/usr/bin/env python3
"""narayanan_table1.py [SCHEDC] — Megatron-LM's weak-scaling runs, predicted and published.

Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM", SC'21), Table 1: GPT models from 1.7 B to 1 T parameters on DGX A100
80 GB nodes (Selene), each row's achieved teraFLOP/s per GPU. The rows' settings are the
paper's run scripts (NVIDIA/Megatron-LM examples/sc21/run_table_1.sh and CONFIG.sh):
sequence 2048, vocabulary 51 200, the micro-batch, global batch, tensor- and
pipeline-parallel sizes and interleaving below, full activation recomputation (one layer a
checkpoint), 16-bit training with fp32 main gradients and Adam. The data-parallel
all-reduce runs after the pipeline flush (Megatron's local DDP) — with PyTorch DDP on the
PP = 1 rows it overlaps the last micro-batch's backward in Megatron; schedc's megatron
schedule runs it after, so those rows carry it whole.

Each row runs stdlib/megatron.sched on the dgx-a100-80gb preset as shipped, the tensor
parallelism folded into the model (`tensor_parallel`), and converts the predicted step
into the paper's measure: F / (step x GPUs), F = 96 B s l h² (1 + s/6h + V/16lh), the
paper's FLOPs per iteration with recomputation (its eq. 3). A benchmark, not a test: it
prints the figures and the ratio predicted / published, and exits 0.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
schedc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "bin", "schedc")
megatron = os.path.join(here, "..", "stdlib", "megatron.sched")

# params (B), heads, hidden, layers, TP, PP, GPUs, global batch, TFLOP/s per GPU published
# (Table 1); micro-batch and interleaved chunks (run_table_1.sh: layers per virtual stage).
rows = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 16, 1),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 16, 1),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 16, 1),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 1),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 1),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 3),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 2),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 2),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 3),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 1),
]
s, vocab = 2048, 51200


def predict(heads, h, layers, tp, pp, gpus, batch, mb, chunks):
    dp = gpus // (tp * pp)
    # Megatron-LM's GPT (the megatron presets' architecture) at this row's shape.
    model = os.path.join(scratch, "gpt-%d-%d.toml" % (h, layers))
    with open(model, "w") as f:
        f.write('preset = "megatron-22b"\nname = "gpt %dx%d"\nlayers = %d\nhidden = %d\nheads = %d\n'
                'kv_heads = %d\nffn = %d\nmicro_batch = %d\ntensor_parallel = %d\nrecompute = "full"\n'
                % (layers, h, layers, h, heads, heads, 4 * h, mb, tp))
    cmd = [schedc, "check", megatron, "--model=" + model, "--hardware=dgx-a100-80gb", "--precision=bf16",
           "--grad-precision=fp32", "--optimizer=adam", "--format=json"]
    cmd += ["-D", "ranks=%d" % (dp * pp), "-D", "stages=%d" % pp, "-D", "tensors=1", "-D", "sequence=0",
            "-D", "chunks=%d" % chunks, "-D", "batches=%d" % (batch // mb)]
    start = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("schedc failed (%d): %s\n%s" % (out.returncode, " ".join(cmd), out.stderr + out.stdout))
    return json.loads(out.stdout), time.time() - start


scratch = tempfile.mkdtemp(prefix="narayanan-")
print("Narayanan et al. 2021, Table 1, on dgx-a100-80gb as shipped (stdlib/megatron.sched, full recomputation)")
print("%8s %3s %3s %5s %5s %3s %4s %9s %9s %7s %7s %6s" % (
    "params", "tp", "pp", "gpus", "batch", "mb", "v", "step s", "TF/GPU", "paper", "ratio", "check"))
ratios = []
for params, heads, h, layers, tp, pp, gpus, batch, published, mb, chunks in rows:
    report, wall = predict(heads, h, layers, tp, pp, gpus, batch, mb, chunks)
    step = report["hardware"]["step_seconds"]
    flops = 96 * batch * s * layers * h * h * (1 + s / (6 * h) + vocab / (16 * layers * h))
    achieved = flops / (step * gpus) / 1e12
    ratios.append(achieved / published)
    print("%7.1fB %3d %3d %5d %5d %3d %4d %9.2f %9.1f %7d %7.3f %5.1fs" % (
        params, tp, pp, gpus, batch, mb, chunks, step, achieved, published, achieved / published, wall))
worst = max(ratios, key=lambda r: abs(r - 1))
print("predicted / published TF/s per GPU: %.3f .. %.3f (worst %+.1f%%)" % (min(ratios), max(ratios), 100 * (worst - 1)))
