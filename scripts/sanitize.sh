#!/usr/bin/env bash
# Builds schedc with AddressSanitizer + UndefinedBehaviorSanitizer (gcc, into build-asan/;
# the cuda backend left out) and runs the whole test suite under ctest there: every lit
# test, unit test and proof runs instrumented, compiled schedules included (they link the
# instrumented runtime). Reports go to files (ASan warns on stderr that it does not fully
# support swapcontext, which would change every compared output), and the script fails if
# any process reported an error, whatever its test concluded. Leaks are checked in every
# process but those of MPI jobs: Open MPI's plugins leak at exit from libraries already
# unloaded, which no suppression can name (test/sanitizer/lsan.supp covers the rest).
#   scripts/sanitize.sh            build and run everything
#   scripts/sanitize.sh -R lit     pass ctest's own options through
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [[ ! -f build-asan/build.ninja ]]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSCHEDC_SANITIZE=address,undefined -DSCHEDC_CUDA=OFF >/dev/null
fi
cmake --build build-asan -j2
logs=$PWD/build-asan/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"
export ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:log_path=$logs/asan:exitcode=86
export LSAN_OPTIONS=suppressions=$PWD/test/sanitizer/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan
export SCHEDC_MPI_ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 # read by the tests that start MPI jobs
status=0
(cd build-asan && ctest --output-on-failure -j2 "$@") || status=$?
source scripts/sanitizer-reports.sh
finish_with_reports "$logs" "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" sanitize "$status"
