#include "server/chat_output.h"

#include <nlohmann/json.hpp>

namespace sy::server {
namespace {

constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";
constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>";

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
  s.tool_calls = tools_offered && template_source.find(kCallOpen) != std::string_view::npos;
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
  return d;
}

void ChatOutput::step(Delta& d, bool final) {
  for (;;) {
    if (state_ == State::content && trim_newlines_) {
      const size_t n = buf_.find_first_not_of('\n');
      buf_.erase(0, n == std::string::npos ? buf_.size() : n);
      if (buf_.empty()) return;
      trim_newlines_ = false;
    }
    if (state_ == State::content) {
      // The earliest tag this syntax knows, or a tail that may become one.
      size_t cut = std::string::npos;
      std::string_view tag;
      bool whole = false;
      for (std::string_view t : {kThinkOpen, kCallOpen}) {
        if ((t == kThinkOpen && !syntax_.think) || (t == kCallOpen && !syntax_.tool_calls))
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
        d.content += buf_;
        buf_.clear();
        return;
      }
      d.content += buf_.substr(0, cut);
      if (!whole) {
        buf_.erase(0, cut);
        return;
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
      const auto j = nlohmann::ordered_json::parse(call_, nullptr, false);
      if (j.is_object() && j.contains("name") && j["name"].is_string() &&
          (!j.contains("arguments") || j["arguments"].is_object() || j["arguments"].is_string())) {
        ToolCall c;
        c.index = n_calls_;
        c.id = prefix_ + std::to_string(n_calls_++);
        c.name = j["name"].get<std::string>();
        const auto& a = j.contains("arguments") ? j["arguments"] : nlohmann::ordered_json::object();
        c.arguments = a.is_string() ? a.get<std::string>() : a.dump();
        d.calls.push_back(std::move(c));
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
