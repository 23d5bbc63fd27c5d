// POST /tokenize and POST /detokenize with the variant's own vocabulary, in the request and
// response shapes of both llama.cpp's server and vLLM's:
//   /tokenize   {"content": T} (llama.cpp) or {"prompt": T} or {"messages": [...]} (vLLM), with
//               add_special / add_special_tokens, parse_special, with_pieces, return_token_strs,
//               add_generation_prompt, model
//               -> {"tokens": [...], "count": N, "max_model_len": C} (+ "token_strs")
//   /detokenize {"tokens": [...], "model": M} -> {"content": T, "prompt": T}
// Text goes through text::tokenize, as `switchyard tokenize` does.
#pragma once

#include <string>

#include "server/router.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace sy::server {

class TokenizeService {
 public:
  TokenizeService(Router& router, std::string model_name)
      : router_(router), model_name_(std::move(model_name)) {}
  void tokenize(const httplib::Request& req, httplib::Response& res);
  void detokenize(const httplib::Request& req, httplib::Response& res);

 private:
  Router& router_;
  std::string model_name_;
};

}  // namespace sy::server
