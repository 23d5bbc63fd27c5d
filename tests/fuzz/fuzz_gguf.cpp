// libFuzzer: any bytes through the GGUF reader; a file it accepts goes on to the tokenizer
// loader (pre-tokenizer, special tokens, end-of-generation set) and the chat-template detection,
// and a tokenizer that loads encodes (with and without special tokens, and a rendered chat with
// its markup trusted) and decodes a little text. Every refusal must be a clean exception;
// crashes, leaks, undefined behaviour and hangs are findings.
#include <cstdint>
#include <string>
#include <string_view>

#include "gguf/gguf.h"
#include "switchyard/common/error.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<sy::gguf::File> f;
  try {
    f = sy::gguf::File::parse(data, size, "fuzz.gguf");
  } catch (const sy::gguf::Error&) {
    return 0;
  }
  // Typed lookups of whatever keys it holds.
  for (const auto& [key, v] : f->metadata()) {
    try {
      (void)f->get_uint(key);
      (void)f->get_int(key);
      (void)f->get_float(key);
      (void)f->get_bool(key);
      (void)f->get_string(key);
    } catch (const sy::gguf::Error&) {
    }
  }
  std::unique_ptr<sy::text::Tokenizer> tok;
  try {
    tok = sy::text::Tokenizer::from_gguf(*f);
  } catch (const std::exception&) {
    return 0;
  }
  // The tail of the input as text (bounded, so the work stays per-input small).
  const std::string_view text(
      reinterpret_cast<const char*>(data) + size - std::min<size_t>(size, 64),
      std::min<size_t>(size, 64));
  for (std::string_view s : {std::string_view("Hello, world! 12 çà ▁x <|eot_id|>"), text}) {
    for (bool special : {false, true}) {
      try {
        const auto ids = tok->encode(s, false, special);
        (void)tok->decode(ids, special);
        sy::text::Detokenizer d(*tok, true, special);
        for (int32_t id : ids) (void)d.push(id);
        (void)d.finish();
      } catch (const std::exception&) {
      }
    }
  }
  (void)tok->end_of_generation();
  // The file's chat template, as a variant resolves it, rendering the input's tail as a message.
  try {
    const auto chat = sy::text::ChatTemplate::resolve("", f->get_string("tokenizer.chat_template"));
    if (chat.ok()) {
      const auto r = chat.render({{"system", "s"}, {"user", std::string(text)}}, true);
      (void)tok->encode(r.text, false, r.markup);
    }
  } catch (const std::exception&) {
  }
  for (int32_t id : {0, 1, tok->n_vocab() - 1, tok->n_vocab()}) {
    try {
      (void)tok->piece(id);
    } catch (const sy::Error& e) {  // n_vocab is out of range; anything else is a finding
      if (e.status() != SY_ERR_INVALID_ARG) throw;
    }
  }
  return 0;
}
