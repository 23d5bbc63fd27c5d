#!/usr/bin/env bash
# Configure and build into ./build (Release with debug info); pass extra CMake flags through.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j"$(nproc)"
