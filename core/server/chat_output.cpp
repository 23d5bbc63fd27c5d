#include "server/chat_output.h"

#include <nlohmann/json.hpp>

namespace sy::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";
constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>";
constexpr std::string_view kMistralCalls = "[TOOL_CALLS]", kMistralArgs = "[ARGS]";
constexpr std::string_view kPythonTag = "<|python_tag|>";

// Where `tag` starts in s, or where a prefix of it ends s (npos: neither): text before that
// position is safe to emit.
size_t tag_or_prefix(std::string_view s, std::string_view tag, bool& whole) {
  const size_t at = s.find(tag);
  whole = at != std::string_view::npos;
  if (whole) return at;
  for (size_t n = std::min(tag.size() - 1, s.size()); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return s.size() - n;
  return std::string_view::npos;
}

// JSON in the client's key order; a discarded value when it is not JSON.
nlohmann::ordered_json parse(std::string_view text) {
  return nlohmann::ordered_json::parse(text, nullptr, false);
}

}  // namespace

OutputSyntax output_syntax(std::string_view template_source, std::string_view prompt,
                           bool tools_offered) {
  OutputSyntax s;
  s.think = template_source.find(kThinkClose) != std::string_view::npos;
  if (s.think) {
    size_t end = prompt.size();
    while (end > 0 && (prompt[end - 1] == '\n' || prompt[end - 1] == ' ')) --end;
    s.opens_in_think = prompt.substr(0, end).ends_with(kThinkOpen);
  }
  if (!tools_offered) return s;
  if (template_source.find(kCallOpen) != std::string_view::npos)
    s.calls = CallSyntax::hermes;
  else if (template_source.find(kMistralCalls) != std::string_view::npos)
    s.calls = CallSyntax::mistral;
  else if (template_source.find(kPythonTag) != std::string_view::npos ||
           template_source.find("\"parameters\": ") != std::string_view::npos)
    s.calls = CallSyntax::llama3;
  return s;
}

ChatOutput::ChatOutput(OutputSyntax syntax, std::string call_id_prefix)
    : syntax_(syntax),
      prefix_(std::move(call_id_prefix)),
      state_(syntax.opens_in_think ? State::reasoning : State::content) {}

ChatOutput::Delta ChatOutput::feed(std::string_view text) {
  Delta d;
  buf_ += text;
  step(d, false);
  return d;
}

ChatOutput::Delta ChatOutput::finish() {
  Delta d;
  step(d, true);
  if (state_ == State::call) {  // never closed: it was text after all
    d.content += std::string(kCallOpen) + call_;
    call_.clear();
  }
  if (state_ == State::tail) read_tail(d);
  return d;
}

bool ChatOutput::add_call(const nlohmann::ordered_json& j, Delta& d) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return false;
  const char* key = j.contains("arguments") ? "arguments" : "parameters";
  const auto& a = j.contains(key) ? j[key] : nlohmann::ordered_json::object();
  if (!a.is_object() && !a.is_string()) return false;
  ToolCall c;
  c.index = n_calls_;
  c.id = prefix_ + std::to_string(n_calls_++);
  c.name = j["name"].get<std::string>();
  c.arguments = a.is_string() ? a.get<std::string>() : a.dump();
  d.calls.push_back(std::move(c));
  return true;
}

void ChatOutput::read_tail(Delta& d) {
  const std::string tail = std::move(call_);
  call_.clear();
  state_ = State::content;
  Delta calls;
  bool ok = false;
  if (syntax_.calls == CallSyntax::mistral) {
    // [TOOL_CALLS] then [{"name", "arguments"}, ...] (Nemo), or name[ARGS]{...} pieces, each
    // after its own [TOOL_CALLS] (Small 3.2, Devstral, Ministral 3).
    const std::string body = tail.substr(kMistralCalls.size());
    const auto list = parse(body);
    if (list.is_array()) {
      ok = !list.empty();
      for (const auto& c : list) ok = ok && add_call(c, calls);
    } else {
      ok = !body.empty();
      for (size_t at = 0; ok && at < body.size();) {
        const size_t next = body.find(kMistralCalls, at);
        const std::string piece = body.substr(at, next == std::string::npos ? next : next - at);
        const size_t args = piece.find(kMistralArgs);
        std::string name = piece.substr(0, args);
        name = name.substr(0, name.find("[CALL_ID]"));
        ok = args != std::string::npos && !name.empty();
        if (!ok) break;
        nlohmann::ordered_json call = {{"name", name}};
        call["arguments"] = parse(piece.substr(args + kMistralArgs.size()));
        ok = add_call(call, calls);
        at = next == std::string::npos ? body.size() : next + kMistralCalls.size();
      }
    }
  } else {  // Llama 3: the whole answer is the call
    std::string_view body = tail;
    while (!body.empty() && (body.front() == ' ' || body.front() == '\n')) body.remove_prefix(1);
    if (body.starts_with(kPythonTag)) body.remove_prefix(kPythonTag.size());
    ok = add_call(parse(body), calls);
  }
  if (!ok) {  // the model's own words after all
    n_calls_ -= calls.calls.size();
    d.content += tail;
    return;
  }
  for (auto& c : calls.calls) d.calls.push_back(std::move(c));
}

void ChatOutput::emit(Delta& d, std::string_view text) {
  said_ = said_ || text.find_first_not_of(" \n") != std::string_view::npos;
  d.content += text;
}

void ChatOutput::step(Delta& d, bool final) {
  for (;;) {
    if (state_ == State::content && trim_newlines_) {
      const size_t n = buf_.find_first_not_of('\n');
      buf_.erase(0, n == std::string::npos ? buf_.size() : n);
      if (buf_.empty()) return;
      trim_newlines_ = false;
    }
    if (state_ == State::tail) {
      call_ += buf_;
      buf_.clear();
      return;
    }
    if (state_ == State::content && syntax_.calls == CallSyntax::llama3 && !said_) {
      // An answer whose first word is a JSON object or <|python_tag|> is a call, read whole at
      // the end; anything else is content from here on.
      const size_t first = buf_.find_first_not_of(" \n");
      if (first == std::string::npos && !final) return;
      if (first != std::string::npos) {
        const std::string_view rest = std::string_view(buf_).substr(first);
        const bool may_tag = kPythonTag.starts_with(rest.substr(0, kPythonTag.size()));
        if (rest.front() == '{' || (may_tag && rest.size() >= kPythonTag.size())) {
          state_ = State::tail;
          continue;
        }
        if (may_tag && !final) return;
      }
      said_ = true;  // plain words first: no call
    }
    if (state_ == State::content) {
      // The earliest tag this syntax knows, or a tail that may become one.
      size_t cut = std::string::npos;
      std::string_view tag;
      bool whole = false;
      for (std::string_view t : {kThinkOpen, kCallOpen, kMistralCalls}) {
        if ((t == kThinkOpen && !syntax_.think) ||
            (t == kCallOpen && syntax_.calls != CallSyntax::hermes) ||
            (t == kMistralCalls && syntax_.calls != CallSyntax::mistral))
          continue;
        bool w = false;
        const size_t at = tag_or_prefix(buf_, t, w);
        if (at < cut || (at == cut && w)) {
          cut = at;
          tag = t;
          whole = w;
        }
      }
      if (cut == std::string::npos || (!whole && final)) {
        emit(d, buf_);
        buf_.clear();
        return;
      }
      emit(d, buf_.substr(0, cut));
      if (!whole) {
        buf_.erase(0, cut);
        return;
      }
      if (tag == kMistralCalls) {  // the calls run to the end: kept with their tag
        state_ = State::tail;
        continue;
      }
      buf_.erase(0, cut + tag.size());
      state_ = tag == kThinkOpen ? State::reasoning : State::call;
      continue;
    }
    const std::string_view close = state_ == State::reasoning ? kThinkClose : kCallClose;
    bool whole = false;
    const size_t cut = tag_or_prefix(buf_, close, whole);
    std::string& into = state_ == State::reasoning ? d.reasoning : call_;
    if (cut == std::string::npos || (!whole && final)) {
      into += buf_;
      buf_.clear();
      return;
    }
    into += buf_.substr(0, cut);
    if (!whole) {
      buf_.erase(0, cut);
      return;
    }
    buf_.erase(0, cut + close.size());
    if (state_ == State::reasoning) {
      trim_newlines_ = true;
    } else {
      // {"name": ..., "arguments": {...}}; anything else stays text.
      if (add_call(parse(call_), d)) {
        trim_newlines_ = true;
      } else {
        d.content += std::string(kCallOpen) + call_ + std::string(kCallClose);
      }
      call_.clear();
    }
    state_ = State::content;
  }
}

}  // namespace sy::server
