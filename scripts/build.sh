#!/usr/bin/env bash
# Installs the dependencies (scripts/setup.sh), configures and builds schedc into build/.
# The compiler lands at build/bin/schedc. Safe to run again: only what changed is rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build -j2
