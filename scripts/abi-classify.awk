# Classifies every change in an abidiff report against the policy of docs/ABI.md, failing
# closed: a line this script does not recognise as structure or as an allowed change is an
# incompatible change. abidiff itself sets its "incompatible" exit bit only for removed symbols;
# a moved, retyped or removed struct member in a pointed-to type sets only "changed", so the
# policy is applied here.
#
# Allowed: members appended at the end of a struct that starts with struct_size (the struct
# grows, no member moves), and new reference functions (new structs or enums). Not allowed for
# FIXED (structs used in arrays with sizeof as the stride), nor anything else.
#
# Input: `abidiff` output (default filtering: harmless changes such as new enumerators are not
# shown). Output: "compatible: ..." and "incompatible: ..." lines; exit 1 on any incompatible.
# Usage: awk -v FIXED="sy_sched_entry sy_param" -f abi-classify.awk report.txt

function bad(msg) {
  ++n_bad
  printf "incompatible: %s\n", msg
}

# The struct named by a structural line ("... type 'struct sy_x' ..."), or "".
function struct_named(s,   m) {
  if (!match(s, /type '(const )?struct [A-Za-z_0-9]+'/)) return ""
  m = substr(s, RSTART, RLENGTH)
  sub(/^type '(const )?struct /, "", m)
  sub(/'$/, "", m)
  return m
}

BEGIN {
  n = split(FIXED, f, " ")
  for (i = 1; i <= n; ++i) fixed[f[i]] = 1
  depth = 0
}

{
  match($0, /^ */)
  indent = RLENGTH
  s = substr($0, RLENGTH + 1)
  if (s == "") next
  # Leave the contexts this line is not inside of.
  while (depth > 0 && ind[depth] >= indent) --depth
  parent = depth > 0 ? kind[depth] : ""
  pname = depth > 0 ? name[depth] : ""  # the nearest enclosing struct

  k = "node"
  nm = pname
  if (s ~ /^(Functions|Variables|Function symbols|Variable symbols) changes summary:/) {
    k = "summary"
  } else if (s ~ /^[0-9]+ functions? with some indirect sub-type changes?:$/ ||
             s ~ /^\[C\] '(function|variable) .*' (at [^ ]+ )?has (some indirect sub-type changes|sub-type changes):$/ ||
             s ~ /^parameter [0-9]+ of type '.*' has sub-type changes:$/ ||
             s ~ /^in (pointed to|unqualified underlying|referenced) type '.*'( at [^ ]+)?:$/ ||
             s ~ /^underlying type '.*'( at [^ ]+)? changed:$/ ||
             s ~ /^type of '.*' changed:$/ ||
             s ~ /^[0-9]+ data member changes?( \([0-9]+ filtered\))?:$/ ||
             s ~ /^no data member changes? \([0-9]+ filtered\);$/ ||  # only redundant ones
             s ~ /, as reported earlier$/ ||
             s ~ /^type size hasn't changed$/) {
    if (struct_named(s) != "") {
      k = "struct"
      nm = struct_named(s)
    }
  } else if (s ~ /^[0-9]+ Added (functions?|variables?):$/ || s ~ /^\[A\] '(function|variable) /) {
    if (s ~ /^\[A\]/) printf "compatible: new %s\n", s
    k = "added"
  } else if (s ~ /^type size changed from [0-9]+ to [0-9]+ \(in bits\)$/) {
    split(s, w, " ")
    from = w[5] + 0
    to = w[7] + 0
    if (parent != "struct") bad("size of a non-struct type changed: " s)
    else if (pname in fixed) bad("struct " pname " is an array element (sizeof stride) and grew: " s)
    else if (to < from) bad("struct " pname " shrank: " s)
    else old_size[depth] = from
    k = "leaf"
  } else if (s ~ /^[0-9]+ data member insertions?:$/) {
    if (parent != "struct") bad("member inserted outside a struct: " s)
    k = "insertions"
    ins_old = (depth > 0 && old_size[depth] != "") ? old_size[depth] : -1
  } else if (parent == "insertions" && s ~ /^'.*', at offset [0-9]+ \(in bits\)/) {
    at = s
    sub(/^.*', at offset /, "", at)
    sub(/ .*$/, "", at)
    if (ins_old < 0) bad("struct " pname ": member inserted without the struct growing: " s)
    else if (at + 0 < ins_old) bad("struct " pname ": member inserted before the end: " s)
    else printf "compatible: struct %s: appended %s\n", pname, s
    k = "leaf"
  } else {
    bad((pname != "" ? "struct " pname ": " : "") s)
    k = "leaf"
  }
  ++depth
  ind[depth] = indent
  kind[depth] = k
  name[depth] = nm
  old_size[depth] = ""
}

END { exit n_bad > 0 ? 1 : 0 }
