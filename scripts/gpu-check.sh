#!/usr/bin/env bash
# On a machine with GPUs: builds (scripts/build.sh), then runs everything that needs a GPU
# and records what it printed — the lit tests of test/lit/cuda (feature `gpu`), the
# cuda_equivalence test and the benchmark bench/cuda_step.py — into ${OUT:-gpu-check}/.
# Exits non-zero if a test fails. For the closing note: paste the figures it recorded.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-check}"
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || { echo "no nvidia-smi: is there a GPU?"; exit 1; }
scripts/build.sh > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
status=0
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv build/test/lit --filter cuda/ > "$out/lit-cuda.txt" 2>&1 || status=1
(cd build && ctest -R '^cuda_equivalence$' --output-on-failure -V) > "$out/cuda-equivalence.txt" 2>&1 || status=1
python3 bench/cuda_step.py build/bin/schedc > "$out/cuda-step.txt" 2>&1 || status=1
tail -5 "$out"/*.txt
exit $status
