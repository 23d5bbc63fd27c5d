// The text of one choice as its tokens arrive: detokenized incrementally, cut before the first
// stop string (which is never returned), or ended by a stop token id (whose text is not
// returned). Text that could still be the start of a stop string is held back until it cannot.
// Runs on the engine thread, inside the runner's token callback, so a match ends the request at
// the token that completed it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace sy::server {

class ChoiceText {
 public:
  ChoiceText(const text::Tokenizer& tok, std::vector<std::string> stop,
             std::vector<int32_t> stop_ids);
  // Adds a token; returns the text that is now final. After a match stopped() is true and
  // further tokens are ignored.
  std::string push(int32_t token);
  // The held-back rest once the request ended without a match.
  std::string finish();
  bool stopped() const { return stopped_; }
  // Length of the text decoded before the last pushed token (its offset in the choice).
  size_t last_offset() const { return last_offset_; }

 private:
  std::string release(bool all);
  text::Detokenizer detok_;
  std::vector<std::string> stop_;
  std::vector<int32_t> stop_ids_;
  std::string held_;    // decoded, not returned yet
  size_t decoded_ = 0;  // bytes decoded so far
  size_t last_offset_ = 0;
  bool stopped_ = false;
};

}  // namespace sy::server
