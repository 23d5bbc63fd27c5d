#!/usr/bin/env bash
# Build and run the whole test suite (unit, numerical, plugin-fault, config, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
