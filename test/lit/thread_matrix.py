#!/usr/bin/env python3
"""thread_matrix.py COUNTS SCHEDC ARGS... — stands for %schedc in ctest's lit_threads
(lit.cfg.py, `--param thread_matrix=8,1,2`): runs SCHEDC ARGS with SCHEDC_THREADS set to the
first count, and where that run fails (any exit status but 0: every error path), again with
each other count; every run must print the same standard output and error and exit with the
same status, byte for byte (docs/checks.md#threads: a run on several threads reports what
the run on one does). The first run's output and status are passed on, so the test's own
checks judge it as they would judge schedc.

The suite's environment sets SCHEDC_THREADS to the first count (compiled programs take it
too). Runs once as written: an invocation that chooses its threads itself (`--threads`, or
another SCHEDC_THREADS or none in its environment); one under a limit of its own (`ulimit -f`,
`ulimit -v`), where what a run meets depends on what ran before it; one whose standard
output is closed or a device other than /dev/null (/dev/full), where what schedc does with
it is the test. Standard input is read once and given to every run; where standard output
and error are one file (`2>&1`), one pipe takes both, in the order schedc wrote them.
Compared: all but the memory a run held where --memory-limit stopped it; a run the time limit
stopped is not compared (where it stops is the clock's). A difference is printed (a unified
diff) and the wrapper exits 97, which no test expects."""
import difflib
import os
import re
import resource
import stat
import subprocess
import sys

counts = sys.argv[1].split(",")
command = sys.argv[2:]
chooses = os.environ.get("SCHEDC_THREADS") != counts[0] or any(
    a == "--threads" or a.startswith("--threads=") for a in command)
# Under a limit of its own (`ulimit -f` or `-v`), what a run meets depends on what ran before it.
limited = any(resource.getrlimit(r)[0] != resource.RLIM_INFINITY for r in (resource.RLIMIT_FSIZE, resource.RLIMIT_AS))
# Standard output closed, or a device that is not /dev/null (/dev/full): what schedc does with
# it is the test, which a pipe in between would change.
try:
    out, err = os.fstat(1), os.fstat(2)
    null = os.stat(os.devnull)
    device = stat.S_ISCHR(out.st_mode) and out.st_rdev != null.st_rdev
except OSError:
    device = True
if chooses or limited or device:
    os.execv(command[0], command)

stdin = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()


# Where standard output and error are one file (`2>&1`), one pipe takes both, in the order
# schedc wrote them.
together = (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)


def run(threads):
    env = dict(os.environ, SCHEDC_THREADS=threads)
    done = subprocess.run(command, input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if together else subprocess.PIPE, env=env)
    return done.returncode, done.stdout, done.stderr or b""




def comparable(said):
    """What must be the same on any number of threads: all of it, but the memory a run held
    when it stopped at --memory-limit; None where the clock decided where it stopped."""
    code, out, err = said
    if b"the run takes more than" in out + err:
        return None
    held = re.compile(rb"the run holds \d+ MiB")
    return code, held.sub(b"the run holds N MiB", out), held.sub(b"the run holds N MiB", err)


first = run(counts[0])
if first[0] != 0:
    for threads in counts[1:]:
        other = run(threads)
        if comparable(other) == comparable(first):
            continue
        sys.stderr.write(f"thread_matrix: SCHEDC_THREADS={counts[0]} and {threads} differ: {' '.join(command)}\n")
        if other[0] != first[0]:
            sys.stderr.write(f"exit status {first[0]} against {other[0]}\n")
        for name, a, b in (("stdout", first[1], other[1]), ("stderr", first[2], other[2])):
            lines = difflib.unified_diff(a.decode(errors="replace").splitlines(True),
                                         b.decode(errors="replace").splitlines(True),
                                         f"{name} at {counts[0]}", f"{name} at {threads}")
            sys.stderr.writelines(lines)
        sys.exit(97)
sys.stdout.buffer.write(first[1])
sys.stdout.flush()
sys.stderr.buffer.write(first[2])
sys.stderr.flush()
sys.exit(first[0] if first[0] >= 0 else 128 - first[0])
