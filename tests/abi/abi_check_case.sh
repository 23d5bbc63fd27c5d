#!/usr/bin/env bash
# Makes one deliberate change to a temporary copy of abi/ and runs scripts/abi-check.sh on it
# against the committed baseline, expecting its exit status and one line of its output.
# Usage: abi_check_case.sh CASE   (cases below)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$root/abi/switchyard" "$work/"
h=$work/switchyard/abi
edit() { perl -0pi -e "$2" "$h/$1"; }

case $1 in
  reorder)  # two members of sy_sched_plan swap places
    edit scheduler.h 's/(  uint32_t n_entries;[^\n]*\n)(  uint32_t preempt_capacity;\n)/$2$1/'
    want=8 line="incompatible: struct sy_sched_plan: 'uint32_t n_entries' offset changed from 128 to 160 (in bits) (by +32 bits)" ;;
  retype)  # same size, other type
    edit scheduler.h 's/  uint32_t prompt_len;/  int32_t prompt_len;/'
    want=8 line="incompatible: struct sy_sched_request: typedef name changed from uint32_t to int32_t" ;;
  move_to_end)  # removed in the middle, appended at the end: libabigail's own suppressions miss it
    edit scheduler.h 's/(  void \(\*destroy\)\(sy_sched_t sched\);\n)(.*?)(\} sy_scheduler_iface;)/$2$1$3/s'
    want=8 line="incompatible: struct sy_scheduler_iface: 'void (typedef sy_sched_t)* destroy' offset changed" ;;
  insert_middle)  # a member inserted before existing ones
    edit backend.h 's/(typedef struct sy_tensor \{\n  uint32_t struct_size;\n)/$1  uint32_t flags;\n/'
    want=8 line="incompatible: struct sy_tensor: 'uint32_t dtype' offset changed from 32 to 64 (in bits) (by +32 bits)" ;;
  grow_array_element)  # sy_sched_entry is indexed with sizeof: it may never grow
    edit scheduler.h 's/(  uint32_t reserved0;\n)(\} sy_sched_entry;)/$1  uint32_t extra;\n$2/'
    want=8 line="incompatible: struct sy_sched_entry is an array element (sizeof stride) and grew" ;;
  frozen_constant)  # a capability bit changes value
    edit plugin.h 's/#define SY_CAP_PREEMPTION \(1ull << 9\)/#define SY_CAP_PREEMPTION (1ull << 10)/'
    want=8 line="incompatible: 'sy_abi_frozen::SY_FROZEN_CAP_PREEMPTION' from value '512' to '1024'" ;;
  append)  # a new op at the end of the backend table: the compatible change
    edit backend.h 's/(\} sy_backend_iface;)/  sy_status (*sy_test_appended_op)(sy_backend_t backend);\n$1/'
    want=0 line="compatible: struct sy_backend_iface: appended 'typedef sy_status (typedef sy_backend_t)* sy_test_appended_op'" ;;
  new_enumerator)  # a new dtype: compatible, and shown
    edit types.h 's/(  SY_DTYPE_BF16 = 30,\n)/$1  SY_DTYPE_TEST_NEW = 31,\n/'
    want=0 line="'sy_dtype::SY_DTYPE_TEST_NEW' value '31'" ;;
  *) echo "unknown case $1" >&2; exit 2 ;;
esac
if diff -rq "$root/abi/switchyard" "$work/switchyard" >/dev/null; then
  echo "the $1 edit did not apply: the headers changed under it" >&2
  exit 1
fi

rc=0
"$root/scripts/abi-check.sh" --abi-dir "$work" >"$work/out.txt" 2>&1 || rc=$?
cat "$work/out.txt"
[ "$rc" -eq "$want" ] || { echo "abi-check exited $rc, expected $want" >&2; exit 1; }
grep -qF -- "$line" "$work/out.txt" || { echo "missing line: $line" >&2; exit 1; }
echo "case $1: exit $rc as expected"
