#!/usr/bin/env bash
# Installs every dependency schedc needs from Debian with apt-get. Idempotent: when every
# package is already installed it prints nothing and touches nothing. Run as root (or via
# sudo when available). Used by the README's two commands and by .ci/run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git python3 python3-psutil
  antlr4 libantlr4-runtime-dev default-jre-headless
  llvm-19-dev libzstd-dev
  libfmt-dev libgtest-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev
  libboost-context-dev libjemalloc-dev
  libtomlplusplus-dev
  nlohmann-json3-dev
  librsvg2-bin
  time
  clang-19 libclang-rt-19-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
((${#missing[@]} == 0)) && exit 0

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
