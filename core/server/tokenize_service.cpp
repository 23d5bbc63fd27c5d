#include "server/tokenize_service.h"

#include <nlohmann/json.hpp>
#include <set>

#include "server/api_error.h"
#include "server/chat_prompt.h"
#include "server/http/message.h"
#include "server/openai_request.h"
#include "server/utf8.h"
#include "text/conversation.h"

namespace sy::server {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& param, const std::string& what,
                      const std::string& code = "invalid_value") {
  throw ApiError(400, "Invalid '" + param + "': " + what, "invalid_request_error", param, code);
}

json parse_object(const std::string& body, const JsonLimits& limits,
                  const std::set<std::string>& known) {
  json o = parse_json_object(body, limits);
  for (const auto& [k, _] : o.items())
    if (!known.count(k))
      throw ApiError(400, "Unrecognized request argument supplied: " + k, "invalid_request_error",
                     k, "unknown_parameter");
  return o;
}

// The boolean at `key`, or `def` when absent or null.
bool flag(const json& o, const char* key, bool def) {
  if (!o.contains(key) || o[key].is_null()) return def;
  if (!o[key].is_boolean()) bad(key, "expected a boolean.", "invalid_type");
  return o[key].get<bool>();
}

// The variant that serves the request: the one `model` names, else the one its id routes to.
std::shared_ptr<EngineRunner> pick(Router& router, const json& o, const std::string& model_name,
                                   const http::Request& req) {
  std::string model;
  if (o.contains("model") && !o["model"].is_null()) {
    if (!o["model"].is_string()) bad("model", "expected a string.", "invalid_type");
    model = o["model"].get<std::string>();
  }
  const std::string pinned = model.empty() || model == model_name ? "" : model;
  const std::string rid = req.get_header_value("X-Request-Id");
  const auto route = router.route(rid.empty() ? "tokenize" : rid, pinned);
  if (!route) {
    if (!pinned.empty())
      throw ApiError(404, "The model '" + model + "' does not exist", "invalid_request_error",
                     "model", "model_not_found");
    throw ApiError(503, "No variant is loaded.", "service_unavailable", "", "no_variant");
  }
  if (!route->primary->tokenizer())
    throw ApiError(400, "The model has no text vocabulary: only token ids are served.",
                   "invalid_request_error", "", "no_vocabulary");
  return route->primary;
}

// llama.cpp's with_pieces: a token's text (control tokens shown), or its bytes when that text
// is not UTF-8 on its own.
json piece_of(const text::Tokenizer& tok, int32_t id) {
  const auto& types = tok.vocab().types;
  const bool special = !types.empty() && (types[id] == text::TokenType::CONTROL ||
                                          types[id] == text::TokenType::UNKNOWN);
  const std::string p = special ? tok.vocab().tokens[id] : tok.piece(id);
  if (valid_utf8(p)) return p;
  json bytes = json::array();
  for (unsigned char c : p) bytes.push_back(int(c));
  return bytes;
}

void reply(http::Response& res, const json& j) {
  res.status = 200;
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void refuse(http::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
}

}  // namespace

void TokenizeService::tokenize(const http::Request& req, http::Response& res) {
  try {
    const json o = parse_object(
        req.body, limits_,
        {"content", "prompt", "messages", "add_special", "add_special_tokens", "parse_special",
         "with_pieces", "return_token_strs", "add_generation_prompt", "model"});
    const int given =
        int(o.contains("content")) + int(o.contains("prompt")) + int(o.contains("messages"));
    if (given != 1)
      throw ApiError(400, "Give exactly one of 'content', 'prompt' or 'messages'.",
                     "invalid_request_error", "", "invalid_value");
    if (o.contains("add_special") && o.contains("add_special_tokens"))
      bad("add_special", "give add_special (llama.cpp) or add_special_tokens (vLLM), not both.");
    const auto runner = pick(router_, o, model_name_, req);
    const text::Tokenizer& tok = *runner->tokenizer();
    // Defaults as each server has them: llama.cpp adds no BOS to `content`, vLLM adds it to a
    // `prompt` and not to `messages` (their templates write what they need).
    const bool add_special = flag(
        o, o.contains("add_special") ? "add_special" : "add_special_tokens", o.contains("prompt"));
    const bool bos = add_special && tok.vocab().add_bos;
    std::vector<int32_t> ids;
    if (o.contains("messages")) {
      if (o.contains("parse_special"))
        bad("parse_special", "with 'messages' only the chat template's markup is parsed.");
      CompletionRequest cr =
          parse_completion_request(json{{"messages", o["messages"]}}.dump(), true, limits_);
      cr.add_generation_prompt = flag(o, "add_generation_prompt", true);
      ids = chat_prompt(runner->variant(), tok, cr, bos).ids;
    } else {
      if (o.contains("add_generation_prompt"))
        bad("add_generation_prompt", "only applies to 'messages'.");
      const char* key = o.contains("content") ? "content" : "prompt";
      if (!o[key].is_string()) bad(key, "expected a string.", "invalid_type");
      // Both servers match special tokens written in the text unless told not to.
      ids =
          text::tokenize(tok, o[key].get<std::string>(),
                         {bos, flag(o, "parse_special", true), add_special && tok.vocab().add_eos});
    }
    json out;
    if (flag(o, "with_pieces", false)) {
      out["tokens"] = json::array();
      for (int32_t id : ids) out["tokens"].push_back({{"id", id}, {"piece", piece_of(tok, id)}});
    } else {
      out["tokens"] = ids;
    }
    out["count"] = ids.size();
    out["max_model_len"] = runner->limits().max_context;
    if (flag(o, "return_token_strs", false)) {
      out["token_strs"] = json::array();
      for (int32_t id : ids) out["token_strs"].push_back(tok.vocab().tokens[id]);
    }
    reply(res, out);
  } catch (const ApiError& e) {
    refuse(res, e);
  }
}

void TokenizeService::apply_template(const http::Request& req, http::Response& res) {
  try {
    // The body of a chat request (llama-server takes the same); what only generation reads is
    // checked and ignored.
    const CompletionRequest cr = parse_completion_request(req.body, true, limits_);
    const auto runner = pick(router_, json{{"model", cr.model}}, model_name_, req);
    const text::RenderedChat r = render_request(runner->variant(), *runner->tokenizer(), cr);
    reply(res, json{{"prompt", r.text}});
  } catch (const ApiError& e) {
    refuse(res, e);
  }
}

void TokenizeService::detokenize(const http::Request& req, http::Response& res) {
  try {
    const json o = parse_object(req.body, limits_, {"tokens", "model"});
    if (!o.contains("tokens")) bad("tokens", "required property is missing.");
    const json& t = o["tokens"];
    if (!t.is_array()) bad("tokens", "expected an array of token ids.", "invalid_type");
    const auto runner = pick(router_, o, model_name_, req);
    const text::Tokenizer& tok = *runner->tokenizer();
    std::vector<int32_t> ids;
    for (size_t i = 0; i < t.size(); ++i) {
      if (!t[i].is_number_integer())
        bad("tokens", "element " + std::to_string(i) + " is not an integer.", "invalid_type");
      const int64_t id = t[i].get<int64_t>();
      if (id < 0 || id >= tok.n_vocab())
        bad("tokens", "token id " + std::to_string(id) + " is out of range (the vocabulary has " +
                          std::to_string(tok.n_vocab()) + " tokens).");
      ids.push_back(int32_t(id));
    }
    // Control tokens show their text, as both servers' detokenize does.
    const std::string text = tok.decode(ids, true);
    reply(res, json{{"content", text}, {"prompt", text}});
  } catch (const ApiError& e) {
    refuse(res, e);
  }
}

}  // namespace sy::server
