#!/usr/bin/env bash
# bundle.sh SCHEDC — scripts/gpu-bundle.sh's bundle works where it is unpacked: built with
# the cpu backend standing in for the GPU (as cuda_equivalence_stand_in), unpacked into a
# fresh folder, its env.sh sourced, two cases of test/lit/cuda/equivalence.py run from it
# (--prebuilt) through the bundle's own mpirun (one process: an MPI singleton), and
# gpu-messages.test's interleaved 1F1B on two processes through its orterun. So the way the
# GPU checks reach a machine without schedc's build dependencies cannot rot while no GPU
# runs it.
set -euo pipefail
schedc="$(realpath "$1")"
cd "$(dirname "$0")/../../.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
SCHEDC="$schedc" scripts/gpu-bundle.sh "$tmp/gpu-bundle" --stand-in=cpu --cases=grad_accum,zbv-1
mkdir "$tmp/there"
tar -xJf "$tmp/gpu-bundle.tar.xz" -C "$tmp/there"
source "$tmp/there/gpu-bundle/env.sh" 2>/dev/null # no CUDA libraries are needed here
python3 test/lit/cuda/equivalence.py - examples test/lit/check/Inputs "$tmp/there/gpu-bundle/mpirun" \
  --prebuilt="$tmp/there/gpu-bundle/cases" --stand-in=cpu --cases=grad_accum,zbv-1
[[ -n "${SCHEDC_MPI_ASAN_OPTIONS:-}" ]] && export ASAN_OPTIONS="$SCHEDC_MPI_ASAN_OPTIONS"
there="$tmp/there/gpu-bundle"
"$there/mpirun" --allow-run-as-root -np 2 -x OPENBLAS_NUM_THREADS=1 "$there/messages/interleaved" --backend=cpu \
  -D ranks=2 -D chunks=2 -D layers=8 -D batches=4 --hidden=64 --tokens=16 > "$tmp/messages.txt"
grep -q "^Correct!" "$tmp/messages.txt" || { cat "$tmp/messages.txt"; exit 1; }
echo "interleaved 1F1B on two processes through the bundle's orterun: Correct!"
