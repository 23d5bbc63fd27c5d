#!/usr/bin/env bash
# The plugin SDK end to end, as a third party sees it: install the SDK from this build into a
# fresh prefix, build samples/scheduler_sjf against that prefix alone, run the sample's test,
# build the same plugin with pkg-config and cc, then run the engine with the plugin (in process
# and isolated) and check it generates the same text as the in-tree fixed_window scheduler.
# Usage: sample_out_of_tree.sh BUILD_DIR SOURCE_DIR SWITCHYARD_EXE
set -euo pipefail
build=$1 src=$2 exe=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "== $*"; }

step "install the SDK into $prefix"
cmake --install "$build" --prefix "$prefix" --component sdk >/dev/null
for f in include/switchyard/abi/plugin.h lib/cmake/Switchyard/SwitchyardConfig.cmake \
  share/pkgconfig/switchyard.pc share/switchyard/plugin.map; do
  [ -f "$prefix/$f" ] || { echo "missing $f"; exit 1; }
done

step "configure and build the sample against the installed package"
cmake -S "$src/samples/scheduler_sjf" -B "$work/sjf" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$work/sjf" >/dev/null
# Only the installed headers: the source tree's abi/ must not be on any include path.
grep -q -- "$prefix/include" "$work/sjf/compile_commands.json"
if grep -q -- "$src/abi" "$work/sjf/compile_commands.json"; then
  echo "the sample was compiled against the source tree's headers"
  exit 1
fi
plugin=$work/sjf/switchyard_scheduler_sjf.so
exports=$(nm -D --defined-only "$plugin" | awk '$2 == "T" {print $3}')
[ "$exports" = "sy_plugin_entry" ] || { echo "plugin exports: $exports"; exit 1; }

step "the sample's own test"
ctest --test-dir "$work/sjf" --output-on-failure

step "the same plugin through pkg-config"
export PKG_CONFIG_PATH=$prefix/share/pkgconfig
[ "$(pkg-config --modversion switchyard)" = "$(sed -n 's/^#define SY_ABI_VERSION_MAJOR \([0-9]*\).*/\1/p' \
  "$src/abi/switchyard/abi/types.h").$(sed -n 's/^#define SY_ABI_VERSION_MINOR \([0-9]*\).*/\1/p' \
  "$src/abi/switchyard/abi/types.h")" ]
mkdir "$work/pc"
cc -std=c99 -shared -fPIC -fvisibility=hidden $(pkg-config --cflags switchyard) \
  "$src/samples/scheduler_sjf/sjf.c" -Wl,--no-undefined \
  -Wl,--version-script="$(pkg-config --variable=plugin_map switchyard)" \
  -o "$work/pc/switchyard_scheduler_sjf.so"
"$exe" plugins --dir "$work/pc" --verbose | tee "$work/plugins.txt"
grep -Eq "ok +scheduler +sjf +1.0.0 +ABI [0-9]+\.[0-9]+" "$work/plugins.txt"
grep -q "capabilities  chunked_prefill (0x100)" "$work/plugins.txt"

step "run the engine with it"
config() {  # config NAME SCHEDULER [EXTRA]
  cat >"$work/$1.toml" <<TOML
plugin_dirs = ["$work/sjf", "$(dirname "$exe")/plugins"]
models_dir = "$work"

[model]
path = "$work/tiny.gguf"
generate = "dense-tiny"
seed = 5

[backend]
plugin = "cpu_ref"

[scheduler]
plugin = "$2"
${3:-}

[sampling]
max_tokens = 12
TOML
}
config fw fixed_window 'wait_window_ms = 0'
config sjf sjf
config sjf_isolated sjf 'isolation = "process"'
for name in fw sjf sjf_isolated; do
  "$exe" run --config "$work/$name.toml" >"$work/$name.out" 2>"$work/$name.err"
  cat "$work/$name.err"
done
# Greedy decoding: the same text and token counts whatever the scheduler.
summary() { grep -o "scheduler [a-z_]*: 4 requests, [0-9]* tokens" "$work/$1.err" | sed 's/^[^:]*: //'; }
[ -n "$(summary fw)" ]
grep -q "scheduler sjf: " "$work/sjf.err"
[ "$(summary sjf)" = "$(summary fw)" ]
[ "$(summary sjf_isolated)" = "$(summary fw)" ]
diff "$work/fw.out" "$work/sjf.out"
diff "$work/fw.out" "$work/sjf_isolated.out"
echo "sample scheduler_sjf: built out of tree, tested, and generated the reference text"
