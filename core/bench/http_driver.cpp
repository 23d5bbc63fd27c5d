#include "bench/http_driver.h"

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/http_client.h"
#include "host/host_api.h"

namespace sy::bench {

namespace {

using Json = nlohmann::ordered_json;

std::string body(Json prompt, uint32_t max_tokens, bool stream, const std::string& model) {
  Json b = Json::object();
  if (!model.empty()) b["model"] = model;
  b["prompt"] = std::move(prompt);
  b["max_tokens"] = max_tokens;
  b["temperature"] = 0;
  b["ignore_eos"] = true;
  b["stream"] = stream;
  return b.dump();
}

}  // namespace

std::string completion_body(const WorkItem& it, const std::string& model) {
  return body(it.prompt, it.max_new_tokens, true, model);
}

std::string completion_body(const std::string& prompt, uint32_t max_tokens, bool stream) {
  return body(prompt, max_tokens, stream, "");
}

CompletionAnswer post_completion(HttpClient& client, const std::string& path,
                                 const std::string& request, bool stream) {
  CompletionAnswer a;
  bool done = false;
  std::string error_text;
  SseParser sse([&](std::string_view data) {
    if (data == "[DONE]") {
      done = true;
      return;
    }
    if (data.find("\"error\"") != std::string_view::npos) {
      error_text = std::string(data);
      return;
    }
    const int64_t now = now_ns();
    for (size_t n = chunk_tokens(data); n > 0; --n) a.token_ns.push_back(now);
  });
  std::string text;  // a non-streamed body, or the start of a stream for messages
  try {
    a.status = client.post(path, request, [&](std::string_view b) {
      if (!stream || text.size() < 512) text.append(stream ? b.substr(0, 512 - text.size()) : b);
      if (stream) sse.feed(b);
    });
  } catch (const std::exception& e) {
    a.error = e.what();
    return a;
  }
  if (a.status != 200) {
    a.error = "HTTP " + std::to_string(a.status) + ": " + text.substr(0, 512);
  } else if (stream) {
    a.tokens = a.token_ns.size();
    if (!error_text.empty())
      a.error = "server error: " + error_text;
    else if (!done)
      a.error = "stream ended without [DONE]";
  } else {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.contains("usage"))
      a.error = "answer without usage: " + text.substr(0, 512);
    else if (j.contains("error"))
      a.error = "server error: " + text.substr(0, 512);
    else
      a.tokens = j["usage"].value("completion_tokens", uint64_t{0});
  }
  return a;
}

namespace {

void send_one(const Url& url, const std::string& model, const WorkItem& it, double timeout_s,
              RequestRecord& rec) {
  HttpClient client(url, timeout_s);
  CompletionAnswer a = post_completion(client, url.path, completion_body(it, model), true);
  rec.token_ns = std::move(a.token_ns);
  rec.error = std::move(a.error);
  rec.finish_ns = now_ns();
  rec.ok = rec.error.empty() && !rec.token_ns.empty();
  if (rec.ok)
    rec.finish_ns = rec.token_ns.back();
  else if (rec.error.empty())
    rec.error = "no tokens";
}

}  // namespace

RunLog replay_http(const std::string& endpoint, const std::string& model,
                   const std::vector<WorkItem>& items, const DriverOptions& opt) {
  const Url url = parse_url(endpoint);
  RunLog log;
  log.requests.resize(items.size());
  std::mutex mu;
  size_t finished = 0;
  std::vector<std::thread> threads;
  const int64_t t0 = now_ns();
  log.start_ns = t0;
  for (size_t i = 0; i < items.size(); ++i) {
    const int64_t at = t0 + items[i].arrival_ns;
    if (at > now_ns()) std::this_thread::sleep_for(std::chrono::nanoseconds(at - now_ns()));
    RequestRecord& rec = log.requests[i];
    rec.simple = items[i].simple;
    rec.prompt_len = static_cast<uint32_t>(items[i].prompt.size());
    rec.max_new_tokens = items[i].max_new_tokens;
    rec.arrival_ns = at;
    threads.emplace_back([&, i] {
      send_one(url, model, items[i], opt.timeout_s, log.requests[i]);
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (opt.on_progress) opt.on_progress(finished, items.size());
    });
  }
  for (auto& t : threads) t.join();
  log.end_ns = now_ns();
  return log;
}

}  // namespace sy::bench
