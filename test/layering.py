#!/usr/bin/env python3
"""layering.py ROOT — checks that the layers of schedc point down (docs/architecture.md).

Every `#include "..."` of a source file is resolved against the folders it could come
from; an include of a header in a layer above the file's own, or in a sibling it must not
know, fails the check:
  support/          includes nothing under compiler/ or runtime/
  runtime/          includes nothing under compiler/
  runtime/cost/     (time) includes nothing of the runtime above it
  runtime/sim/      (semantics) includes nothing above it: engine/, report/, run/, the backends, rt/
  runtime/engine/   (how ranks run) includes nothing of report/, run/, the backends, rt/
  runtime/report/   includes nothing of run/, the backends, rt/
  runtime/run/      includes nothing of the backends or rt/
  runtime/backend/  includes nothing under runtime/cpu/, runtime/cuda/ or runtime/rt/
  runtime/cpu/ and runtime/cuda/ include nothing of each other, nor of runtime/rt/
  compiler/plan/    (the planner's search) includes nothing of the driver or codegen
and, in runtime/CMakeLists.txt, the cuda library does not link the cpu library (nor the
cpu library the cuda one).
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = ("*.h", "*.cpp", "*.cu", "*.def")

# (folder whose files are checked, folders it must not reach into, the include root its
# includes are named from: the forbidden folder itself when None)
BACKENDS = ["runtime/backend", "runtime/cpu", "runtime/cuda", "runtime/rt"]
ABOVE_REPORT = ["runtime/run"] + BACKENDS
ABOVE_ENGINE = ["runtime/report"] + ABOVE_REPORT
ABOVE_SIM = ["runtime/engine"] + ABOVE_ENGINE
ABOVE_COST = ["runtime/sim"] + ABOVE_SIM
RULES = [
    ("support", ["compiler", "runtime"], None),
    ("runtime", ["compiler"], None),
    ("runtime/cost", ABOVE_COST, "runtime"),
    ("runtime/sim", ABOVE_SIM, "runtime"),
    ("runtime/engine", ABOVE_ENGINE, "runtime"),
    ("runtime/report", ABOVE_REPORT, "runtime"),
    ("runtime/run", BACKENDS, "runtime"),
    ("runtime/backend", ["runtime/cpu", "runtime/cuda", "runtime/rt"], "runtime"),
    ("runtime/cpu", ["runtime/cuda", "runtime/rt"], "runtime"),
    ("runtime/cuda", ["runtime/cpu", "runtime/rt"], "runtime"),
    ("compiler/plan", ["compiler/driver", "compiler/codegen"], "compiler"),
]
# Rules the code does not meet yet, listed so that they are not forgotten; reported, not failed.
PENDING = []
# (library, a library it must not link): read from runtime/CMakeLists.txt.
LINKS_FORBIDDEN = [("schedc_cuda", "schedc_cpu"), ("schedc_cpu", "schedc_cuda"), ("schedc_backend", "schedc_cpu"),
                   ("schedc_backend", "schedc_cuda")]


def includes(folder):
    for pattern in SOURCES:
        for path in (root / folder).rglob(pattern):
            for m in INCLUDE.finditer(path.read_text(errors="replace")):
                yield path, m.group(1)


def violations(folder, forbidden, base=None):
    found = []
    for path, name in includes(folder):
        for f in forbidden:
            # A header under a forbidden folder, named from that folder's include root.
            inc_root = root / (base if base else f)
            target = inc_root / name
            if target.exists() and str(target.relative_to(root)).startswith(f + "/"):
                if not (root / "support" / name).exists():
                    found.append(f"{path.relative_to(root)} includes {name} ({f}/)")
    return found


bad = []
for folder, forbidden, base in RULES:
    bad += violations(folder, forbidden, base)
pending = []
for folder, forbidden, base in PENDING:
    pending += violations(folder, forbidden, base)
for p in pending:
    print("pending:", p)
cmake = (root / "runtime" / "CMakeLists.txt").read_text()
for lib, other in LINKS_FORBIDDEN:
    for m in re.finditer(r"target_link_libraries\(\s*" + lib + r"\b([^)]*)\)", cmake):
        if re.search(r"\b" + other + r"\b", m.group(1)):
            bad.append(f"runtime/CMakeLists.txt: {lib} links {other}")
if bad:
    print("\n".join(bad))
    print(f"{len(bad)} includes or links point up or across the layers")
    sys.exit(1)
print("the layers point down")
