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
    tidy_diff() {  # tidy_diff CHECKS TIMEOUT: clang-tidy on the changed lines, each file in TIMEOUT s
      git diff -U0 -M --no-color "$BASE" -- '*.cpp' '*.cc' '*.c' ':!tests/abi_fixtures/**' \
          ':!core/text/unicode_table.cpp' ':!tests/fixtures/llamacpp/tool/**' |
        "$diff_tool" -p1 -path build -clang-tidy-binary "$tidy" -j "$(nproc)" -quiet -timeout "$2" \
          -checks="$1" -extra-arg=-Wno-unknown-warning-option 2>&1 || true
    }
    # bugprone-unchecked-optional-access is a dataflow analysis that can run for many minutes on
    # one long function (parse_completion_request took over 10): it runs on its own, and a file
    # it cannot finish in 2 minutes is named and skipped rather than stalling CI.
    out=$(tidy_diff '-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-narrowing-conversions,-bugprone-implicit-widening-of-multiplication-result,-bugprone-unchecked-optional-access' 600)
    optional=$(tidy_diff '-*,bugprone-unchecked-optional-access' 120)
    # A file the main checks could not finish in 10 minutes is named, never passed unchecked.
    if grep -qE ': (warning|error): |^Terminated by timeout' <<<"$out" ||
       grep -qE ': (warning|error): ' <<<"$optional"; then
      echo "$out"
      echo "$optional"
      echo "check-style tidy: bugprone findings on changed lines (above)" >&2
      exit 1
    fi
    grep -E '^Terminated by timeout' <<<"$optional" |
      sed -E 's/.* ([^ ]+)$/check-style tidy: unchecked-optional-access skipped on \1 (over 2 minutes)/' || true
    echo "check-style tidy: ok"
    ;;
  *) echo "usage: scripts/check-style.sh [format|tidy]" >&2; exit 2 ;;
esac
