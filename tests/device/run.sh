#!/usr/bin/env bash
# The GPU device check, for a machine with one GPU: builds the GPU plugin and its tests, runs the
# backend's op tests against cpu_ref and the logits comparison of a dense and a hybrid model with
# a missing device as a failure, the no-device tests, and a short benchmark (prefill and decode
# tokens/s, fraction of the device's streaming bandwidth), each under a timeout, sized for a few
# minutes on one GPU after the build (not yet timed on a device). A failed check does not stop
# the later ones. Usage: tests/device/run.sh [cuda|hip]   (default: cuda when nvidia-smi sees a
# GPU)
# Everything it prints also goes to $OUT/device-run.log when OUT is set.
set -euo pipefail
cd "$(dirname "$0")/../.."
backend=${1:-}
if [ -z "$backend" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then backend=cuda; else backend=hip; fi
fi
case "$backend" in
  cuda) flags=(-DSWITCHYARD_CUDA=ON -DSWITCHYARD_HIP=OFF) ;;
  hip) flags=(-DSWITCHYARD_CUDA=OFF -DSWITCHYARD_HIP=ON) ;;
  *) echo "usage: $0 [cuda|hip]" >&2; exit 2 ;;
esac
if [ -n "${OUT:-}" ]; then exec > >(tee "$OUT/device-run.log") 2>&1; fi

build=build-device
failed=()
step() { printf '\n== %s (%s)\n' "$1" "$(date +%T)"; }
# Runs one check; a failure is reported at the end, so one run on the device shows everything.
check() {
  local name=$1
  shift
  step "$name"
  if ! "$@"; then
    echo "FAILED: $name"
    failed+=("$name")
  fi
}

step "machine"
if [ "$backend" = cuda ]; then
  nvidia-smi -L 2>/dev/null || echo "nvidia-smi not found"
else
  rocminfo 2>/dev/null | grep -m2 "Marketing Name" || echo "rocminfo found no agent"
fi

step "build ($backend plugin, tests, CLI)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${flags[@]}" >/dev/null
if ! cmake --build "$build" -j"$(nproc)" --target switchyard "switchyard_backend_$backend" \
  switchyard_backend_cpu_ref switchyard_backend_cpu_onednn switchyard_scheduler_fixed_window \
  test_gpu_ops test_gpu_model test_gpu_nodevice >"$build/build.log" 2>&1; then
  tail -n 40 "$build/build.log"
  exit 1
fi
ldd "$build/plugins/switchyard_backend_$backend.so" | sed 's/ (0x[0-9a-f]*)//'

# A device that is missing or unusable fails these instead of skipping.
export SWITCHYARD_REQUIRE_GPU=1
t=$build/tests
check "op tests against cpu_ref" \
  timeout 300 "$t/test_gpu_ops" --gtest_filter="*/$backend" --gtest_brief=1
check "logits: dense (f32, f16, bf16, q8_0) and hybrid (f32, q8_0) models against cpu_ref" \
  timeout 300 "$t/test_gpu_model" --gtest_filter="*/$backend" --gtest_brief=1
check "no-device path (GPUs hidden) and the host's fallback" \
  timeout 300 "$t/test_gpu_nodevice" --gtest_filter="*$backend*:GpuConfig.*" --gtest_brief=1
check "benchmark: dense-100m, prompt 512, 64 decode tokens" \
  timeout 600 "$build/switchyard" bench-backend --backend "$backend" --dtypes f32,f16,q8_0 \
  --prompt-len 512 --decode-tokens 64 --models-dir "$build/models"
check "benchmark: dense-20m against hybrid-20m (Mamba + attention + MoE)" \
  timeout 600 "$build/switchyard" bench-hybrid --backend "$backend" --dtype f16 \
  --lengths 128,1024,8192 --decode-tokens 32 --models-dir "$build/models"

step "done"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi
echo "all checks passed"
