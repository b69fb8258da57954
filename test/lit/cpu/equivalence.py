#!/usr/bin/env python3
"""equivalence.py SCHEDC EXAMPLES INPUTS MPIEXEC

The cpu backend's proofs, run under MPI (one process per rank, oversubscribed):
1. Equivalence: each of the eight puzzle schedules and the stdlib's ZeRO-1, ZeRO-2, ZB-H1,
   ZB-V and DualPipeV (V-shaped: two chunks a rank, the middle handed over in storage),
   interleaved 1F1B (two stages: activations and gradients both ways, told apart by tag),
   Breadth-First on a dp x stage mesh, GPipe with recomputation and Megatron's dp x stage x
   tp mesh (2 x 2 x 2 with sequence parallelism, also with two model chunks per stage or
   with the distributed optimizer, and 1 x 2 x 4 with all-reduces: tensor parallelism on
   real tensors) and stdlib moe as dp 2 x ep 2 (4 experts, top-2, against basic with the
   same experts: all-to-alls on real tensors), run with --backend=cpu at small sizes
   (H = 16, T = 8), ends with the same weights as `basic` on the same layers, batches, H,
   T and seed, to a relative error max|a - b| / max|b| of at most 1e-5, for SGD and Adam.
   With --precision=bf16 (emulated: rounded where bf16 is stored) and SGD each ends with
   the weights `basic` trains at bf16 to 1e-4 (the order of sums moves bf16 roundings), and
   bf16 visibly changes them: basic at bf16 differs from basic at fp32 by more than 1e-6.
   (Not Adam at bf16: its first step is lr * g / |g|, so a gradient element that a
   rounding moves across zero moves the weight by 2 lr, about 1e-2 of the largest weight
   here — measured 4e-3 to 7e-3 — which says nothing about the schedule.)
   The fp32 masters live in the optimizer state (sharded with it, as in ZeRO); the final
   weights written are the masters. With --grad-precision=fp32 (bf16 run, fp32 weight
   gradients) the data-parallel and ZeRO schedules end with basic's weights at the same
   precisions, to 1e-4.
2. Memory: the peak of bytes each rank holds, measured at the cost model's sampling
   points, equals the peak the run predicts, for every rank: at fp32, SGD, H = 512,
   T = 256 (where it is also 4 bytes per unit of the puzzle's peak memory), at bf16
   with Adam, and at bf16 with fp32 gradients for the data-parallel and ZeRO schedules.
3. A wrong schedule fails for real: one that updates with a partial gradient is refused;
   forced with --no-verify it runs, and its weights differ from basic's beyond tolerance."""
import os
import subprocess
import sys
import tempfile

# Under scripts/sanitize.sh: no leak checks in MPI jobs (Open MPI's unloaded plugins leak).
if os.environ.get("SCHEDC_MPI_ASAN_OPTIONS"):
    os.environ["ASAN_OPTIONS"] = os.environ["SCHEDC_MPI_ASAN_OPTIONS"]

schedc, examples, inputs, mpiexec = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
compare = os.path.join(here, "compare_weights.py")
mpi = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-x", "OPENBLAS_NUM_THREADS=1"]
sys.path.insert(0, here)
from cases import build_options, model_options, parameters, predicted_and_measured, puzzles, source  # noqa: E402
failures = 0

def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)

def report(ok, what):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + what)

with tempfile.TemporaryDirectory() as tmp:
    exe = {}
    for name in list(puzzles) + ["missing-batches"]:
        exe[name] = os.path.join(tmp, name)
        build = run([schedc, "build", source(name, examples, inputs), "-o", exe[name]] + build_options.get(name, []))
        if build.returncode != 0:
            sys.exit(f"cannot build {name}: {build.stderr}")

    def train(name, ranks, out, extra=()):
        return run(mpi + ["-np", str(ranks), exe[name], "--backend=cpu", "--weights-out=" + out]
                   + parameters.get(name, []) + list(extra))

    def reference(layers, batches, flags, key):
        """basic's weights at (layers, batches) with `flags`, trained once (`key` names them)."""
        ref = os.path.join(tmp, f"basic-{layers}-{batches}-{key}")
        if not os.path.isdir(ref):
            r = train("basic", 1, ref, flags + ["-D", f"layers={layers}", "-D", f"batches={batches}"])
            if r.returncode != 0:
                sys.exit(f"basic failed: {r.stderr}")
        return ref

    # 1. Equivalence with basic (at the same precision).
    for precision, tolerance in (("fp32", "1e-5"), ("bf16", "1e-4")):
        for optimizer in ("sgd", "adam") if precision == "fp32" else ("sgd",):
            small = ["--hidden=16", "--tokens=8", "--seed=7", "--optimizer=" + optimizer, "--precision=" + precision]
            for name, (layers, batches, ranks) in puzzles.items():
                if name == "basic":
                    continue
                mine = small + model_options.get(name, [])
                ref = reference(layers, batches, mine, "-".join([optimizer, precision] + model_options.get(name, [])))
                out = os.path.join(tmp, f"{name}-{optimizer}-{precision}")
                r = train(name, ranks, out, mine)
                compared = run([sys.executable, compare, out, ref, tolerance]) if r.returncode == 0 else None
                worst = compared.stdout.strip().splitlines()[-1] if compared else r.stderr[-300:]
                report(bool(compared) and compared.returncode == 0,
                       f"{name} on {ranks} ranks ({optimizer}, {precision}) ends with basic's weights: {worst}")
    # bf16 with fp32 weight gradients, where the gradients are reduced and sharded.
    fp32_grads = ["ddp", "fsdp", "zero1", "zero2"]
    small = ["--hidden=16", "--tokens=8", "--seed=7", "--precision=bf16", "--grad-precision=fp32"]
    for name in fp32_grads:
        layers, batches, ranks = puzzles[name]
        ref = os.path.join(tmp, f"basic-{layers}-{batches}-fp32-grads")
        if not os.path.isdir(ref):
            train("basic", 1, ref, small + [f"-D", f"layers={layers}", "-D", f"batches={batches}"])
        out = os.path.join(tmp, f"{name}-fp32-grads")
        r = train(name, ranks, out, small)
        compared = run([sys.executable, compare, out, ref, "1e-4"]) if r.returncode == 0 else None
        worst = compared.stdout.strip().splitlines()[-1] if compared else r.stderr[-300:]
        report(bool(compared) and compared.returncode == 0,
               f"{name} on {ranks} ranks (sgd, bf16 with fp32 gradients) ends with basic's weights: {worst}")
    r = run([sys.executable, compare, os.path.join(tmp, "basic-2-4-fp32-grads"),
             os.path.join(tmp, "basic-2-4-sgd-bf16"), "1e-6"])
    report(r.returncode == 1, f"fp32 gradients change basic's bf16 weights: {r.stdout.strip().splitlines()[-1]}")
    fp32, bf16 = (os.path.join(tmp, f"basic-2-4-sgd-{p}") for p in ("fp32", "bf16"))
    r = run([sys.executable, compare, bf16, fp32, "1e-6"])
    report(r.returncode == 1, f"bf16 changes basic's weights: {r.stdout.strip().splitlines()[-1]}")

    # 2. Measured bytes equal the prediction, per rank.
    for name, (layers, batches, ranks) in puzzles.items():
        options = parameters.get(name, []) + model_options.get(name, [])
        r = run(mpi + ["-np", str(ranks), exe[name], "--backend=cpu", "--format=json"] + options)
        same, shown = predicted_and_measured(r, puzzle_units=name not in model_options)
        report(same, f"{name}: predicted/measured peak bytes per rank (fp32, H = 512, T = 256): {shown}")
        r = run(mpi + ["-np", str(ranks), exe[name], "--backend=cpu", "--format=json", "--hidden=16", "--tokens=8",
                       "--precision=bf16", "--optimizer=adam"] + options)
        same, shown = predicted_and_measured(r)
        report(same, f"{name}: predicted/measured peak bytes per rank (bf16, Adam): {shown}")
        if name in fp32_grads:
            r = run(mpi + ["-np", str(ranks), exe[name], "--backend=cpu", "--format=json", "--hidden=16",
                           "--tokens=8", "--precision=bf16", "--grad-precision=fp32"] + parameters.get(name, []))
            same, shown = predicted_and_measured(r)
            report(same, f"{name}: predicted/measured peak bytes per rank (bf16, fp32 gradients): {shown}")

    # 3. A wrong schedule: refused; forced, it trains something else.
    small = ["--hidden=16", "--tokens=8", "--seed=7"]
    refused = train("missing-batches", 4, os.path.join(tmp, "refused"), small)
    report(refused.returncode == 1 and "is not a correct training step" in refused.stderr
           and not os.path.isdir(os.path.join(tmp, "refused")), "the partial-gradient schedule is refused")
    forced = os.path.join(tmp, "forced")
    train("missing-batches", 4, forced, small + ["--no-verify"])
    ref = os.path.join(tmp, "basic-1-4")
    train("basic", 1, ref, small + ["-D", "layers=1", "-D", "batches=4"])
    differs = os.path.isdir(forced) and run([sys.executable, compare, forced, ref]).returncode == 1
    report(differs, "forced with --no-verify, its weights differ from basic's beyond the tolerance")

print(f"{'all passed' if not failures else str(failures) + ' failed'}")
sys.exit(1 if failures else 0)
