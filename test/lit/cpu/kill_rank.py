#!/usr/bin/env python3
"""kill_rank.py SCHEDC EXAMPLES MPIEXEC

Fault test of the cpu backend: a rank killed with SIGKILL in the middle of a step ends the
whole job in bounded time (here: at most 30 s after the kill), with a message that names
the killed process, a non-zero exit code, and no weights left behind: the --weights-out
directory is absent (never partly written) and no staging directory remains beside it;
no rank is still alive 10 s after the job ends.
The job is gpipe on 4 ranks at a size where a step takes several seconds, so the kill
lands mid-step (after every rank has started computing)."""
import os
import signal
import subprocess
import sys
import tempfile
import time

# Under scripts/sanitize.sh: no leak checks in MPI jobs (Open MPI's unloaded plugins leak).
if os.environ.get("SCHEDC_MPI_ASAN_OPTIONS"):
    os.environ["ASAN_OPTIONS"] = os.environ["SCHEDC_MPI_ASAN_OPTIONS"]

schedc, examples, mpiexec = sys.argv[1:4]
failures = 0


def report(ok, what):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + what)


def rank_pids(exe):
    """The pids of exe's processes, by MPI rank (from each process's environment)."""
    pids = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe") != exe:
                continue
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        for entry in env:
            if entry.startswith(b"OMPI_COMM_WORLD_RANK="):
                pids[int(entry.split(b"=")[1])] = int(pid)
    return pids


with tempfile.TemporaryDirectory() as tmp:
    exe = os.path.join(tmp, "gpipe")
    subprocess.run([schedc, "build", os.path.join(examples, "puzzles", "gpipe.sched"), "-o", exe], check=True)
    weights = os.path.join(tmp, "weights")
    job = subprocess.Popen(
        [mpiexec, "--allow-run-as-root", "--oversubscribe", "-x", "OPENBLAS_NUM_THREADS=1", "-np", "4", exe,
         "--backend=cpu", "--hidden=1024", "--tokens=512", "-D", "layers=16", "-D", "batches=16",
         "--weights-out=" + weights],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    pids = {}
    while len(pids) < 4 and time.monotonic() < deadline and job.poll() is None:
        time.sleep(0.2)
        pids = rank_pids(exe)
    report(len(pids) == 4, f"the job's 4 ranks started (found {sorted(pids)})")
    time.sleep(3)  # every rank is in the step: the verification run takes well under a second
    report(job.poll() is None, "the job was still running when rank 2 was killed")
    killed_at = time.monotonic()
    if 2 in pids:
        os.kill(pids[2], signal.SIGKILL)
    try:
        output, _ = job.communicate(timeout=30)
        ended = time.monotonic() - killed_at
        report(True, f"the job ended {ended:.1f} s after the kill")
    except subprocess.TimeoutExpired:
        job.kill()
        output, _ = job.communicate()
        report(False, "the job did not end within 30 s of the kill")
    report(job.returncode != 0, f"its exit code is non-zero ({job.returncode})")
    named = f"PID {pids.get(2)}" in output or "signal 9" in output or "Killed" in output
    report(named, "its message names the killed process")
    if not named:
        print(output[-2000:])
    report(not os.path.exists(weights), "no weights directory was written")
    leftovers = [f for f in os.listdir(tmp) if f.startswith("weights")]
    report(not leftovers, f"nothing left beside it ({leftovers})")
    # No rank outlives the job: mpirun signals the others as it ends but need not wait for
    # them to finish exiting (an instrumented process takes a while), so each gets 10 s.
    def state(pid):
        """The process's state letter, or None once it is gone (or a zombie)."""
        try:
            letter = open(f"/proc/{pid}/stat").read().split()[2]
        except OSError:
            return None
        return None if letter == "Z" else letter

    gone_by = time.monotonic() + 10
    for pid in pids.values():
        while state(pid) and time.monotonic() < gone_by:
            time.sleep(0.1)
        left = state(pid)
        report(not left, f"process {pid} is gone within 10 s of the job's end" + (f" (state {left})" if left else ""))

print(f"{failures} failed")
sys.exit(1 if failures else 0)
