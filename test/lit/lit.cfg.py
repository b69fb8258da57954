# lit configuration of schedc's FileCheck suites. Each folder holds the tests of one phase
# (parse, sema, driver, limits, examples). Substitutions:
#   %schedc        the compiler under test (in lit_threads, thread_matrix.py running it)
#   %schedc_exe    its executable, always (to copy it, run ldd on it, pass it to a script)
#   %expect_exit N CMD...   runs CMD and fails unless it exits with status N
#   %examples      the examples/ folder;  %stdlib  the stdlib/ folder
#   %python        the Python interpreter (to generate large inputs)
#   %mpirun        mpirun with the flags a root container needs (feature `mpi`)
# Features: `mpi`; `cuda` (the cuda backend is built); `gpu` (nvidia-smi lists a GPU: the
# tests that run on one are skipped cleanly without); `gpus2` (it lists two or more);
# `asan` (built with -DSCHEDC_SANITIZE=...: tests of address-space limits cannot run under
# AddressSanitizer, which reserves terabytes of shadow memory).
import os
import re
import lit.formats

config.name = "schedc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".sched", ".test"]
config.test_source_root = os.path.dirname(__file__)
# Where the tests' outputs go: test/lit, or (--param outputs=NAME) a folder of its own, for a
# second run of the suite beside the first (ctest's lit_threads).
config.test_exec_root = os.path.join(os.path.dirname(config.schedc_bin), "test", lit_config.params.get("outputs", "lit"))
config.excludes = ["Inputs"]

config.environment["PATH"] = os.pathsep.join(
    [config.schedc_bin, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["SCHEDC_STDLIB"] = os.path.join(config.schedc_src, "stdlib")
# The default of --threads, where the environment sets it.
if os.environ.get("SCHEDC_THREADS"):
    config.environment["SCHEDC_THREADS"] = os.environ["SCHEDC_THREADS"]

# ctest's lit_threads (`--param thread_matrix=8,1,2`): every schedc runs on the first count
# of threads, and one that fails runs again on each other count and must report the same
# (thread_matrix.py).
schedc = os.path.join(config.schedc_bin, "schedc")
config.substitutions.append(("%schedc_exe", schedc))  # the executable itself, always (ldd)
if lit_config.params.get("thread_matrix"):
    config.environment["SCHEDC_THREADS"] = lit_config.params["thread_matrix"].split(",")[0]
    schedc = " ".join([config.python, os.path.join(config.test_source_root, "thread_matrix.py"),
                       lit_config.params["thread_matrix"], schedc])
config.substitutions.append(("%schedc", schedc))
config.substitutions.append(("%expect_exit", config.python + " " + os.path.join(config.test_source_root, "expect_exit.py")))
config.substitutions.append(("%examples", os.path.join(config.schedc_src, "examples")))
config.substitutions.append(("%stdlib", os.path.join(config.schedc_src, "stdlib")))
config.substitutions.append(("%python", config.python))
# The runtime ABI's version, as runtime.h defines it (a new operation bumps it; no test
# needs editing for that).
with open(os.path.join(config.schedc_src, "runtime", "include", "schedc", "runtime.h")) as header:
    abi = re.search(r"^#define SCHEDC_ABI_VERSION (\d+)$", header.read(), re.M)
if not abi:
    lit_config.fatal("runtime.h defines no SCHEDC_ABI_VERSION")
config.substitutions.append(("%abi_version", abi.group(1)))

if "address" in getattr(config, "sanitize", ""):
    config.available_features.add("asan")

# MPI (the cpu backend): %mpirun runs a program on N processes as root, oversubscribed.
import shutil
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    prefix = ""
    if os.environ.get("SCHEDC_MPI_ASAN_OPTIONS"):  # scripts/sanitize.sh: no leak checks in MPI jobs
        prefix = "env ASAN_OPTIONS=" + os.environ["SCHEDC_MPI_ASAN_OPTIONS"] + " "
        config.environment["SCHEDC_MPI_ASAN_OPTIONS"] = os.environ["SCHEDC_MPI_ASAN_OPTIONS"]
    config.substitutions.append(("%mpirun", prefix + mpirun + " --allow-run-as-root --oversubscribe -x OPENBLAS_NUM_THREADS=1"))

# The cuda backend: built (feature `cuda`), and a GPU to run it on (feature `gpu`).
import subprocess
if config.have_cuda:
    config.available_features.add("cuda")
smi = shutil.which("nvidia-smi")
listing = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout if smi else ""
gpus = sum(1 for line in listing.splitlines() if line.startswith("GPU "))
if gpus >= 1:
    config.available_features.add("gpu")
if gpus >= 2:
    config.available_features.add("gpus2")
