// libFuzzer: any bytes as a Jinja template, parsed and rendered on a fixed chat (system, user,
// an assistant's tool call, the tool's answer, tools, special tokens, strftime_now) with small
// limits. After a line "#--context--" the rest is a JSON object of more variables (ignored when
// it does not parse). Parsing or rendering may only fail with sy::jinja::Error: anything else
// escaping (out_of_range, bad_alloc, a sanitizer report), a run past the limits, an output past
// max_output or data ranges outside it is a finding.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "jinja/template.h"

namespace {

using Json = nlohmann::ordered_json;

const Json& chat() {
  static const Json j = Json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are a helpful assistant."},
      {"role": "user", "content": "What is the weather in Paris? <|im_end|>"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
      {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
       "content": "{\"temp\": 21.5, \"sky\": \"clear\"}"},
      {"role": "assistant", "content": "It is 21.5 °C and clear."},
      {"role": "user", "content": [{"type": "text", "text": "Thanks!"}, {"type": "image"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "description": "Current weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}, "days": {"type": "integer", "enum": [1, 2]}},
      "required": ["city"]}}}],
    "documents": null,
    "add_generation_prompt": true
  })");
  return j;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  std::string_view context;
  constexpr std::string_view mark = "\n#--context--\n";
  if (const size_t at = source.find(mark); at != std::string_view::npos) {
    context = source.substr(at + mark.size());
    source = source.substr(0, at);
  }
  sy::jinja::Limits lim;
  lim.max_output = size_t{1} << 20;
  lim.max_steps = 200'000;
  lim.max_depth = 32;
  try {
    const sy::jinja::Template t(source);
    sy::jinja::Object vars;  // built per run: no state carries from one input to the next
    for (const auto& [k, v] : chat().items()) vars.set(k, sy::jinja::from_json(v, true));
    vars.set("bos_token", sy::jinja::Value("<s>"));
    vars.set("eos_token", sy::jinja::Value("</s>"));
    std::tm now{};
    now.tm_year = 125;
    now.tm_mon = 5;
    now.tm_mday = 15;
    vars.set("strftime_now", sy::jinja::strftime_now(now));
    if (!context.empty()) {
      const Json extra = Json::parse(context, nullptr, false);
      if (extra.is_object())
        for (const auto& [k, v] : extra.items()) vars.set(k, sy::jinja::from_json(v, true));
    }
    const sy::jinja::Text out = t.render(vars, lim);
    // Bounded output, and data ranges sorted, disjoint and inside it (the tokenizer trusts them).
    if (out.bytes.size() > lim.max_output) std::abort();
    uint32_t end = 0;
    for (const sy::jinja::Span& s : out.data) {
      if (s.begin < end || s.end < s.begin || s.end > out.bytes.size()) std::abort();
      end = s.end;
    }
  } catch (const sy::jinja::Error&) {
  }
  return 0;
}
