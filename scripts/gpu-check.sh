#!/usr/bin/env bash
# On a machine with GPUs: builds (scripts/build.sh), runs every test — with a GPU present
# the lit tests of test/lit/cuda (feature `gpu`) and cuda_equivalence run instead of
# skipping — and the benchmark bench/cuda_step.py, and records what each printed in
# ${OUT:-gpu-check}/. Exits non-zero if a test fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-check}"
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || { echo "no nvidia-smi: is there a GPU?"; exit 1; }
scripts/build.sh > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
status=0
(cd build && ctest --output-on-failure -V -j4) > "$out/ctest.txt" 2>&1 || status=1
python3 bench/cuda_step.py build/bin/schedc > "$out/cuda-step.txt" 2>&1 || status=1
tail -5 "$out"/*.txt
exit $status
