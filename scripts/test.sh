#!/usr/bin/env bash
# Build and run the whole test suite (unit, numerical, plugin-fault, config, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
echo "test.sh: build took ${SECONDS} s"
cd build
ctest --output-on-failure -j"$(nproc)"
