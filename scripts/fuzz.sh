#!/usr/bin/env bash
# Builds the libFuzzer targets under AddressSanitizer + UndefinedBehaviorSanitizer (clang-19,
# into build-fuzz/) and runs each: first over its regression inputs (test/fuzz/regressions:
# every finding ever fixed), then fuzzing from a seed corpus of every .sched file in the
# repository (for FuzzPytorchCsv, every .csv: PyTorch schedule files), with the dictionary of
# the language (or of the CSV actions), RSS and time limits.
#   scripts/fuzz.sh                              a smoke run: 120 s per target (CI)
#   scripts/fuzz.sh --runs=1000000 --jobs=2      a long run (figures in docs/fuzzing.md)
#   scripts/fuzz.sh --seconds=600 FuzzCheck
# --jobs=N fuzzes in N processes at once (libFuzzer's fork mode: a parent hands short jobs
# to N children over one corpus and restarts them, so no process runs long enough for ASan's
# allocator to slow down, as FuzzCheck's did after ten minutes: 500 -> 20 exec/s).
# FuzzCheck runs without ASan's stack-use-after-return detection: its fake stacks, one set
# per rank's fiber, made it 1.4x slower (scripts/sanitize.sh keeps it on for the test suite).
# Findings land in build-fuzz/findings/; the script exits non-zero if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

seconds=120 runs= jobs=1
targets=()
for a in "$@"; do
  [[ $a =~ ^--[a-z]+=[1-9][0-9]*$ || $a != --* ]] || a=bad
  case "$a" in
    --runs=*) runs=${a#--runs=} ;;
    --seconds=*) seconds=${a#--seconds=} ;;
    --jobs=*) jobs=${a#--jobs=} ;;
    FuzzFrontEnd | FuzzCheck | FuzzPytorchCsv) targets+=("$a") ;;
    *) echo "usage: scripts/fuzz.sh [--runs=N | --seconds=S] [--jobs=N] [FuzzFrontEnd] [FuzzCheck] [FuzzPytorchCsv]" >&2; exit 2 ;;
  esac
done
if [[ -n "$runs" ]]; then limit=(-runs="$runs"); else limit=(-max_total_time="$seconds"); fi
((${#targets[@]})) || targets=(FuzzFrontEnd FuzzCheck FuzzPytorchCsv)

if [[ ! -f build-fuzz/build.ninja ]]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DSCHEDC_SANITIZE=address,undefined -DSCHEDC_FUZZ=ON -DSCHEDC_CUDA=OFF >/dev/null
fi
cmake --build build-fuzz -j2 --target "${targets[@]}"

asan_options=detect_leaks=1:allocator_may_return_null=0:handle_abort=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p build-fuzz/findings
for t in "${targets[@]}"; do
  bin=build-fuzz/bin/$t
  regressions=test/fuzz/regressions/$t
  options=$asan_options
  [[ $t == FuzzCheck ]] && options+=:detect_stack_use_after_return=0
  if compgen -G "$regressions/*" >/dev/null; then
    echo "== $t: regression inputs"
    ASAN_OPTIONS=$options "$bin" -rss_limit_mb=2048 -timeout=30 "$regressions"/*
  fi
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  seeds=$(mktemp -d)
  # Seeds: the schedules, or for the CSV target the PyTorch files (and their dictionary).
  kind=sched dict=test/fuzz/sched.dict
  [[ $t == FuzzPytorchCsv ]] && kind=csv dict=test/fuzz/csv.dict
  find examples stdlib test/lit -name "*.$kind" | while read -r f; do cp "$f" "$seeds/${f//\//_}"; done
  echo "== $t: fuzzing (${limit[*]}, $jobs process(es))"
  rm -f build-fuzz/findings/"$t"-*
  args=("$corpus" "$seeds" -dict="$dict" -max_len=8192 -rss_limit_mb=2048 -timeout=30
    -artifact_prefix="build-fuzz/findings/$t-" -print_final_stats=1 "${limit[@]}")
  log=build-fuzz/$t.log
  status=0
  if ((jobs == 1)); then
    ASAN_OPTIONS=$options "$bin" "${args[@]}" >"$log" 2>&1 || status=$?
    total=$(awk '/^stat::number_of_executed_units/ {print $2}' "$log")
  else
    ASAN_OPTIONS=$options "$bin" "${args[@]}" -fork="$jobs" >"$log" 2>&1 || status=$?
    total=$(grep -oE '^#[0-9]+: ' "$log" | tail -n 1 | tr -dc 0-9)
  fi
  rm -rf "$seeds"
  grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$log" | tail -n 40
  echo "== $t: ${total:-no} executions in all, corpus $(ls "$corpus" | wc -l) inputs"
  if compgen -G "build-fuzz/findings/$t-*" >/dev/null; then status=1; fi
  ((status == 0)) || { echo "fuzz: $t found a problem (see build-fuzz/findings/)" >&2; exit 1; }
done
