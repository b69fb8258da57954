#!/usr/bin/env python3
"""equivalence.py SCHEDC EXAMPLES LIT_DIR

The compiled program prints what `schedc check` prints. For each of the eight puzzle
examples at its defaults and two other parameter sets (and with the byte model's options), for stdlib schedules (`shard`,
meshes), and for schedules with errors, deadlocks, meshes and procedures, builds the executable once and compares, for text and
JSON output: `schedc check`, the executable (`schedc build`) and the JIT (`schedc run`)
must give byte-identical stdout, byte-identical stderr and the same exit code."""
import os
import subprocess
import sys
import tempfile

schedc, examples, lit = sys.argv[1:4]
puzzles = os.path.join(examples, "puzzles")
stdlib = os.path.join(os.path.dirname(os.path.abspath(examples)), "stdlib")
cases = {
    os.path.join(puzzles, "basic.sched"): ["", "-D layers=3 -D batches=5", "-D layers=1 -D batches=2 -D ranks=3"],
    os.path.join(puzzles, "grad_accum.sched"): ["", "-D layers=3 -D batches=5", "-D layers=4 -D batches=1"],
    os.path.join(puzzles, "ddp.sched"): ["", "-D layers=3 -D batches=6", "-D batches=3 -D ranks=3"],
    os.path.join(puzzles, "wsdp.sched"): ["", "-D layers=5 -D batches=7", "-D layers=2 -D batches=3"],
    os.path.join(puzzles, "fsdp.sched"): ["", "-D layers=8 -D batches=8 -D ranks=8", "-D batches=6",
                                          "--hidden=1024 --tokens 128 --precision=bf16 --optimizer=adam"],
    os.path.join(puzzles, "pipeline.sched"): ["", "-D layers=12 -D ranks=3", "-D layers=6 -D ranks=6 -D batches=2"],
    os.path.join(puzzles, "gpipe.sched"): ["", "-D layers=12 -D ranks=3 -D batches=5",
                                           "-D layers=4 -D ranks=2 -D batches=7"],
    os.path.join(puzzles, "pipeline_fsdp.sched"): ["", "-D layers=6 -D batches=3 -D ranks=9",
                                                   "-D layers=2 -D batches=5 -D ranks=10"],
    os.path.join(lit, "check", "update-errors.sched"): [""],
    os.path.join(lit, "check", "collective-errors.sched"): [""],
    os.path.join(lit, "check", "storage-errors.sched"): [""],
    os.path.join(lit, "check", "deadlock-collective.sched"): ["-D case=0", "-D case=1"],
    os.path.join(lit, "check", "mesh-runtime.sched"): ["", "-D a=3"],
    os.path.join(lit, "check", "warnings.sched"): [""],
    os.path.join(lit, "sema", "ir-dump.sched"): [""],
    os.path.join(lit, "check", "shard-errors.sched"): [""],
    os.path.join(stdlib, "zero1.sched"): ["", "-D ranks=2 -D batches=6", "-D ranks=2 --hidden=64 --precision=fp32"],
    os.path.join(stdlib, "zero2.sched"): ["-D layers=3 -D ranks=8 -D batches=8"],
    os.path.join(stdlib, "hybrid.sched"): ["-D ranks=4 -D stages=2"],
    os.path.join(stdlib, "moe.sched"): ["", "-D ranks=8 -D stages=1 -D experts=4 -D dense_layers=1"],
    os.path.join(stdlib, "dualpipev_moe.sched"): ["", "-D interleave=0 -D dense_layers=3 -D stages=1 -D ranks=4"],
    os.path.join(lit, "check", "Inputs", "experts.sched"): ["", "-D drop=2", "-D drop=3", "-D drop=8"],
    os.path.join(lit, "check", "experts-errors.sched"): [""],
    os.path.join(stdlib, "recompute.sched"): ["-D layers=5 -D segment=2"],
    os.path.join(stdlib, "zbh1.sched"): ["", "-D ranks=3 -D layers=6 -D batches=5"],
    os.path.join(stdlib, "zbv.sched"): ["", "-D ranks=3 -D layers=12 -D batches=7"],
    os.path.join(stdlib, "dualpipev.sched"): ["", "-D ranks=3 -D layers=6 -D batches=7"],
    os.path.join(stdlib, "interleaved.sched"): ["-D ranks=2 -D batches=3", "-D ranks=1 -D chunks=3 -D layers=6"],
    os.path.join(stdlib, "breadth_first.sched"): ["-D stages=2", "-D layers=12 -D chunks=3 -D batches=4 -D stages=2"],
    os.path.join(stdlib, "gpipe.sched"): ["-D segment=2 -D layers=12"],
    os.path.join(lit, "check", "split-backward.sched"): [""],
    os.path.join(lit, "check", "tags.sched"): ["", "-D mode=1", "-D mode=2"],
    os.path.join(lit, "check", "communication-errors.sched"): [""],
    os.path.join(lit, "check", "rank-at.sched"): ["", "-D off=1"],
}

def run(args):
    p = subprocess.run(args, capture_output=True)
    return p.returncode, p.stdout, p.stderr

failures = total = 0
with tempfile.TemporaryDirectory() as tmp:
    for source, param_sets in cases.items():
        exe = os.path.join(tmp, os.path.basename(source) + ".exe")
        code, _, err = run([schedc, "build", source, "-o", exe])
        if code != 0:
            print(f"FAIL build {source}: exit {code}\n{err.decode()}")
            failures += 1
            continue
        for params in param_sets:
            for fmt in ("text", "json"):
                extra = params.split() + ["--format=" + fmt]
                check = run([schedc, "check", source] + extra)
                aot = run([exe] + extra)
                jit = run([schedc, "run", source] + extra)
                total += 1
                name = f"{os.path.basename(source)} [{params}] {fmt}"
                if check == aot == jit:
                    print(f"same {name}: exit {check[0]}, {len(check[1])} + {len(check[2])} bytes")
                else:
                    failures += 1
                    which = "executable" if check != aot else "JIT"
                    print(f"FAIL {name}: the {which} differs from check")
        os.remove(exe)  # one executable on disk at a time
print(f"{total - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
