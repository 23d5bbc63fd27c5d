#!/usr/bin/env bash
# Issue 13's figures for two builds, interleaved run by run so that the machine's other load
# falls on both alike: bench-backend (dense-100m F32, Q8_0 and Q4_K_M: decode, prefill pp256) and
# bench-hybrid (dense-20m and hybrid-20m: decode, pp1024, pp4096). Prints min / median / max
# per figure and build, the ratio of the medians, and the min / median / max of the per-run
# ratios (each run of NEW against the run of BASE just before it). A type BASE refuses (the
# baseline predates Q4_K_M) is run on its own and its refusal kept in OUT/backend-base-*-refused.
#
#   scripts/bench-kernels.sh [RUNS]        (default 3)
#   BASE=/work/baseline/switchyard NEW=./build/switchyard OUT=bench-out/kernels THREADS=2
#   SUMMARY_ONLY=1: only summarise the outputs already in OUT
set -euo pipefail
RUNS=${1:-3}
BASE=${BASE:-/work/baseline/switchyard}
NEW=${NEW:-./build/switchyard}
OUT=${OUT:-bench-out/kernels}
THREADS=${THREADS:-2}
mkdir -p "$OUT"

for r in $(seq "$RUNS"); do
  [ -n "${SUMMARY_ONLY:-}" ] && break
  for who in base new; do
    bin=$BASE
    extra=()
    if [ "$who" = new ]; then
      bin=$NEW
      extra=(--repeat 1)
    fi
    echo "run $r: $who bench-backend" >&2
    "$bin" bench-backend --dtypes f32,q8_0 --prompt-len 256 --decode-tokens 32 \
      --threads "$THREADS" "${extra[@]}" >"$OUT/backend-$who-$r.txt"
    echo "run $r: $who bench-backend q4_k_m" >&2
    if ! "$bin" bench-backend --dtypes q4_k_m --prompt-len 256 --decode-tokens 32 \
      --threads "$THREADS" "${extra[@]}" >"$OUT/backend-$who-q4km-$r.txt" 2>&1; then
      mv "$OUT/backend-$who-q4km-$r.txt" "$OUT/backend-$who-q4km-refused"
    fi
    echo "run $r: $who bench-hybrid" >&2
    "$bin" bench-hybrid --lengths 1024,4096 --decode-tokens 32 --repeat 1 \
      --threads "$THREADS" >"$OUT/hybrid-$who-$r.txt"
  done
done

# One "who run metric value" line per figure of every output file.
extract() {
  for f in "$OUT"/backend-*.txt; do
    b=$(basename "$f" .txt)
    who=${b#backend-}
    who=${who%%-*}
    run=${b##*-}
    if [ "$who" = base ]; then  # dtype backend params MB/token prefill decode ...
      awk -v w="$who" -v r="$run" '$2 == "cpu_onednn" && ($1 == "f32" || $1 == "q8_0" || $1 == "q4_k_m") {
        print w, r, "100m-" $1 "-pp256", $5; print w, r, "100m-" $1 "-decode", $6 }' "$f"
    else  # dtype params MB/token p / p / p d / d / d frac-read GFLOP/s frac-GEMM
      first=1  # the machine's figures once per run: from the F32 / Q8_0 file
      case $b in *-q4km-*) first=0 ;; esac
      awk -v w="$who" -v r="$run" -v first="$first" '($1 == "f32" || $1 == "q8_0" || $1 == "q4_k_m") && $5 == "/" {
        print w, r, "100m-" $1 "-pp256", $4; print w, r, "100m-" $1 "-decode", $9
        print w, r, "100m-" $1 "-decode-frac-read", $14; print w, r, "100m-" $1 "-pp256-frac-gemm", $16 }
        first && /streaming read/ { print w, r, "streaming-read-GB/s", $(NF - 1) }
        first && /GEMM peak/ { for (i = 1; i <= NF; ++i) if ($i == "GFLOP/s;") print w, r, "gemm-peak-GFLOP/s", $(i - 1) }' "$f"
    fi
  done
  for f in "$OUT"/hybrid-*.txt; do
    b=$(basename "$f" .txt)
    who=${b#hybrid-}
    who=${who%-*}
    run=${b##*-}
    awk -v w="$who" -v r="$run" '
      /^decode:/ { table = "decode" } /^prefill/ { table = "prefill" }
      table == "decode" && $2 == "1" && $1 ~ /-20m$/ { print w, r, $1 "-decode", $3 }
      table == "prefill" && ($2 == "1024" || $2 == "4096") && $1 ~ /-20m$/ { print w, r, $1 "-pp" $2, $3 }' "$f"
  done
}

extract | sort -k3,3 -k1,1 -k2,2n | awk '
  function stats(arr, n,    i, j, t, s) {  # "min / median / max" of arr[1..n]
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
    return sprintf("%.2f / %.2f / %.2f", arr[1], arr[int((n + 1) / 2)], arr[n])
  }
  function median(arr, n,    i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
    return arr[int((n + 1) / 2)]
  }
  function flush(    nb, nn, nr, i, b, nw, rt, mb, mn) {
    if (metric == "") return
    nb = 0; nn = 0; nr = 0
    for (i in base) { nb++ }
    for (i in neu) { nn++ }
    for (i = 1; i <= 99; ++i) { if ((i in base) && (i in neu)) rt[++nr] = neu[i] / base[i]; if (i in base) b[i] = base[i] }
    split("", bs); split("", ns); i = 0; for (k in base) bs[++i] = base[k]; i = 0; for (k in neu) ns[++i] = neu[k]
    line = sprintf("%-28s", metric)
    if (nb) { mb = median(bs, nb); line = line sprintf("  base %-24s", stats(bs, nb)) } else line = line sprintf("  %-29s", "")
    if (nn) { mn = median(ns, nn); line = line sprintf("  new %-24s", stats(ns, nn)) }
    if (nb && nn) line = line sprintf("  new/base medians %.2fx, per run %s", mn / mb, stats(rt, nr))
    print line
    split("", base); split("", neu)
  }
  { if ($3 != metric) { flush(); metric = $3 } if ($1 == "base") base[$2] = $4; else neu[$2] = $4 }
  END { flush() }'
for f in "$OUT"/backend-*-refused; do
  [ -e "$f" ] && echo "refused: $(basename "$f"): $(grep -m1 error "$f")"
done
exit 0
