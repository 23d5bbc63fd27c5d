// POST /tokenize and POST /detokenize with the variant's own vocabulary, in the request and
// response shapes of both llama.cpp's server and vLLM's:
//   /tokenize   {"content": T} (llama.cpp) or {"prompt": T} or {"messages": [...]} (vLLM), with
//               add_special / add_special_tokens, parse_special, with_pieces, return_token_strs,
//               add_generation_prompt, model
//               -> {"tokens": [...], "count": N, "max_model_len": C} (+ "token_strs")
//   /detokenize {"tokens": [...], "model": M} -> {"content": T, "prompt": T}
//   /apply-template a chat request's body (messages, tools, chat_template_kwargs,
//               add_generation_prompt, ...) -> {"prompt": P}: the chat template's render
//               (llama.cpp's endpoint)
// Text goes through text::tokenize, as `switchyard tokenize` does.
#pragma once

#include <string>

#include "server/json_body.h"
#include "server/router.h"

namespace sy::server {

namespace http {
struct Request;
struct Response;
}  // namespace http

class TokenizeService {
 public:
  TokenizeService(Router& router, std::string model_name, JsonLimits limits = {})
      : router_(router), model_name_(std::move(model_name)), limits_(limits) {}
  void tokenize(const http::Request& req, http::Response& res);
  void detokenize(const http::Request& req, http::Response& res);
  void apply_template(const http::Request& req, http::Response& res);

 private:
  Router& router_;
  std::string model_name_;
  JsonLimits limits_;
};

}  // namespace sy::server
