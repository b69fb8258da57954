#!/usr/bin/env bash
# Installs, builds and runs the whole test suite under ctest (GoogleTest units, the lit +
# FileCheck suites, the diagnostic-coverage check). Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j2
