#!/usr/bin/env bash
# Prefill and decode of GGUF files against llama.cpp on the same files, back to back: Switchyard's
# `bench-backend --model` and llama.cpp's llama-bench, with the same prompt, decode length,
# context depth, threads and runs. Prints a Markdown table: min / median / max tokens/s of each,
# the ratio of the medians, and the fraction of the streaming-read bandwidth Switchyard's decode
# reached (bench-backend measures it in the same run).
#
#   scripts/bench-vs-llamacpp.sh FILE.gguf [FILE.gguf ...]
#   P=512 N=64 DEPTHS="0 8192" RUNS=3 THREADS=2 SY=./build/switchyard LLAMA_BENCH=llama-bench
#   OUT=bench-out/vs-llamacpp (each tool's raw output is kept there)
set -euo pipefail
P=${P:-512}
N=${N:-64}
DEPTHS=${DEPTHS:-0}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
SY=${SY:-./build/switchyard}
LLAMA_BENCH=${LLAMA_BENCH:-llama-bench}
OUT=${OUT:-bench-out/vs-llamacpp}
[ $# -ge 1 ] || { echo "usage: scripts/bench-vs-llamacpp.sh FILE.gguf [FILE.gguf ...]" >&2; exit 2; }
mkdir -p "$OUT"

echo "| file | depth | Switchyard pp$P | llama.cpp pp$P | ratio | Switchyard tg$N | llama.cpp tg$N | ratio | Switchyard frac read |"
echo "|---|---|---|---|---|---|---|---|---|"
for file in "$@"; do
  name=$(basename "$file" .gguf)
  for d in $DEPTHS; do
    sy_out="$OUT/$name-d$d.switchyard.txt"
    lc_out="$OUT/$name-d$d.llamacpp.jsonl"
    "$SY" bench-backend --model "$file" -p "$P" -n "$N" -d "$d" -r "$RUNS" --threads "$THREADS" >"$sy_out"
    "$LLAMA_BENCH" -m "$file" -p "$P" -n "$N" -d "$d" -r "$RUNS" -t "$THREADS" -o jsonl >"$lc_out"
    python3 - "$sy_out" "$lc_out" "$name" "$d" <<'EOF'
import json, statistics, sys
sy_path, lc_path, name, depth = sys.argv[1:]
# bench-backend's row: label params MB/token KV-MB, then "min / median / max" for prefill,
# decode and frac read
row = next(l.split() for l in open(sy_path) if l.split()[:1] == [name])
triple = lambda i: [float(row[i]), float(row[i + 2]), float(row[i + 4])]
sy_pp, sy_tg, frac = triple(4), triple(9), triple(14)
lc = [json.loads(l) for l in open(lc_path) if l.strip()]
def lc_triple(prompt):
    t = next(t for t in lc if (t["n_prompt"] > 0) == prompt)
    s = sorted(t["samples_ts"])
    return [s[0], statistics.median(s), s[-1]]
lc_pp, lc_tg = lc_triple(True), lc_triple(False)
fmt = lambda v: " / ".join(f"{x:.1f}" for x in v)
print(f"| {name} | {depth} | {fmt(sy_pp)} | {fmt(lc_pp)} | {sy_pp[1] / lc_pp[1]:.2f} | "
      f"{fmt(sy_tg)} | {fmt(lc_tg)} | {sy_tg[1] / lc_tg[1]:.2f} | "
      + " / ".join(f"{x:.2f}" for x in frac) + " |")
EOF
  done
done
