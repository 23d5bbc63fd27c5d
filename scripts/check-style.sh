#!/usr/bin/env bash
# CI's style checks on the lines a change touches (a branch: since its merge base with main; main
# itself: its last commit, i.e. what the last merge brought in):
#   scripts/check-style.sh format   clang-format (the repo's .clang-format) on changed lines;
#                                   fails listing the diff that would fix them
#   scripts/check-style.sh tidy     clang-tidy's bugprone checks on changed lines of C++ sources,
#                                   with build/compile_commands.json (run after scripts/build.sh)
# BASE=<commit> overrides the base. Frozen ABI fixtures and generated tables are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-format}

pick() {  # the newest of the versions install-deps.sh installs, else the unversioned tool
  for t in "$1-15" "$1"; do command -v "$t" >/dev/null && { echo "$t"; return; }; done
  echo "check-style: $1 is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
}

if [ -z "${BASE:-}" ]; then
  main=$(git rev-parse --verify -q origin/main || git rev-parse --verify -q main || true)
  BASE=$([ -n "$main" ] && git merge-base HEAD "$main" || true)
  if [ -z "$BASE" ] || [ "$BASE" = "$(git rev-parse HEAD)" ]; then
    BASE=$(git rev-parse -q --verify HEAD~1 || true)
    [ -n "$BASE" ] || { echo "check-style: no base commit to compare with (a shallow clone?): skipped"; exit 0; }
  fi
fi
paths=(-- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh'
       ':!tests/abi_fixtures/**' ':!core/text/unicode_table.cpp')
echo "check-style $mode: lines changed since $(git rev-parse --short "$BASE")"

case "$mode" in
  format)
    # clang-format-diff over a rename-aware diff: a moved file is checked on its changed lines
    # only, as the history sees it.
    fmt=$(pick clang-format)
    out=$(git diff -U0 -M --no-color "$BASE" "${paths[@]}" |
          "$(pick clang-format-diff)" -p1 -binary "$(command -v "$fmt")" -style=file)
    if [ -z "$out" ]; then
      echo "check-style format: ok"
      exit 0
    fi
    echo "$out"
    echo "check-style format: the changed lines above are not formatted as .clang-format says;" \
         "fix with: git diff -U0 -M $(git rev-parse --short "$BASE") -- '*.c' '*.cc' '*.cpp' '*.h'" \
         "'*.hpp' '*.cu' '*.cuh' | $(pick clang-format-diff) -p1 -i  (the paths keep it off JSON" \
         "fixtures, which clang-format-diff would also rewrite)" >&2
    exit 1
    ;;
  tidy)
    [ -f build/compile_commands.json ] || { echo "check-style tidy: no build/compile_commands.json (run scripts/build.sh)" >&2; exit 2; }
    tidy=$(pick clang-tidy)
    diff_tool=$(command -v "clang-tidy-diff-${tidy#clang-tidy-}.py" || command -v clang-tidy-diff)
    # tests/fixtures/llamacpp/tool/ builds against llama.cpp (regen.sh), not in this tree's build.
    sources=(-- '*.cpp' '*.cc' '*.c' ':!tests/abi_fixtures/**' ':!core/text/unicode_table.cpp'
             ':!tests/fixtures/llamacpp/tool/**')
    tidy_diff() {  # tidy_diff CHECKS TIMEOUT [-- PATHS]: clang-tidy on changed lines, TIMEOUT s a file
      local checks=$1 limit=$2
      shift 2
      git diff -U0 -M --no-color "$BASE" "${@:-${sources[@]}}" |
        "$diff_tool" -p1 -path build -clang-tidy-binary "$tidy" -j "$(nproc)" -quiet \
          -timeout "$limit" -checks="$checks" -extra-arg=-Wno-unknown-warning-option 2>&1 || true
    }
    # A file clang-tidy did not finish in time is run once more, alone: a run of a file that
    # takes 20 s was once seen to hang past 10 minutes.
    tidy_checked() {  # tidy_checked CHECKS TIMEOUT
      local out f
      out=$(tidy_diff "$1" "$2")
      for f in $(sed -nE 's/^Terminated by timeout: .* ([^ ]+)$/\1/p' <<<"$out"); do
        echo "check-style tidy: $f ran past $2 s; once more, alone" >&2
        out=$(grep -vF "$f" <<<"$out" | grep -v '^Terminated by timeout' || true
              tidy_diff "$1" "$2" -- "$f")
      done
      echo "$out"
    }
    # bugprone-unchecked-optional-access is a dataflow analysis whose time grows with a
    # function's branches: it runs on its own, and a file it cannot finish in 2 minutes (twice)
    # is named and skipped rather than stalling CI.
    out=$(tidy_checked '-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-narrowing-conversions,-bugprone-implicit-widening-of-multiplication-result,-bugprone-unchecked-optional-access' 300)
    optional=$(tidy_checked '-*,bugprone-unchecked-optional-access' 120)
    # A file the main checks could not finish (twice) is named, never passed unchecked.
    if grep -qE ': (warning|error): |^Terminated by timeout' <<<"$out" ||
       grep -qE ': (warning|error): ' <<<"$optional"; then
      echo "$out"
      echo "$optional"
      echo "check-style tidy: bugprone findings on changed lines (above)" >&2
      exit 1
    fi
    sed -nE 's/^Terminated by timeout: .* ([^ ]+)$/check-style tidy: unchecked-optional-access skipped on \1 (over 2 minutes)/p' <<<"$optional"
    echo "check-style tidy: ok"
    ;;
  *) echo "usage: scripts/check-style.sh [format|tidy]" >&2; exit 2 ;;
esac
