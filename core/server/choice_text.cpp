#include "server/choice_text.h"

#include <algorithm>

namespace sy::server {

ChoiceText::ChoiceText(const text::Tokenizer& tok, std::vector<std::string> stop,
                       std::vector<int32_t> stop_ids)
    : detok_(tok, tok.vocab().model == "llama" && tok.vocab().add_space_prefix),
      stop_(std::move(stop)),
      stop_ids_(std::move(stop_ids)) {}

std::string ChoiceText::push(int32_t token) {
  if (stopped_) return "";
  last_offset_ = decoded_;
  if (std::find(stop_ids_.begin(), stop_ids_.end(), token) != stop_ids_.end()) {
    stopped_ = true;
    held_ += detok_.finish();  // the text before the stop token is final
    return release(true);
  }
  const std::string piece = detok_.push(token);
  decoded_ += piece.size();
  held_ += piece;
  return release(false);
}

std::string ChoiceText::finish() {
  if (stopped_) return "";
  held_ += detok_.finish();
  return release(true);
}

// Returns what precedes the earliest stop match (and stops), or, without a match, all but the
// longest tail of held_ that begins some stop string (everything when `all`).
std::string ChoiceText::release(bool all) {
  size_t cut = std::string::npos;
  for (const std::string& s : stop_)
    if (!s.empty()) cut = std::min(cut, held_.find(s));
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, cut);
    held_.clear();
    return out;
  }
  size_t keep = 0;
  if (!all)
    for (const std::string& s : stop_)
      for (size_t n = s.empty() ? 0 : std::min(s.size() - 1, held_.size()); n > keep; --n)
        if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
          keep = n;
          break;
        }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

}  // namespace sy::server
