#!/usr/bin/env bash
# Builds the libFuzzer targets under AddressSanitizer + UndefinedBehaviorSanitizer (clang-19,
# into build-fuzz/) and runs each: first over its regression inputs (test/fuzz/regressions:
# every finding ever fixed), then fuzzing from a seed corpus of every .sched file in the
# repository, with the language's dictionary, RSS and time limits.
#   scripts/fuzz.sh                      a smoke run: 120 s per target (CI)
#   scripts/fuzz.sh --runs=1000000       a long run (figures in docs/fuzzing.md)
#   scripts/fuzz.sh --seconds=600 FuzzCheck
# Findings land in build-fuzz/findings/; the script exits non-zero if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

limit=(-max_total_time=120)
targets=()
for a in "$@"; do
  case "$a" in
    --runs=*) limit=(-runs="${a#--runs=}") ;;
    --seconds=*) limit=(-max_total_time="${a#--seconds=}") ;;
    Fuzz*) targets+=("$a") ;;
    *) echo "usage: scripts/fuzz.sh [--runs=N | --seconds=S] [FuzzFrontEnd] [FuzzCheck]" >&2; exit 2 ;;
  esac
done
((${#targets[@]})) || targets=(FuzzFrontEnd FuzzCheck)

if [[ ! -f build-fuzz/build.ninja ]]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DSCHEDC_SANITIZE=address,undefined -DSCHEDC_FUZZ=ON -DSCHEDC_CUDA=OFF >/dev/null
fi
cmake --build build-fuzz -j2 --target "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0:handle_abort=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p build-fuzz/findings
for t in "${targets[@]}"; do
  bin=build-fuzz/bin/$t
  regressions=test/fuzz/regressions/$t
  if compgen -G "$regressions/*" >/dev/null; then
    echo "== $t: regression inputs"
    "$bin" -rss_limit_mb=2048 -timeout=30 "$regressions"/*
  fi
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  seeds=$(mktemp -d)
  find examples stdlib test/lit -name '*.sched' | while read -r f; do cp "$f" "$seeds/${f//\//_}"; done
  echo "== $t: fuzzing (${limit[*]})"
  log=build-fuzz/$t.log
  status=0
  "$bin" "$corpus" "$seeds" -dict=test/fuzz/sched.dict -max_len=8192 -rss_limit_mb=2048 -timeout=30 \
    -artifact_prefix=build-fuzz/findings/$t- -print_final_stats=1 "${limit[@]}" >"$log" 2>&1 || status=$?
  rm -rf "$seeds"
  grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$log" | tail -n 40
  ((status == 0)) || { echo "fuzz: $t found a problem (see build-fuzz/findings/)" >&2; exit 1; }
done
