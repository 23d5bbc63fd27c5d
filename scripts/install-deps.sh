#!/usr/bin/env bash
# Installs the Debian 12 packages Switchyard builds against.
#   scripts/install-deps.sh            everything: every feature of cmake/Features.cmake, CI's tools
#   scripts/install-deps.sh --minimal  the core, the CPU backends, the schedulers, the server, the
#                                      bench, the CLI and the tests; the optional features (KV
#                                      events, the GPU plugins, the cluster and Node SDK tests, the
#                                      fuzzers) are then skipped at configure time, with a message
set -euo pipefail
MINIMAL=0
case "${1:-}" in
  --minimal) MINIMAL=1 ;;
  "") ;;
  *) echo "usage: $0 [--minimal]" >&2; exit 2 ;;
esac
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# dnnl-config.cmake needs OpenCL (its GPU runtime). The server is a compiled cpp-httplib (also the
# bench's HTTP client) and JSON (also the Jinja and grammar layers).
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config \
  libdnnl-dev ocl-icd-opencl-dev libboost-dev libboost-filesystem-dev libtomlplusplus-dev \
  libspdlog-dev libfmt-dev libgtest-dev libcli11-dev libcpp-httplib-dev nlohmann-json3-dev >/dev/null
[ "$MINIMAL" -eq 0 ] || exit 0
# abidw/abidiff for scripts/abi-check.sh.
$SUDO apt-get install -y -qq --no-install-recommends abigail-tools >/dev/null
# The Unicode Character Database that core/text/unicode_table.cpp is generated from (checked by
# the unicode_table_current test; scripts/gen-unicode-table.py regenerates it).
$SUDO apt-get install -y -qq --no-install-recommends unicode-data python3 >/dev/null
# scripts/check-style.sh (CI): clang-format and clang-tidy on the lines a change touches; clang's
# own omp.h (libomp-15-dev) for the sources that include it (GCC's does not parse under clang).
$SUDO apt-get install -y -qq --no-install-recommends clang-format-15 clang-tidy-15 \
  libomp-15-dev >/dev/null
# Scale-out: KV cache events over ZeroMQ with msgpack (vLLM's wire format), and the parts of
# scripts/cluster.sh and its test: HAProxy, Prometheus (and promtool), curl.
$SUDO apt-get install -y -qq --no-install-recommends libzmq3-dev cppzmq-dev libmsgpack-cxx-dev \
  haproxy prometheus curl >/dev/null
# The hip backend plugin: hipcc (Debian's clang 15 with the ROCm device libraries) and the HIP
# runtime, 66 MB to download (353 MB installed). The cuda plugin builds with the CUDA toolkit in
# /usr/local/cuda, which apt does not install.
$SUDO apt-get install -y -qq --no-install-recommends hipcc libamdhip64-dev >/dev/null
# The OpenAI SDK conformance test (ctest openai_sdk_conformance) runs the official Node SDK; its
# npm package is pinned in tests/openai_sdk/package-lock.json and installed by the test. Keep a
# node that is already there (Debian's npm would replace a NodeSource node).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
# The libFuzzer targets (tests/fuzz, ctest fuzz_*): clang 15 and its compiler-rt.
$SUDO apt-get install -y -qq --no-install-recommends clang-15 libclang-common-15-dev >/dev/null
