#!/usr/bin/env bash
# Load time of a real-size file, as a whole process, against llama.cpp on the same file: `info`
# (the GGUF parsed and mapped), `eval` of one token (mapped, weights packed, one forward pass:
# the first token) and llama.cpp's llama-simple generating one token (its load and first token).
# Each runs RUNS times, page cache warm (one run first, not counted); min / median / max seconds.
#
#   scripts/bench-load.sh [FILE.gguf] [RUNS]   (default: Llama 3.2 1B's shape in Q4_K_M, 3 runs)
#   SY=./build/switchyard LLAMA_SIMPLE=llama-simple BACKEND=cpu_onednn OUT=bench-out/load
set -euo pipefail
OUT=${OUT:-bench-out/load}
SY=${SY:-./build/switchyard}
LLAMA_SIMPLE=${LLAMA_SIMPLE:-llama-simple}
BACKEND=${BACKEND:-cpu_onednn}
mkdir -p "$OUT"
FILE=${1:-$OUT/llama-3.2-1b-shape-q4_k_m.gguf}
RUNS=${2:-3}
if [ ! -f "$FILE" ]; then
  "$SY" mkmodel --preset llama-3.2-1b-shape --dtype q4_k_m --out "$FILE"
fi

seconds() {  # wall seconds of "$@"; "failed:RC" when it fails
  local s e rc=0
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1 || rc=$?
  e=$(date +%s%N)
  if [ "$rc" -ne 0 ]; then echo "failed:$rc"; else echo $(((e - s) / 1000)) | awk '{ printf "%.3f", $1 / 1e6 }'; fi
}
stats() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f / %.3f / %.3f", v[1], v[int((NR + 1) / 2)], v[NR] }'; }

declare -A cmd=(
  [info]="$SY info $FILE"
  [eval]="$SY eval $FILE --tokens 1 --backend $BACKEND"
  [llama-simple]="$LLAMA_SIMPLE -m $FILE -n 1 hi"
)
printf '%s, %s bytes, %s runs\n%-14s %s\n' "$FILE" "$(stat -c %s "$FILE")" "$RUNS" what \
  "wall s min / median / max"
for what in info eval llama-simple; do
  read -r -a argv <<<"${cmd[$what]}"
  seconds "${argv[@]}" >/dev/null
  for _ in $(seq "$RUNS"); do seconds "${argv[@]}"; echo; done | stats >"$OUT/$what.txt"
  printf '%-14s %s\n' "$what" "$(cat "$OUT/$what.txt")"
done
