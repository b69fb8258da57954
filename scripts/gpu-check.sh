#!/usr/bin/env bash
# gpu-check.sh [--bundle=TARBALL] — on a machine with GPUs.
# Without --bundle: builds (scripts/build.sh), runs every test — with a GPU present the lit
# tests of test/lit/cuda (feature `gpu`) and cuda_equivalence run instead of skipping —
# and the benchmark bench/cuda_step.py.
# With --bundle (made by scripts/gpu-bundle.sh where schedc builds, for a GPU machine
# without its build dependencies): runs test/lit/cuda/gpu-run.test's checks and, on two
# GPUs or more, gpu-messages.test's (by grep: no FileCheck there), the benchmark, the
# hardware model's step beside the measured one (in all, and event by event:
# bench/event_times.py), and test/lit/cuda/equivalence.py on the
# prebuilt cases (three shares at once; those the bundle was built for), and this GPU
# calibrated into $OUT/gpu-calibrated.toml (--calibrate --backend=cuda).
# Records what each printed in ${OUT:-gpu-check}/. Exits non-zero if a check fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-check}"
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || { echo "no nvidia-smi: is there a GPU?"; exit 1; }
status=0
bundle=""
[[ "${1:-}" == --bundle=* ]] && bundle="${1#--bundle=}"
if [[ -z "$bundle" ]]; then
  scripts/build.sh > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
  (cd build && ctest --output-on-failure -V -j4) > "$out/ctest.txt" 2>&1 || status=1
  python3 bench/cuda_step.py build/bin/schedc > "$out/cuda-step.txt" 2>&1 || status=1
  tail -5 "$out"/*.txt
  exit $status
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xJf "$bundle" -C "$work"
root="$(echo "$work"/*)"
source "$root/env.sh"
cases="$root/cases"
ldd "$cases/basic" > "$out/ldd.txt" 2>&1
if grep -q "not found" "$out/ldd.txt"; then
  grep "not found" "$out/ldd.txt"
  exit 1
fi

# test/lit/cuda/gpu-run.test, its lines in order (its FileCheck patterns as grep: change the
# two together).
expect() { # expect FILE PATTERN...: every extended regular expression is in FILE
  local file="$1"
  shift
  for pattern in "$@"; do
    grep -q -E -- "$pattern" "$file" || { echo "FAIL $file lacks /$pattern/"; tail -5 "$file"; status=1; }
  done
}
same_bytes() { # the predicted and measured maxima in FILE are one number
  local predicted measured
  predicted="$(sed -n 's/^Maximum Bytes: \([0-9]*\) bytes.*/\1/p' "$1")"
  measured="$(sed -n 's/^Measured Maximum Bytes: \([0-9]*\) bytes.*/\1/p' "$1")"
  [[ -n "$predicted" && "$predicted" == "$measured" ]] || { echo "FAIL $1: predicted $predicted, measured $measured"; status=1; }
}
small=(--backend=cuda --hidden=64 --tokens=16)
timeout 120 "$cases/basic" "${small[@]}" > "$out/run-fp32.txt" 2>&1
expect "$out/run-fp32.txt" "^Correct!"
same_bytes "$out/run-fp32.txt"
if [[ $status -ne 0 ]]; then
  echo "the first run on the GPU failed: $out/run-fp32.txt"
  exit 1
fi
timeout 120 "$cases/basic" "${small[@]}" --precision=bf16 --optimizer=adam --stats > "$out/run-bf16.txt" 2>&1
expect "$out/run-bf16.txt" "^Correct!" "bf16, 2 optimizer states\)" "schedc: stats: rank 0: gemm .* achieved; cublas bf16 64x64 alone"
same_bytes "$out/run-bf16.txt"
timeout 120 "$cases/basic" "${small[@]}" --no-overlap > "$out/run-no-overlap.txt" 2>&1
expect "$out/run-no-overlap.txt" "^Correct!"
same_bytes "$out/run-no-overlap.txt"
timeout 120 "$cases/basic" --backend=cuda --hidden=65536 --tokens=65536 -D layers=64 > "$out/run-oom.txt" 2>&1 &&
  { echo "FAIL: a model larger than the GPU ran"; status=1; }
expect "$out/run-oom.txt" "cudaMallocAsync of [0-9]+ bytes: out of memory"
echo "gpu-run.test's checks: $([[ $status -eq 0 ]] && echo passed || echo failed)"

# test/lit/cuda/gpu-messages.test, where there are two GPUs or more.
if (( $(grep -c "^GPU " <(nvidia-smi -L)) >= 2 )); then
  before=$status
  mpirun=("$root/mpirun" --allow-run-as-root -np 2)
  for overlap in "" --no-overlap; do
    timeout 120 "${mpirun[@]}" "$root/messages/interleaved" --backend=cuda -D ranks=2 -D chunks=2 -D layers=8 \
      -D batches=4 --hidden=64 --tokens=16 $overlap > "$out/messages$overlap.txt" 2>&1
    expect "$out/messages$overlap.txt" "^Correct!" "^Measured Maximum Bytes"
  done
  timeout 120 "${mpirun[@]}" "$root/messages/warnings" --backend=cuda --hidden=128 --tokens=64 --no-verify \
    > "$out/unreceived.txt" 2>&1 && { echo "FAIL: the run with an unreceived message succeeded"; status=1; }
  expect "$out/unreceived.txt" "warning: a message sent here from rank 0 to rank 1 is never received"
  echo "gpu-messages.test's checks: $([[ $status -eq $before ]] && echo passed || echo failed)"
fi

# The benchmark alone on the GPU, then the equivalence proofs in three shares at once.
timeout 180 python3 bench/cuda_step.py --prebuilt="$cases/basic" --mpirun="$root/mpirun" > "$out/cuda-step.txt" 2>&1 || status=1
cat "$out/cuda-step.txt"
# This GPU measured into a hardware file (cuBLAS GEMMs over m, n, k in 256 .. 8192, memory
# bandwidth, the CUDA context's memory): the table a preset takes (docs/costs.md).
timeout 300 "$cases/basic" --backend=cuda --calibrate="$out/gpu-calibrated.toml" > "$out/calibrate.txt" 2>&1 || status=1
head -12 "$out/gpu-calibrated.toml"
# The hardware model's step (dgx-h100 preset, and the file just measured; bf16) beside the
# step measured on this GPU.
for run in "basic -D batches=1" "basic -D batches=4" "ddp-1 -D ranks=1 -D batches=4"; do
  for try in 1 2 3; do
    echo "$run, try $try: $(timeout 120 "$cases"/$run -D layers=8 --backend=cuda --hidden=8192 --tokens=4096 \
      --precision=bf16 --hardware=dgx-h100 2>&1 | grep -E "^(Measured )?[Ss]tep time" | tr '\n' ' ')"
  done
  echo "$run, calibrated: $(timeout 120 "$cases"/$run -D layers=8 --backend=cuda --hidden=8192 --tokens=4096 \
    --precision=bf16 --hardware="$out/gpu-calibrated.toml" 2>&1 | grep -E "^(Measured )?[Ss]tep time" | tr '\n' ' ')"
done | tee "$out/predicted-step.txt"
# The same step event by event: each kind's measured time (--trace: every event waits for
# its device work) beside the model's (the sim backend's trace with --hardware).
step=(-D layers=8 -D batches=1 --hidden=8192 --tokens=4096 --precision=bf16)
timeout 120 "$cases/basic" --backend=cuda "${step[@]}" --trace="$out/measured-trace.json" > /dev/null 2>&1
timeout 120 "$cases/basic" --backend=sim "${step[@]}" --hardware=dgx-h100 --trace="$out/predicted-trace.json" \
  > /dev/null 2>&1
python3 bench/event_times.py "$out/measured-trace.json" "$out/predicted-trace.json" | tee "$out/event-times.txt"
names=($(ls "$cases"))
pids=()
for share in 0 1 2; do
  list=""
  for i in "${!names[@]}"; do
    (( i % 3 == share )) && list="$list,${names[$i]}"
  done
  PYTHONUNBUFFERED=1 timeout 300 python3 test/lit/cuda/equivalence.py - examples test/lit/check/Inputs "$root/mpirun" \
    --prebuilt="$cases" --cases="${list#,}" > "$out/equivalence-$share.txt" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
echo "equivalence: $(cat "$out"/equivalence-*.txt | grep -c "^ok") passed, $(cat "$out"/equivalence-*.txt | grep -c "^FAIL") failed"
grep -h "^FAIL" "$out"/equivalence-*.txt | head -20
tail -n1 "$out"/equivalence-*.txt
exit $status
