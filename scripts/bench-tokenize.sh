#!/usr/bin/env bash
# Tokenizer throughput against llama.cpp's llama-tokenize on the same vocabulary file: texts of
# about 10k, 100k and 1M tokens (prefixes of one corpus, repeated to 4 MB) and three that stress
# one word (100k bytes of one letter, 400k bytes of base64, 100k spaces). Each tool runs RUNS times per text as
# a whole process; an empty text's time is the load, subtracted before tokens/s, so that the
# per-token cost at each size shows whether the time stays linear. Both must give the same ids
# (llama-tokenize without BOS, special-token parsing or escape processing, as `switchyard
# tokenize` reads a file); a mismatch stops the script, a failing llama-tokenize (exit status;
# 139: it crashed) is reported on its row. Where Switchyard follows Hugging Face rather than
# llama.cpp (gpt-4o's combining marks, Qwen's NFC), give a CORPUS without such text.
#
#   scripts/bench-tokenize.sh VOCAB.gguf [RUNS]        (default 3)
#   SY=./build/switchyard LLAMA_TOKENIZE=llama-tokenize CORPUS=FILE OUT=bench-out/tokenize
#   CORPUS defaults to this checkout's Markdown and C++ sources with the reference vocabularies'
#   multilingual test strings (../shared/ggml-reference/vocab/*.inp).
set -euo pipefail
VOCAB=${1:?usage: scripts/bench-tokenize.sh VOCAB.gguf [RUNS]}
RUNS=${2:-3}
SY=${SY:-./build/switchyard}
LLAMA_TOKENIZE=${LLAMA_TOKENIZE:-llama-tokenize}
OUT=${OUT:-bench-out/tokenize}
mkdir -p "$OUT"

if [ -z "${CORPUS:-}" ]; then
  CORPUS=$OUT/corpus.txt
  {
    cat ../shared/ggml-reference/vocab/*.inp 2>/dev/null || true
    git ls-files '*.md' '*.cpp' | xargs cat
  } >"$CORPUS"
fi

# The texts: name and file.
: >"$OUT/repeated.txt"
while [ "$(wc -c <"$OUT/repeated.txt")" -lt 4000000 ]; do cat "$CORPUS" >>"$OUT/repeated.txt"; done
head -c 40000 "$OUT/repeated.txt" >"$OUT/t10k.txt"
head -c 400000 "$OUT/repeated.txt" >"$OUT/t100k.txt"
head -c 4000000 "$OUT/repeated.txt" >"$OUT/t1m.txt"
: >"$OUT/empty.txt"
/usr/bin/env python3 - "$OUT" <<'EOF'
import random, sys
out = sys.argv[1]
random.seed(1)
alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
open(f"{out}/letter.txt", "w").write("a" * 100000)
open(f"{out}/base64.txt", "w").write("".join(random.choice(alphabet) for _ in range(400000)))
open(f"{out}/spaces.txt", "w").write(" " * 100000)
EOF

seconds() {  # seconds of wall time of "$@", output to $IDS; "failed:RC" when it fails
  local s e rc=0
  s=$(date +%s%N)
  "$@" >"$IDS" || rc=$?
  e=$(date +%s%N)
  if [ "$rc" -ne 0 ]; then
    echo "failed:$rc"
    return
  fi
  echo "$(((e - s) / 1000))" | awk '{ printf "%.4f", $1 / 1e6 }'
}
sy_ids() {
  local rc=0
  "$SY" tokenize "$VOCAB" --file "$1" >"$OUT/sy.raw" || rc=$?
  tr ' ' '\n' <"$OUT/sy.raw" | grep -v '^$' || true
  return "$rc"
}
llama_ids() {
  local rc=0
  "$LLAMA_TOKENIZE" -m "$VOCAB" -f "$1" --ids --log-disable --no-bos --no-parse-special \
    --no-escape >"$OUT/ll.raw" 2>/dev/null || rc=$?
  tr -d '[] ' <"$OUT/ll.raw" | tr ',' '\n' | grep -v '^$' || true
  return "$rc"
}
stats() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f / %.3f / %.3f", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-8s %8s %8s  %-26s %-26s %9s %9s %6s\n' text bytes tokens \
  "switchyard s min/med/max" "llama-tokenize s" "sy tok/s" "ll tok/s" ratio
load_sy=0
load_ll=0
for t in empty t10k t100k t1m letter base64 spaces; do
  f=$OUT/$t.txt
  : >"$OUT/$t.sy.s"
  : >"$OUT/$t.ll.s"
  for _ in $(seq "$RUNS"); do
    IDS=$OUT/$t.sy.ids seconds sy_ids "$f" >>"$OUT/$t.sy.s"
    echo >>"$OUT/$t.sy.s"
    IDS=$OUT/$t.ll.ids seconds llama_ids "$f" >>"$OUT/$t.ll.s"
    echo >>"$OUT/$t.ll.s"
  done
  if grep -q failed "$OUT/$t.sy.s"; then
    echo "$t: switchyard tokenize failed ($(grep -m1 failed "$OUT/$t.sy.s"))" >&2
    exit 1
  fi
  if grep -q failed "$OUT/$t.ll.s"; then  # a crash of the peer is a result, not a stop
    printf '%-8s %8d %8d  %-26s llama-tokenize %s\n' "$t" "$(wc -c <"$f")" \
      "$(wc -l <"$OUT/$t.sy.ids")" "$(stats <"$OUT/$t.sy.s")" "$(grep -m1 failed "$OUT/$t.ll.s")"
    continue
  fi
  if ! cmp -s "$OUT/$t.sy.ids" "$OUT/$t.ll.ids"; then
    echo "$t: the ids differ from llama-tokenize's ($OUT/$t.sy.ids, $OUT/$t.ll.ids)" >&2
    exit 1
  fi
  n=$(wc -l <"$OUT/$t.sy.ids")
  msy=$(median <"$OUT/$t.sy.s")
  mll=$(median <"$OUT/$t.ll.s")
  if [ "$t" = empty ]; then
    load_sy=$msy
    load_ll=$mll
  fi
  awk -v t="$t" -v b="$(wc -c <"$f")" -v n="$n" -v ssy="$(stats <"$OUT/$t.sy.s")" \
    -v sll="$(stats <"$OUT/$t.ll.s")" -v msy="$msy" -v mll="$mll" -v lsy="$load_sy" \
    -v lll="$load_ll" 'BEGIN {
      rsy = n > 0 && msy > lsy ? n / (msy - lsy) : 0; rll = n > 0 && mll > lll ? n / (mll - lll) : 0
      printf "%-8s %8d %8d  %-26s %-26s %9.0f %9.0f %6.2f\n", t, b, n, ssy, sll, rsy, rll,
        (rll > 0 ? rsy / rll : 0) }'
done
echo "tok/s: tokens over the median time less the empty text's median (the vocabulary's load);"
echo "ratio: switchyard's tok/s over llama-tokenize's. Same ids for every text."
