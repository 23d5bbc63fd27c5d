#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang 15 (ASan + UBSan) into build-fuzz, writes
# their seed corpora and runs them. Every crash, leak, sanitizer report or hang fails the run;
# its input lands in build-fuzz/findings/ (add it to tests/fuzz/regressions/<target>/ to keep it
# as a regression test). Inputs in tests/fuzz/regressions/ are re-run first.
#   scripts/fuzz.sh [--seconds 60] [--runs N] [--target gguf|http_request|plugin_note|jinja|grammar]...
#                   [--switchyard build/switchyard] [--jobs 1]
# ctest runs it for about a minute (fuzz_gguf) and less for the others; a longer local run is
#   scripts/fuzz.sh --target gguf --runs 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=60 runs=-1 jobs=1 targets=() exe=$root/build/switchyard
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    --switchyard) exe=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(gguf http_request plugin_note jinja grammar)
out=$root/build-fuzz
CXX=${CXX_FUZZ:-clang++-15}
command -v "$CXX" >/dev/null || { echo "$CXX not found (scripts/install-deps.sh installs clang-15)"; exit 1; }

# One build at a time (ctest may start several targets at once).
exec 9>"$root/.fuzz-build.lock"
flock 9
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[ -f "$out/CMakeCache.txt" ] ||
  cmake -S tests/fuzz -B "$out" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "${launcher[@]}" >/dev/null
cmake --build "$out" -j2 >/dev/null

seeds=$out/seeds
write_seeds() {  # write_seeds TARGET
  local d=$seeds/$1
  rm -rf "$d" && mkdir -p "$d"
  case $1 in
    gguf)
      # Generated: small models from the real generator, each preset's architecture.
      if [ -x "$exe" ]; then
        "$exe" mkmodel --out "$d/gen-llama.gguf" --n-vocab 260 --n-embd 8 --n-layer 1 --n-ff 16 \
          --n-head 1 --n-head-kv 1 --n-ctx 32 >/dev/null
        "$exe" mkmodel --out "$d/gen-llama-q8.gguf" --dtype q8_0 --n-vocab 260 --n-embd 32 \
          --n-layer 1 --n-ff 32 --n-head 2 --n-head-kv 1 --n-ctx 32 --tied >/dev/null
        for p in hybrid-tiny moe-tiny; do  # (mkmodel refuses mamba-tiny: its n_ff is 0)
          "$exe" mkmodel --out "$out/full-$p.gguf" --preset "$p" >/dev/null
        done
        "$out/fuzz_seeds" "$d" "$out"/full-*.gguf >/dev/null
      fi
      # Reference files written by llama.cpp (shared/ggml-reference), slimmed to metadata.
      local ref=$root/../shared/ggml-reference
      if [ -d "$ref" ]; then
        "$out/fuzz_seeds" "$d" "$ref"/models/*.gguf "$ref"/vocab/*.gguf >/dev/null 2>&1 || true
        # and their first 64 KiB as they are: header, keys and tensor infos of types the
        # reader may not know yet
        for f in "$ref"/models/*.gguf; do head -c 65536 "$f" >"$d/head-$(basename "$f")"; done
      fi
      ;;
    http_request)
      printf '\x01GET /health HTTP/1.1\r\nHost: x\r\n\r\n' >"$d/get"
      printf '\x05POST /v1/completions HTTP/1.1\r\nContent-Length: 13\r\n\r\n{"prompt":1}\n' >"$d/post"
      printf '\x03POST /v1/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: v\r\n\r\nGET / HTTP/1.0\r\n\r\n' >"$d/chunked"
      printf '\x00POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}' >"$d/expect"
      ;;
    plugin_note)
      # Small plugins with and without notes: the purpose-built C test plugins.
      for f in "$root"/build/test_plugins/switchyard_scheduler_{bad_major,note_major,note_mismatch}.so; do
        [ -f "$f" ] && cp "$f" "$d/"
      done
      printf '\x7fELF' >"$d/stub"
      ;;
    grammar)
      # The grammars and schemas (with inputs) of the regression folder.
      cp "$root"/tests/fuzz/regressions/grammar/* "$d/"
      ;;
    jinja)
      # Every feature case (with its variables) and every real chat template of the fixtures.
      "$out/fuzz_seeds" --jinja "$d" "$root"/tests/fixtures/jinja/{cases,real_templates}.json \
        >/dev/null
      ;;
  esac
}

status=0
for t in "${targets[@]}"; do
  bin=$out/fuzz_$t
  [ -x "$bin" ] || { echo "no fuzz target $t"; exit 2; }
  write_seeds "$t"
  corpus=$out/corpus/$t findings=$out/findings
  mkdir -p "$corpus" "$findings"
  # Known findings first: each must now pass.
  reg=$root/tests/fuzz/regressions/$t
  if [ -d "$reg" ] && [ -n "$(ls -A "$reg" 2>/dev/null)" ]; then
    "$bin" -runs=1 "$reg"/* >"$out/$t-regressions.log" 2>&1 ||
      { echo "fuzz $t: a regression input fails again:"; tail -40 "$out/$t-regressions.log"; status=1; }
  fi
  log=$out/$t.log
  rm -f "$out"/fuzz-*.log
  parallel=()  # -jobs makes libFuzzer fork workers that log to fuzz-<n>.log in the current dir
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  set +e
  (cd "$out" && "$bin" -max_total_time="$seconds" -runs="$runs" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 "${parallel[@]}" -print_final_stats=1 -artifact_prefix="$findings/$t-" \
    "$corpus" "$seeds/$t" >"$log" 2>&1)
  rc=$?
  set -e
  execs=$(cat "$log" $(ls "$out"/fuzz-*.log 2>/dev/null) |
    sed -n 's/^stat::number_of_executed_units: *//p' | awk '{s+=$1} END {print s+0}')
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  n_seeds=$(ls "$seeds/$t" | wc -l)
  n_corpus=$(ls "$corpus" | wc -l)
  if [ $rc -ne 0 ]; then
    echo "fuzz $t: FINDING after $execs executions (exit $rc); input in $findings:"
    grep -E "ERROR|SUMMARY|timeout|==[0-9]+==" "$log" | head -20
    status=1
  else
    echo "fuzz $t: $execs executions in ${secs:-$seconds} s, $n_seeds seeds, corpus $n_corpus, no crash, no hang"
  fi
done
exit $status
