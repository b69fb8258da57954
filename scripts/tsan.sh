#!/usr/bin/env bash
# Builds schedc with ThreadSanitizer (gcc, into build-tsan/; the cuda backend left out) and
# runs what a run on several threads (engine/Parallel.cpp) can race in: the unit tests of the
# World, and the lit suites of the checker (check, driver, examples) with every run on three
# threads (SCHEDC_THREADS=3). Not limits/ nor the fibers' own tests: ThreadSanitizer counts
# each fiber as a thread and stops at 8128 alive, and the guard-page death tests crash it.
# Reports go to files; the script fails if any process reported a race, whatever its test
# concluded. (A check that it finds one: with Rank::send passing its own value to another
# lane, gpipe on four threads reports a race on the value's count.)
#   scripts/tsan.sh              build and run all of it
#   scripts/tsan.sh check/       only the lit tests under these folders (and the unit tests)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [[ ! -f build-tsan/build.ninja ]]; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHEDC_SANITIZE=thread \
    -DSCHEDC_CUDA=OFF >/dev/null
fi
cmake --build build-tsan -j2
logs=$PWD/build-tsan/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"
export TSAN_OPTIONS=log_path=$logs/tsan:exitcode=86:second_deadlock_stack=1
export SCHEDC_THREADS=3
status=0
build-tsan/bin/schedc_unit_tests --gtest_brief=1 --gtest_filter='Parallel*:Scheduling*:WorldChannels*:ValueBlocks*' ||
  status=$?
folders=("$@")
[[ ${#folders[@]} -gt 0 ]] || folders=(check/ driver/ examples/)
lit=$(find /usr/lib/llvm-19 -name lit.py -path '*utils/lit/*' | head -n 1)
python3 "$lit" -sv "${folders[@]/#/build-tsan/test/lit/}" || status=$?
source scripts/sanitizer-reports.sh
finish_with_reports "$logs" "WARNING: ThreadSanitizer|ERROR: ThreadSanitizer" tsan "$status"
