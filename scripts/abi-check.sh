#!/usr/bin/env bash
# ABI stability check (libabigail, Debian abigail-tools). Builds a small reference library from
# the ABI headers (abi/baseline/reference.c: one exported function per ABI struct and enum, built
# with -g so abidw sees every type), dumps its ABI with abidw and compares it with the committed
# baseline (abi/baseline/switchyard-abi.xml) with abidiff. The policy is docs/ABI.md.
#
#   scripts/abi-check.sh [--abi-dir DIR] [--baseline FILE]   check the headers under DIR
#   scripts/abi-check.sh --update                             write the baseline from abi/
#
# Exit status: 0 no change or only compatible additions (printed), 8 an incompatible change
# (abidiff's own bit for it), 1 a tool or build error, 2 a usage error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
abi_dir=$root/abi
baseline=$root/abi/baseline/switchyard-abi.xml
update=0
while [ $# -gt 0 ]; do
  case $1 in
    --abi-dir) abi_dir=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --update) update=1; shift ;;
    *) echo "usage: $0 [--abi-dir DIR] [--baseline FILE] | --update" >&2; exit 2 ;;
  esac
done
cc=${CC:-cc}
for tool in abidw abidiff "$cc"; do
  command -v "$tool" >/dev/null || {
    echo "abi-check: $tool not found (scripts/install-deps.sh installs abigail-tools)" >&2
    exit 1
  }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lib=$work/libswitchyard_abi_ref.so
if ! "$cc" -std=c99 -g -O0 -fPIC -shared -fvisibility=hidden -I"$abi_dir" \
  "$root/abi/baseline/reference.c" -o "$lib" 2>"$work/cc.txt"; then
  echo "abi-check: the reference library does not build from $abi_dir:" >&2
  cat "$work/cc.txt" >&2
  exit 1
fi
abidw --no-corpus-path --short-locs --out-file "$work/current.xml" "$lib"

if [ "$update" = 1 ]; then
  cp "$work/current.xml" "$baseline"
  echo "abi-check: wrote $baseline"
  exit 0
fi
[ -f "$baseline" ] || { echo "abi-check: no baseline at $baseline (run --update)" >&2; exit 1; }

# The full report, harmless changes (new enumerators) included: every change is shown.
rc=0
abidiff --harmless "$baseline" "$work/current.xml" >"$work/full.txt" || rc=$?
if [ $((rc & 1)) -ne 0 ]; then
  echo "abi-check: abidiff failed:" >&2
  cat "$work/full.txt" >&2
  exit 1
fi
if [ "$rc" -eq 0 ]; then
  echo "abi-check: no ABI change against $(basename "$baseline")"
  exit 0
fi
sed 's/^/  | /' "$work/full.txt"

# The verdict. abidiff sets its incompatible bit (8) only for removed symbols; a member moved,
# retyped or removed in a struct only sets "changed" (4). So every change abidiff reports is
# held to the policy by abi-classify.awk, which fails closed on anything it does not know.
rc=0
abidiff "$baseline" "$work/current.xml" >"$work/report.txt" || rc=$?
verdict=0  # pipefail: awk's status
awk -v FIXED="sy_sched_entry sy_param" -f "$root/scripts/abi-classify.awk" "$work/report.txt" \
  | sed 's/^/abi-check: /' || verdict=$?
if [ $((rc & 8)) -ne 0 ] || [ "$verdict" -ne 0 ]; then
  echo "abi-check: FAILED: incompatible ABI change against $(basename "$baseline") (docs/ABI.md)"
  exit 8
fi
echo "abi-check: compatible: additions only; scripts/abi-check.sh --update takes them into the baseline"
