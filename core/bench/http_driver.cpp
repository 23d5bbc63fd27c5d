#include "bench/http_driver.h"

#include <chrono>
#include <mutex>
#include <thread>

#include "bench/http_client.h"
#include "host/host_api.h"

namespace sy::bench {

std::string completion_body(const WorkItem& it, const std::string& model) {
  std::string b = "{";
  if (!model.empty()) b += "\"model\": \"" + model + "\", ";
  b += "\"prompt\": [";
  for (size_t i = 0; i < it.prompt.size(); ++i) b += (i ? "," : "") + std::to_string(it.prompt[i]);
  b += "], \"max_tokens\": " + std::to_string(it.max_new_tokens) +
       ", \"temperature\": 0, \"ignore_eos\": true, \"stream\": true}";
  return b;
}

namespace {

void send_one(const Url& url, const std::string& model, const WorkItem& it, double timeout_s,
              RequestRecord& rec) {
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
    for (size_t n = chunk_tokens(data); n > 0; --n) rec.token_ns.push_back(now);
  });
  std::string body_text;  // kept for the message when the status is not 200
  try {
    const int status =
        http_post(url, completion_body(it, model), timeout_s, [&](std::string_view b) {
          if (body_text.size() < 512) body_text.append(b.substr(0, 512 - body_text.size()));
          sse.feed(b);
        });
    if (status != 200)
      rec.error = "HTTP " + std::to_string(status) + ": " + body_text;
    else if (!error_text.empty())
      rec.error = "server error: " + error_text;
    else if (!done)
      rec.error = "stream ended without [DONE]";
  } catch (const std::exception& e) {
    rec.error = e.what();
  }
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
