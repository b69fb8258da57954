"""The schedules the real backends' equivalence tests train (test/lit/cpu/equivalence.py,
test/lit/cuda/equivalence.py): each with its (layers, batches, ranks) at the parameters it runs
with, where it comes from, and the -D parameters it runs with besides its defaults."""
import json
import os

puzzles = {  # name: (layers, batches, ranks) at the defaults
    "basic": (2, 4, 1), "grad_accum": (2, 4, 1), "ddp": (2, 4, 4), "wsdp": (6, 4, 4), "fsdp": (6, 4, 4),
    "pipeline": (8, 4, 4), "gpipe": (8, 4, 4), "pipeline_fsdp": (4, 4, 16),
    "zero1": (4, 8, 4), "zero2": (4, 8, 4),  # from stdlib/: `shard` on real tensors
    "zbh1": (8, 8, 4),  # from stdlib/: the split backward on real tensors
    "zbv": (8, 8, 4),  # from stdlib/: V-shaped placement, two chunks a rank, split backward
    "dualpipev": (8, 8, 4),  # from stdlib/: the same placement, whole and split backwards mixed
    "interleaved": (8, 8, 2), "breadth_first": (8, 8, 4), "gpipe_recompute": (8, 8, 4),
    # Megatron-LM's 3D schedule, dp 2 x stage 2 x tp 2 with sequence parallelism, and
    # dp 1 x stage 2 x tp 4 with the tensor-parallel all-reduces: tensor parallelism on
    # real tensors (a part's partial sums, completed by real collectives); and the first
    # with two model chunks per stage (interleaved 1F1B), or with the distributed optimizer
    # (each part's optimizer state sharded over the replicas).
    "megatron": (8, 8, 8), "megatron_tp4": (8, 8, 8), "megatron_interleaved": (8, 8, 8),
    "megatron_distributed": (8, 8, 8),
    # ... and with partitioned activation checkpoints (no sequence parallelism; each layer's
    # input sharded over the tensor-parallel group after its forward, gathered for its backward).
    "megatron_partitioned": (8, 8, 8),
    # PyTorch's own pipeline schedule files (examples/pytorch/), compiled from the CSV:
    # ZB1P compute-only and lowered (2 ranks, 4 looped stages), DualPipeV (4 ranks, 8 stages
    # placed V-shaped, overlapped pairs run one after the other).
    "zb1p_2rank_2stagep_compute": (4, 8, 2), "zb1p_2rank_2stagep_comms": (4, 8, 2),
    "dualpipev_4rank_10mb": (8, 10, 4),
    # The compute-only ZB1P with FSDP stages (--fsdp: UNSHARD, RESHARD and REDUCE_GRAD added
    # as PyTorch lowers them): two replicas of its 2 ranks, each all-gathering its stages'
    # shards and reduce-scattering their gradients over the other.
    "zb1p_fsdp": (4, 16, 4),
    # stdlib moe as dp 2 x ep 2 (one stage): a mixture of experts on real tensors, tokens out
    # to the experts and back by real all-to-alls among two members (4 experts, top-2).
    "moe": (4, 8, 4),
    # ZeRO-Offload and ZeRO-Infinity: values copied between memory tiers into buffers of
    # their own, the update on the host's copies (the cpu backend only: cpu_only below).
    "zero_offload": (4, 8, 4), "zero_infinity": (4, 8, 4),
    # stdlib ddp with buckets of 3 layers (layers 3 to 1, then 0): each bucket's all-reduces
    # one `group`, issued after its lowest layer's backward.
    "ddp_buckets": (4, 8, 4),
}
# Cases only the cpu backend runs: the cuda backend has no host or NVMe buffers yet.
cpu_only = {"zero_offload", "zero_infinity"}
# name: the file in examples/pytorch/ it is compiled from.
from_pytorch = {name: name for name in ("zb1p_2rank_2stagep_compute", "zb1p_2rank_2stagep_comms",
                                        "dualpipev_4rank_10mb")} | {"zb1p_fsdp": "zb1p_2rank_2stagep_compute"}
# Options `schedc build` compiles them with (besides the file).
build_options = {"zb1p_fsdp": ["--fsdp"]}
from_stdlib = {"zero1": "zero1", "zero2": "zero2", "zbh1": "zbh1", "zbv": "zbv", "dualpipev": "dualpipev", "interleaved": "interleaved",
               "breadth_first": "breadth_first", "gpipe_recompute": "gpipe", "megatron": "megatron",
               "megatron_tp4": "megatron", "megatron_interleaved": "megatron",
               "megatron_distributed": "megatron", "megatron_partitioned": "megatron", "moe": "moe", "zero_offload": "zero_offload",
               "zero_infinity": "zero_infinity", "ddp_buckets": "ddp"}
# Parameters the stdlib ones run with (besides their defaults).
parameters = {"interleaved": ["-D", "ranks=2"], "breadth_first": ["-D", "stages=2"],
              "gpipe_recompute": ["-D", "segment=2"],
              "megatron_tp4": ["-D", "tensors=4", "-D", "sequence=0"], "megatron_interleaved": ["-D", "chunks=2"],
              "megatron_distributed": ["-D", "distributed=1"],
              "megatron_partitioned": ["-D", "sequence=0", "-D", "partition=1"], "moe": ["-D", "ranks=4", "-D", "stages=1"],
              "ddp_buckets": ["-D", "bucket=3"]}
# Model options a case runs with, and its reference (basic) too: the real layer as 4 experts,
# each token to 2 of them (docs/cpu.md). Its router has no weights, so its bytes are not 4 a
# puzzle unit.
model_options = {"moe": ["--experts=4", "--top-k=2"]}


def source(name, examples, inputs):
    """The .sched (or PyTorch .csv) file of case `name` (`missing-batches` is the wrong
    schedule of the inputs)."""
    if name in from_pytorch:
        return os.path.join(examples, "pytorch", from_pytorch[name] + ".csv")
    if name == "missing-batches":
        return os.path.join(inputs, name + ".sched")
    if name in from_stdlib:
        return os.path.join(os.path.dirname(os.path.abspath(examples)), "stdlib", from_stdlib[name] + ".sched")
    return os.path.join(examples, "puzzles", name + ".sched")


def predicted_and_measured(run, puzzle_units=False):
    """From a --format=json run of a real backend: whether every rank's measured peak bytes
    equal the predicted peak bytes (on the device, and in host memory and on NVMe where the
    schedule keeps values there), and the pairs to show. With `puzzle_units` (a run at
    fp32, SGD, H = 512, T = 256, where the puzzle's units are elements) the prediction must
    also be 4 bytes per unit of the puzzle's own peak memory, tying the bytes to the model
    the reference figures prove."""
    doc = json.loads(run.stdout) if run.returncode == 0 else None
    pairs = [(f["peak_bytes"], f["measured_peak_bytes"], f["peak_memory"]) for f in doc["per_rank"]] if doc else []
    same = bool(pairs) and all(p == m and (not puzzle_units or p == 4 * u) for p, m, u in pairs)
    tiers = [(f[f"peak_{t}_bytes"], f[f"measured_peak_{t}_bytes"]) for f in (doc["per_rank"] if doc else [])
             for t in ("host", "nvme")]
    same = same and all(p == m for p, m in tiers)
    shown = ", ".join(f"{p}/{m}" for p, m, _ in pairs[:4]) + (" ..." if len(pairs) > 4 else "")
    if any(p or m for p, m in tiers):
        shown += "; host, NVMe: " + ", ".join(f"{p}/{m}" for p, m in tiers[:4]) + (" ..." if len(tiers) > 4 else "")
    return same, shown
