#include "server/harmony_output.h"

#include <algorithm>

namespace sy::server {
namespace {

constexpr std::string_view kStart = "<|start|>", kChannel = "<|channel|>", kMessage = "<|message|>",
                           kEnd = "<|end|>";

// The word after `key` in a header (up to a space or the next markup); empty when absent.
std::string word_after(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view w = header.substr(at + key.size());
  w = w.substr(0, std::min(w.find(' '), w.find('<')));
  return std::string(w);
}

}  // namespace

HarmonyOutput::HarmonyOutput(bool tools, std::string call_id_prefix)
    : tools_(tools), calls_(std::move(call_id_prefix)) {}

ChatOutput::Delta HarmonyOutput::feed(std::string_view text) {
  ChatOutput::Delta d;
  buf_ += text;
  step(d, false);
  return d;
}

ChatOutput::Delta HarmonyOutput::finish() {
  ChatOutput::Delta d;
  step(d, true);
  if (state_ == State::body) body_text(d, buf_);  // what was held back as a possible tag
  buf_.clear();
  return d;  // an unfinished header is markup, not text
}

// The header read: what the body is.
void HarmonyOutput::open_body(ChatOutput::Delta& d) {
  const std::string channel = word_after(header_, kChannel);
  const std::string to = word_after(header_, "to=");
  header_.clear();
  state_ = State::body;
  if (tools_ && to.starts_with("functions.") && to.size() > 10) {
    kind_ = Kind::call;
    calls_.open(d.calls, to.substr(10));
  } else {
    kind_ = channel == "analysis" ? Kind::reasoning : Kind::content;
  }
}

void HarmonyOutput::body_text(ChatOutput::Delta& d, std::string_view text) {
  if (text.empty()) return;
  if (kind_ == Kind::reasoning) {
    d.reasoning += text;
  } else if (kind_ == Kind::content) {
    d.content += text;
  } else {
    calls_.feed(d.calls, text);
  }
}

void HarmonyOutput::step(ChatOutput::Delta& d, bool final) {
  for (;;) {
    if (state_ == State::start) {
      // Markup first (the usual answer), or plain words: content until markup comes.
      const auto [at, tag, whole] = earliest_tag(buf_, {kChannel, kStart});
      if (buf_.empty() || (at == 0 && !whole && !final)) return;
      state_ = at == 0 && whole ? State::header : State::body;
      kind_ = Kind::content;
      continue;
    }
    if (state_ == State::header) {
      bool whole = false;
      const size_t at = tag_or_prefix(buf_, kMessage, whole);
      if (!whole) {  // a header is never content; a possible start of the tag waits
        const size_t keep = at == std::string::npos ? buf_.size() : at;
        header_ += buf_.substr(0, keep);
        buf_.erase(0, keep);
        return;
      }
      header_ += buf_.substr(0, at);
      buf_.erase(0, at + kMessage.size());
      open_body(d);
      continue;
    }
    // A body runs to the next message's markup.
    const auto [cut, tag, whole] = earliest_tag(buf_, {kStart, kChannel, kEnd});
    if (cut == std::string::npos || (!whole && final)) {
      body_text(d, buf_);
      buf_.clear();
      return;
    }
    body_text(d, std::string_view(buf_).substr(0, cut));
    if (!whole) {
      buf_.erase(0, cut);
      return;
    }
    // <|channel|> opens the next header itself; <|start|> and <|end|> only lead to it.
    buf_.erase(0, cut + (tag == kChannel ? 0 : tag.size()));
    if (tag == kChannel) {
      header_ = std::string(kChannel);
      buf_.erase(0, kChannel.size());
    }
    state_ = State::header;
  }
}

}  // namespace sy::server
