#!/usr/bin/env python3
"""equivalence.py SCHEDC EXAMPLES INPUTS MPIEXEC [--stand-in=cpu] [--build-only=DIR --gpus=N | --prebuilt=DIR]

The cuda backend's proofs, on the GPUs of this machine (one MPI process per GPU). Exits 77
(ctest: skipped) when there is no GPU. For every case of test/lit/cpu/cases.py whose ranks fit
the number of GPUs, and every stdlib schedule on one rank (so one GPU runs the code paths
of them all: collectives over a group of one, chunks handed on within a rank, the split
backward, recomputation, shards):
1. Equivalence: run with --backend=cuda at H = 64, T = 16, it ends with the weights the cpu
   backend trains with the same schedule and with `basic`'s (cpu), to a relative error
   max|a - b| / max|b| of at most 1e-4 (GPU and CPU sum in different orders), SGD and Adam;
   also with --tf32 against basic's at 1e-2 (TF32 keeps 10 bits of mantissa), and with
   --precision=bf16 (SGD, with bf16 and with fp32 weight gradients) against the cpu
   backend's bf16 emulation and basic's at bf16, at 1e-4 (the cpu tests measure 2.5e-5
   between schedules at bf16). The same SGD step with
   --no-overlap (collectives in line with compute) and with --trace (every operation
   waits for its device work) ends with the same weights as overlapped, to 1e-6.
2. Memory: the peak of bytes each rank holds (the device buffers of the values it keeps),
   measured at the cost model's sampling points, equals the peak the run predicts, for
   every rank: at fp32, SGD, H = 512, T = 256 (also 4 bytes per puzzle unit, but for the
   mixture-of-experts cases, whose router has no weights), at bf16
   with Adam and at bf16 with fp32 gradients, at H = 64, T = 16.
Prints one line per case. With --stand-in=cpu it runs everything on the cpu backend as if
there were one GPU (CI does, so this script cannot rot while no GPU runs it).
Built here, run there (a GPU machine without schedc's build dependencies,
scripts/gpu-bundle.sh): --build-only=DIR compiles the cases that fit N GPUs into DIR and
exits; --prebuilt=DIR runs the executables found there instead of building them (SCHEDC
is then not used); --cases=A,B,... runs (or builds) only those cases."""
import os
import shutil
import subprocess
import sys
import tempfile

# Under scripts/sanitize.sh: no leak checks in MPI jobs (Open MPI's unloaded plugins leak).
if os.environ.get("SCHEDC_MPI_ASAN_OPTIONS"):
    os.environ["ASAN_OPTIONS"] = os.environ["SCHEDC_MPI_ASAN_OPTIONS"]

schedc, examples, inputs, mpiexec = sys.argv[1:5]
options = dict(arg[2:].split("=", 1) for arg in sys.argv[5:] if arg.startswith("--") and "=" in arg)
stand_in = options.get("stand-in") == "cpu"
build_only, prebuilt = options.get("build-only"), options.get("prebuilt")
device = "cpu" if stand_in else "cuda"
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(here), "cpu"))
from cases import build_options, cpu_only, model_options, parameters, predicted_and_measured, puzzles, source  # noqa: E402

compare = os.path.join(os.path.dirname(here), "cpu", "compare_weights.py")
smi = shutil.which("nvidia-smi")
listing = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout if smi else ""
gpus = 1 if stand_in else sum(1 for line in listing.splitlines() if line.startswith("GPU "))
if build_only:
    gpus = int(options.get("gpus", "1"))
if gpus == 0:
    print("no GPU on this machine: the cuda backend's equivalence test is skipped")
    sys.exit(77)
mpi = [mpiexec, "--allow-run-as-root", "-x", "OPENBLAS_NUM_THREADS=1"]
failures = 0


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def report(ok, what):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + what, flush=True)


def worst(out, ref, tolerance):
    r = run([sys.executable, compare, out, ref, tolerance])
    return r.returncode == 0, (r.stdout.strip().splitlines() or ["?"])[-1]


# name: (stdlib file, -D parameters), each at 4 layers, 4 micro-batches, one rank.
one_rank = {
    "ddp-1": ("ddp", []), "recompute-1": ("recompute", []), "zero1-1": ("zero1", []), "zero2-1": ("zero2", []),
    "zero3-1": ("zero3", []), "gpipe-1": ("gpipe", ["-D", "segment=2"]), "1f1b-1": ("1f1b", []),
    "zbh1-1": ("zbh1", []), "zbv-1": ("zbv", []), "dualpipev-1": ("dualpipev", []), "interleaved-1": ("interleaved", ["-D", "chunks=2"]),
    "breadth_first-1": ("breadth_first", ["-D", "stages=1", "-D", "chunks=2"]), "hybrid-1": ("hybrid", ["-D", "stages=1"]),
    # mixture of experts on one GPU: the router's copies, the masked experts, all-to-alls over
    # a group of one (NCCL's send and receive to itself), the split backward's halves
    "moe-1": ("moe", ["-D", "stages=1", "-D", "experts=1"]),
    "dualpipev_moe-1": ("dualpipev_moe", ["-D", "stages=1", "-D", "experts=1"]),
}
model_options.update({name: model_options["moe"] for name in ("moe-1", "dualpipev_moe-1")})
stdlib = os.path.join(os.path.dirname(os.path.abspath(examples)), "stdlib")
for name, (_, extra) in one_rank.items():
    parameters[name] = ["-D", "layers=4", "-D", "batches=4", "-D", "ranks=1", *extra]

with tempfile.TemporaryDirectory() as tmp:
    cases = {name: shape for name, shape in puzzles.items() if shape[2] <= gpus and name not in cpu_only}
    print(f"{gpus} GPU(s): {len(cases)} of {len(puzzles)} cases fit, and {len(one_rank)} stdlib schedules on one rank")
    cases.update({name: (4, 4, 1) for name in one_rank})
    if "cases" in options:  # a share of them, to run several shares at once (or to build)
        cases = {name: shape for name, shape in cases.items() if name in options["cases"].split(",")}
    if prebuilt:  # a bundle built for fewer GPUs than this machine has
        absent = [name for name in cases if not os.path.exists(os.path.join(prebuilt, name))]
        cases = {name: shape for name, shape in cases.items() if name not in absent}
        if absent:
            print(f"{len(absent)} cases that fit are not in {prebuilt} (built for fewer GPUs): {', '.join(absent)}")
    exe = {}
    for name in {**cases, "basic": puzzles["basic"]}:  # basic: every case's reference
        exe[name] = os.path.join(prebuilt or build_only or tmp, name)
        if prebuilt:
            continue
        file = os.path.join(stdlib, one_rank[name][0] + ".sched") if name in one_rank else source(name, examples, inputs)
        built = run([schedc, "build", *([] if stand_in else ["--cuda"]), file, "-o", exe[name],
                     *build_options.get(name, [])])
        if built.returncode != 0:
            sys.exit(f"cannot build {name}: {built.stderr}")
    if build_only:
        print(f"built {len(exe)} executables into {build_only}")
        sys.exit(0)

    def train(name, ranks, backend, out, extra=()):
        return run(mpi + ["-np", str(ranks), exe[name], "--backend=" + backend, "--weights-out=" + out]
                   + parameters.get(name, []) + list(extra))

    def against_cpu_and_basic(name, layers, batches, ranks, label, flags):
        """Trains `name` on the device and on the cpu backend with `flags`, and basic on the
        cpu backend; reports whether the device's weights equal both to 1e-4. Returns
        basic's weights directory."""
        flags = flags + model_options.get(name, [])
        key = "-".join(f.split("=")[-1] for f in flags)
        basic = os.path.join(tmp, f"basic-{layers}-{batches}-{key}")
        if not os.path.isdir(basic):
            train("basic", 1, "cpu", basic, flags + ["-D", f"layers={layers}", "-D", f"batches={batches}"])
        on_cpu, on_gpu = (os.path.join(tmp, f"{name}-{b}-{key}") for b in ("cpu", "cuda"))
        train(name, ranks, "cpu", on_cpu, flags)
        r = train(name, ranks, device, on_gpu, flags)
        if r.returncode != 0:
            report(False, f"{name} on {ranks} GPU(s) ({label}): {r.stderr[-300:]}")
            return basic
        same_cpu, text_cpu = worst(on_gpu, on_cpu, "1e-4")
        same_basic, text_basic = worst(on_gpu, basic, "1e-4")
        report(same_cpu and same_basic, f"{name} on {ranks} GPU(s) ({label}): vs cpu {text_cpu}; vs basic {text_basic}")
        return basic

    small = ["--hidden=64", "--tokens=16", "--seed=7"]
    for name, (layers, batches, ranks) in cases.items():
        basic = against_cpu_and_basic(name, layers, batches, ranks, "sgd", small + ["--optimizer=sgd"])
        against_cpu_and_basic(name, layers, batches, ranks, "adam", small + ["--optimizer=adam"])
        against_cpu_and_basic(name, layers, batches, ranks, "sgd, bf16", small + ["--precision=bf16"])
        against_cpu_and_basic(name, layers, batches, ranks, "sgd, bf16, fp32 gradients",
                              small + ["--precision=bf16", "--grad-precision=fp32"])
        on_tf32 = os.path.join(tmp, f"{name}-tf32")
        r = train(name, ranks, device, on_tf32, small + ([] if stand_in else ["--tf32"]) + model_options.get(name, []))
        same, text = worst(on_tf32, basic, "1e-2") if r.returncode == 0 else (False, r.stderr[-300:])
        report(same, f"{name} on {ranks} GPU(s) (sgd, tf32): vs basic {text}")
        # The same step with collectives in line with compute (--no-overlap), and traced
        # (every operation waits for its device work): the same weights as overlapped.
        overlapped = os.path.join(tmp, f"{name}-cuda-" + "-".join(
            f.split("=")[-1] for f in small + ["--optimizer=sgd"] + model_options.get(name, [])))
        for label, extra in (("no overlap", [] if stand_in else ["--no-overlap"]),
                             ("traced", ["--trace=" + os.path.join(tmp, name + ".trace.json")])):
            out = os.path.join(tmp, f"{name}-{label.replace(' ', '-')}")
            r = train(name, ranks, device, out, small + ["--optimizer=sgd"] + extra + model_options.get(name, []))
            same, text = worst(out, overlapped, "1e-6") if r.returncode == 0 else (False, r.stderr[-300:])
            report(same, f"{name} on {ranks} GPU(s) (sgd, {label}): vs overlapped {text}")

    for name, (layers, batches, ranks) in cases.items():
        for label, extra, units in (("fp32, H = 512, T = 256", [], True),
                                    ("bf16, Adam", ["--hidden=64", "--tokens=16", "--precision=bf16",
                                                    "--optimizer=adam"], False),
                                    ("bf16, fp32 gradients", ["--hidden=64", "--tokens=16", "--precision=bf16",
                                                              "--grad-precision=fp32"], False)):
            r = run(mpi + ["-np", str(ranks), exe[name], "--backend=" + device, "--format=json", *extra]
                    + parameters.get(name, []) + model_options.get(name, []))
            same, shown = predicted_and_measured(r, puzzle_units=units and name not in model_options)
            report(same, f"{name} on {ranks} GPU(s): predicted/measured peak bytes per rank ({label}): {shown} "
                         f"{r.stderr[-200:]}")

print("all passed" if not failures else f"{failures} failed")
sys.exit(1 if failures else 0)
