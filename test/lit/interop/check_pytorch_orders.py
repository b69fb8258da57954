#!/usr/bin/env python3
"""check_pytorch_orders.py SCHEDC DIR RANKS... — every schedule PyTorch's own classes build
(pytorch_orders.py: GPipe, LoopedBFS, Interleaved1F1B, InterleavedZeroBubble, ZBVZeroBubble,
DualPipeV; for each of RANKS, every micro-batch count from ranks-1 to 4 x ranks that the
class accepts), written to DIR, must check `Correct!` under ordered point-to-point (PyTorch
over NCCL), as its compute-only file and as the runtime's lowering with its sends and
receives; and what `schedc export --comms` writes of the compute-only file must check
`Correct!` too (in send order, free of pair-stream hangs). Schedule1F1B is left out: PyTorch
builds its last rank's forwards as micro-batches 1 to M (see pytorch_orders.py), an order
its own _validate_schedule rejects. On 2 and 3 ranks, each file's check (which runs its rows
as tables: compiler/interop/ImportTables.h) must also log the same events as the check of
what `schedc import` writes of it (a line of source a cell). Prints the counts; exits 1
naming each file that fails."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_orders as orders  # noqa: E402


def first_line(command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return done.returncode, (done.stdout + done.stderr).splitlines()[:1]


def same_as_import(schedc, path):
    """Whether checking the file and checking its import log the same events."""
    base = path[:-len(".csv")]
    runs = [[schedc, "import", path, "-o", base + "_imported.sched"],
            [schedc, "check", path, "--events=" + base + "_table_events.csv"],
            [schedc, "check", base + "_imported.sched", "--events=" + base + "_line_events.csv"]]
    for command in runs:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            return f"{path}: {' '.join(command[1:3])}: exit {done.returncode}"
    with open(base + "_table_events.csv") as a, open(base + "_line_events.csv") as b:
        if a.read() != b.read():
            return f"{path}: its check and its import's log different events"
    return None


def check(schedc, path, exported, compare_import):
    problems = []
    code, line = first_line([schedc, "check", path])
    if code != 0 or line != ["Correct!"]:
        problems.append(f"{path}: exit {code}: {line}")
    if compare_import and (problem := same_as_import(schedc, path)):
        problems.append(problem)
    if exported:
        code, line = first_line([schedc, "export", path, "--comms", "-o", exported])
        if code != 0:
            problems.append(f"{path}: export --comms: exit {code}: {line}")
        else:
            code, line = first_line([schedc, "check", exported])
            if code != 0 or line != ["Correct!"]:
                problems.append(f"{exported}: exit {code}: {line}")
    return problems


def main(schedc, directory, ranks):
    os.makedirs(directory, exist_ok=True)
    jobs, files = [], 0
    for name, (_, runtime, _, _) in orders.SCHEDULES.items():
        if name == "1F1B":
            continue
        for p in ranks:
            for n in range(p - 1, 4 * p + 1):
                try:
                    order, lowered = orders.build(name, p, n, comms=runtime, warn=False)
                except orders.Rejected:
                    continue
                base = os.path.join(directory, f"{name.lower()}_{p}r_{n}mb")
                for path, rows, exported in ((base + ".csv", order, base + "_exported.csv"),
                                             (base + "_comms.csv", lowered, None)):
                    if rows is None:
                        continue
                    with open(path, "w", newline="") as f:
                        orders.write(rows, f, True)
                    files += 1
                    jobs.append((path, exported, p <= 3))
    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for ps in pool.map(lambda j: check(schedc, *j), jobs) for p in ps]
    for p in problems:
        print(p)
    print(f"{files} files from PyTorch's schedule classes, {files - len(problems)} checked correct")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], [int(r) for r in sys.argv[3:]]))
