// A conversation through the model's own Jinja template, or through a built-in format.
#include <cstdio>
#include <stdexcept>

#include "jinja/template.h"
#include "switchyard/common/error.h"
#include "text/chat_template.h"
#include "text/conversation.h"

namespace sy::text {
namespace {

using Json = nlohmann::ordered_json;

// The markup of a render: every byte the template wrote itself, i.e. not from the messages,
// tools or kwargs.
std::vector<TextSpan> markup_of(const jinja::Text& t) {
  std::vector<TextSpan> out;
  size_t from = 0;
  for (const jinja::Span& d : t.data) {
    if (d.begin > from) out.push_back({from, d.begin});
    from = d.end;
  }
  if (from < t.bytes.size()) out.push_back({from, t.bytes.size()});
  return out;
}

// A message's content for a built-in format: a string, text parts joined, or "" for null.
std::string content_text(const Json& m) {
  if (!m.contains("content") || m["content"].is_null()) return "";
  const Json& c = m["content"];
  if (c.is_string()) return c.get<std::string>();
  std::string out;
  if (c.is_array())
    for (const Json& part : c)
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
          part["text"].is_string())
        out += part["text"].get<std::string>();
  return out;
}

}  // namespace

Conversation conversation_from_json(const Json& j) {
  if (!j.is_object()) throw sy::Error("a conversation must be a JSON object");
  Conversation c;
  if (!j.contains("messages") || !j["messages"].is_array())
    throw sy::Error("messages: expected an array");
  c.messages = j["messages"];
  if (j.contains("tools")) c.tools = j["tools"];
  if (j.contains("documents")) c.documents = j["documents"];
  if (j.contains("add_generation_prompt")) {
    if (!j["add_generation_prompt"].is_boolean())
      throw sy::Error("add_generation_prompt: expected true or false");
    c.add_generation_prompt = j["add_generation_prompt"].get<bool>();
  }
  if (j.contains("kwargs") && !j["kwargs"].is_null()) {
    if (!j["kwargs"].is_object()) throw sy::Error("kwargs: expected an object");
    c.kwargs = j["kwargs"];
  }
  if (j.contains("special_tokens") && !j["special_tokens"].is_null()) {
    if (!j["special_tokens"].is_object())
      throw sy::Error("special_tokens: expected an object of strings");
    for (const auto& [k, v] : j["special_tokens"].items()) {
      if (!v.is_string()) throw sy::Error("special_tokens." + k + ": expected a string");
      c.special_tokens.emplace_back(k, v.get<std::string>());
    }
  }
  if (j.contains("strftime_now") && !j["strftime_now"].is_null()) {
    std::tm t{};
    int y = 0, m = 0, d = 0;
    const std::string s = j["strftime_now"].is_string() ? j["strftime_now"].get<std::string>() : "";
    if (std::sscanf(s.c_str(), "%4d-%2d-%2d", &y, &m, &d) != 3 || m < 1 || m > 12 || d < 1 ||
        d > 31)
      throw sy::Error("strftime_now: expected a date \"YYYY-MM-DD\"");
    t.tm_year = y - 1900;
    t.tm_mon = m - 1;
    t.tm_mday = d;
    t.tm_isdst = -1;
    std::tm normal = t;
    timegm(&normal);  // fills the weekday and the day of the year
    c.now = normal;
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> special_token_strings(const Vocab& v) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const char* name, int32_t id) {
    if (id >= 0 && static_cast<size_t>(id) < v.tokens.size()) out.emplace_back(name, v.tokens[id]);
  };
  add("bos_token", v.bos);
  add("eos_token", v.eos);
  add("pad_token", v.pad);
  add("unk_token", v.unk);
  return out;
}

ChatTemplate ChatTemplate::jinja(const std::string& source) {
  ChatTemplate c;
  try {
    c.jinja_ = std::make_shared<const jinja::Template>(source);
    c.source_ = source;
  } catch (const jinja::Error& e) {
    throw ChatTemplateError(e.what());
  }
  return c;
}

RenderedChat ChatTemplate::render(const Conversation& c) const {
  if (!ok()) throw sy::Error(error_);
  if (!jinja_ && format_) {
    std::vector<ChatMessage> msgs;
    for (const Json& m : c.messages)
      msgs.push_back({m.is_object() && m.contains("role") && m["role"].is_string()
                          ? m["role"].get<std::string>()
                          : "",
                      m.is_object() ? content_text(m) : ""});
    return render_chat(*format_, msgs, c.add_generation_prompt);
  }
  jinja::Object vars;
  vars.set("messages", jinja::from_json(c.messages, true));
  vars.set("tools", jinja::from_json(c.tools, true));
  vars.set("documents", jinja::from_json(c.documents, true));
  vars.set("add_generation_prompt", jinja::Value(c.add_generation_prompt));
  for (const auto& [k, v] : c.special_tokens) vars.set(k, jinja::Value(v, false));
  for (const auto& [k, v] : c.kwargs.items()) vars.set(k, jinja::from_json(v, true));
  std::tm now{};
  if (c.now) {
    now = *c.now;
  } else {
    const std::time_t t = std::time(nullptr);
    localtime_r(&t, &now);
  }
  vars.set("strftime_now", jinja::strftime_now(now));
  try {
    jinja::Text t = jinja_->render(vars);
    RenderedChat r;
    r.markup = markup_of(t);
    r.text = std::move(t.bytes);
    return r;
  } catch (const jinja::Error& e) {
    throw ChatTemplateError(e.what());
  }
}

RenderedChat ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt) const {
  Conversation c;
  for (const ChatMessage& m : messages)
    c.messages.push_back({{"role", m.role}, {"content", m.content}});
  c.add_generation_prompt = add_generation_prompt;
  return render(c);
}

}  // namespace sy::text
