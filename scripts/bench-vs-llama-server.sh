#!/usr/bin/env bash
# Serving one GGUF file from Switchyard and from llama.cpp's llama-server with the same OpenAI
# clients (scripts/openai-load.mjs): for each client count, output tokens/s and TTFT / end-to-end
# p50 and p99, one JSON line per server and count. Both servers get the same threads, 16
# sequences and room for 16 x 4096 tokens of context (F16 KV); Switchyard runs configs/optimized.toml's
# scheduler (chunked prefill, adaptive budget, prefix caching), llama-server its defaults
# (continuous batching, prompt cache).
#
#   scripts/bench-vs-llama-server.sh FILE.gguf
#   CLIENTS="1 4 16" DURATION=120 THREADS=2 SY=./build/switchyard LLAMA_SERVER=llama-server
#   OUT=bench-out/vs-llama-server; openai-load.mjs's MAX_TOKENS, PROMPT_MIN, PROMPT_MAX, PREFIX
set -euo pipefail
FILE=${1:?usage: scripts/bench-vs-llama-server.sh FILE.gguf}
CLIENTS=${CLIENTS:-1 4 16}
DURATION=${DURATION:-120}
THREADS=${THREADS:-2}
SY=${SY:-./build/switchyard}
LLAMA_SERVER=${LLAMA_SERVER:-llama-server}
OUT=${OUT:-bench-out/vs-llama-server}
PORT=${PORT:-18080}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
FILE=$(realpath "$FILE")

wait_ready() {  # until GET URL answers 200, or the server exits
  for _ in $(seq 600); do
    curl -sf "$1" >/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { echo "the server exited; see $OUT" >&2; return 1; }
    sleep 1
  done
  return 1
}

load() {  # NAME: every client count against the server on PORT
  for c in $CLIENTS; do
    # prompts of their own per count (the seed): an earlier count's must not be cached
    SEED=$((${SEED:-1} * 1000 + c)) node "$here/openai-load.mjs" "http://127.0.0.1:$PORT" "$c" \
      "$DURATION" | sed "s/^{/{\"server\":\"$1\",/"
  done
}

cat >"$OUT/switchyard.toml" <<TOML
[serve]
host = "127.0.0.1"
port = $PORT
model_name = "bench"
max_queue = 1024
request_timeout_s = 3600
[model]
path = "$FILE"
[backend]
plugin = "cpu_onednn"
threads = $THREADS
[scheduler]
plugin = "dynamic"
chunked_prefill = true
adaptive = true
prefix_ordering = true
[engine]
max_seqs = 16
max_batch_tokens = 512
kv_blocks = 4096
kv_dtype = "f16"
prefix_caching = true
overlap = true
[sampling]
temperature = 0.0
TOML

"$LLAMA_SERVER" -m "$FILE" -t "$THREADS" -np 16 -c 65536 --port "$PORT" >"$OUT/llama-server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_ready "http://127.0.0.1:$PORT/health" "$pid"
load llama-server
kill "$pid"; wait "$pid" 2>/dev/null || true

"$SY" serve --config "$OUT/switchyard.toml" >"$OUT/switchyard.log" 2>&1 &
pid=$!
wait_ready "http://127.0.0.1:$PORT/health" "$pid"
load switchyard
kill "$pid"; wait "$pid" 2>/dev/null || true
