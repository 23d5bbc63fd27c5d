#!/usr/bin/env bash
# ctest openai_sdk_conformance: installs the pinned `openai` package (package-lock.json) into
# <build>/openai-sdk with `npm ci`, starts `switchyard serve` with an API key on a free port, and
# runs conformance.mjs against it with the official SDK.
# Usage: run.sh <switchyard> <build dir> <source dir>
set -euo pipefail
exe=$1 build=$2 src=$3
here=$src/tests/openai_sdk
work=$build/openai-sdk
command -v node >/dev/null || { echo "node is not installed (scripts/install-deps.sh installs it)"; exit 1; }
command -v npm >/dev/null || { echo "npm is not installed (scripts/install-deps.sh installs it)"; exit 1; }
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/conformance.mjs" "$work/"
if [ ! -f "$work/node_modules/openai/package.json" ] ||
   ! cmp -s "$here/package-lock.json" "$work/node_modules/.package-lock.json.installed" 2>/dev/null; then
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$work/node_modules/.package-lock.json.installed"
fi
echo "node $(node --version), openai $(node -p "require('$work/node_modules/openai/package.json').version")"

# A ChatML template that offers tools and thinks as Qwen3's does (<tool_call> tags; an open
# <think> with enable_thinking, an empty one without), over the file's own.
cat >"$work/chatml-tools.jinja" <<'JINJA'
{%- if tools %}<|im_start|>system
Tools:{% for t in tools %} {{ t.function.name }}{% endfor %}. Call as <tool_call>{"name", "arguments"}</tool_call><|im_end|>
{% endif %}{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content if m.content else '' }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% if enable_thinking is defined and enable_thinking %}<think>
{% else %}<think>

</think>

{% endif %}{% endif %}
JINJA
cat >"$work/serve.toml" <<TOML
plugin_dirs = ["$build/plugins"]
models_dir = "$work"
[serve]
model_name = "tiny"
[model]
path = "$work/sdk-tiny.gguf"
chat_template_file = "$work/chatml-tools.jinja"
generate = "dense-tiny"
[backend]
plugin = "cpu_ref"
[scheduler]
plugin = "dynamic"
TOML
key=sk-conformance-$$
log=$work/serve.log
SWITCHYARD_API_KEY=$key "$exe" serve --config "$work/serve.toml" --port 0 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 200); do
  url=$(sed -n 's|^switchyard serving on \(http://[^ ]*\)$|\1|p' "$log")
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "the server did not start"; cat "$log"; exit 1; }
node "$work/conformance.mjs" "$url/v1" "$key"
