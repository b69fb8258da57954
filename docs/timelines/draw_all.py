#!/usr/bin/env python3
"""draw_all.py SCHEDC PUZZLES OUT_DIR [--check]

Draws the timeline of each of the eight puzzle examples into OUT_DIR/NAME.svg and of each
standard-library schedule (default parameters) into OUT_DIR/stdlib_NAME.svg (what
docs/timelines holds; run by `cmake --build build --target timelines`). With --check,
draws them into a temporary folder instead and fails if any committed picture differs."""
import filecmp
import os
import subprocess
import sys
import tempfile

schedc, puzzles, out = sys.argv[1:4]
check = "--check" in sys.argv
puzzle_names = ["basic", "grad_accum", "ddp", "wsdp", "fsdp", "pipeline", "gpipe", "pipeline_fsdp"]
stdlib_names = ["ddp", "recompute", "zero1", "zero2", "zero3", "zero_offload", "zero_infinity", "gpipe", "1f1b", "interleaved", "zbh1", "zbv", "dualpipev", "breadth_first",
                "hybrid", "megatron", "moe", "dualpipev_moe"]
sources = {name: os.path.join("examples", "puzzles", name + ".sched") for name in puzzle_names}
sources.update({"stdlib_" + name: os.path.join("stdlib", name + ".sched") for name in stdlib_names})
with tempfile.TemporaryDirectory() as tmp:
    target = tmp if check else out
    stale = []
    for name, source in sources.items():
        picture = os.path.join(target, name + ".svg")
        # Relative paths, so the pictures do not depend on where the checkout is.
        subprocess.run([schedc, "draw", source, "-o", picture],
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(puzzles))), capture_output=True)
        if check and not filecmp.cmp(picture, os.path.join(out, name + ".svg"), shallow=False):
            stale.append(name)
    if stale:
        sys.exit(f"docs/timelines is out of date for {stale}: run `cmake --build build --target timelines`")
print(f"all {len(sources)} timelines " + ("are up to date" if check else "drawn into " + out))
