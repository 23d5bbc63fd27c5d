#include "server/kv_event_publisher.h"

#include <chrono>
#include <deque>
#include <stdexcept>
#include <zmq.hpp>

#include "host/log.h"

namespace sy::server {
namespace {

// vLLM's heuristic: bind what looks like a local address to serve, connect to anything else.
bool binds(const std::string& ep) {
  return ep.find('*') != std::string::npos || ep.find("::") != std::string::npos ||
         ep.rfind("ipc://", 0) == 0 || ep.rfind("inproc://", 0) == 0;
}

std::string be64(int64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i, v = static_cast<int64_t>(static_cast<uint64_t>(v) >> 8))
    s[i] = static_cast<char>(v & 0xff);
  return s;
}

constexpr auto kCoalesce = std::chrono::milliseconds(2);

double epoch_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void send_frames(zmq::socket_t& s, std::initializer_list<std::string_view> frames) {
  size_t i = 0;
  for (std::string_view f : frames) {
    const auto flag = ++i < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    s.send(zmq::const_buffer(f.data(), f.size()), flag);
  }
}

// One replay request: [identity, "", start_seq] from a REQ client.
void serve_replay(zmq::socket_t& router,
                  const std::deque<std::pair<uint64_t, std::string>>& buffer) {
  std::vector<zmq::message_t> parts;
  zmq::message_t m;
  do {
    if (!router.recv(m, zmq::recv_flags::dontwait)) break;
    parts.emplace_back(std::move(m));
  } while (parts.back().more());
  if (parts.size() != 3 || parts[2].size() != 8) {
    logger()->warn("kv_events: ignoring a replay request of {} frames", parts.size());
    return;
  }
  const std::string id = parts[0].to_string();
  uint64_t start = 0;
  for (uint8_t c : parts[2].to_string()) start = start << 8 | c;
  for (const auto& [seq, payload] : buffer)
    if (seq >= start) send_frames(router, {id, "", be64(static_cast<int64_t>(seq)), payload});
  send_frames(router, {id, "", be64(-1), ""});
}

}  // namespace

bool kv_events_built() {
  return true;
}

KvEventPublisher::KvEventPublisher(KvEventsConfig c)
    : cfg_(std::move(c)), ctx_(std::make_shared<zmq::context_t>(1)) {
  if (!cfg_.medium.empty()) medium_ = cfg_.medium;
  KvEvent cleared;
  cleared.kind = KvEvent::Kind::cleared;
  pending_.push_back(cleared);
  std::promise<void> started;
  auto ready = started.get_future();
  thread_ = std::thread([this, &started] { run(started); });
  try {
    ready.get();
  } catch (...) {
    thread_.join();
    throw;
  }
  logger()->info("kv_events: publishing on {}{}", bound_,
                 replay_bound_.empty() ? "" : ", replay on " + replay_bound_);
}

KvEventPublisher::~KvEventPublisher() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void KvEventPublisher::run(std::promise<void>& started) {
  std::optional<zmq::socket_t> pub, router;
  try {
    pub.emplace(*ctx_, zmq::socket_type::pub);
    pub->set(zmq::sockopt::sndhwm, static_cast<int>(cfg_.hwm));
    pub->set(zmq::sockopt::linger, 1000);  // a closing server still sends what it queued
    if (binds(cfg_.endpoint))
      pub->bind(cfg_.endpoint);
    else
      pub->connect(cfg_.endpoint);
    bound_ = pub->get(zmq::sockopt::last_endpoint);
    if (!cfg_.replay_endpoint.empty()) {
      router.emplace(*ctx_, zmq::socket_type::router);
      router->set(zmq::sockopt::linger, 0);
      router->bind(cfg_.replay_endpoint);
      replay_bound_ = router->get(zmq::sockopt::last_endpoint);
    }
  } catch (const zmq::error_t& e) {
    started.set_exception(std::make_exception_ptr(std::runtime_error(
        "kv_events: cannot open " +
        (pub && !bound_.empty() ? cfg_.replay_endpoint : cfg_.endpoint) + ": " + e.what())));
    return;
  }
  started.set_value();
  std::deque<std::pair<uint64_t, std::string>> buffer;  // for replay
  uint64_t seq = 0;
  for (;;) {
    std::vector<KvEvent> events;
    bool stopping;
    {
      std::unique_lock<std::mutex> lk(mu_);
      // With a replay socket, wake up now and then to answer it.
      auto have = [&] { return stop_ || !pending_.empty(); };
      if (router)
        cv_.wait_for(lk, std::chrono::milliseconds(20), have);
      else
        cv_.wait(lk, have);
      // Let the step that woke us finish publishing, so one request's new blocks travel as one
      // BlockStored (vLLM sends a batch per engine step).
      if (!stop_ && !pending_.empty()) cv_.wait_for(lk, kCoalesce, [&] { return stop_; });
      events.swap(pending_);
      in_flight_ = !events.empty();
      stopping = stop_;
    }
    if (!events.empty()) {
      KvEventBatch b;
      b.ts = epoch_s();
      b.events = std::move(events);
      b.data_parallel_rank = 0;
      std::string payload = encode_kv_events(b, cfg_.encoding);
      try {
        send_frames(*pub, {cfg_.topic, be64(static_cast<int64_t>(seq)), payload});
      } catch (const zmq::error_t& e) {
        logger()->warn("kv_events: batch {} not sent: {}", seq, e.what());
      }
      if (router) {
        buffer.emplace_back(seq, std::move(payload));
        if (buffer.size() > cfg_.buffer_steps) buffer.pop_front();
      }
      ++seq;
      {
        std::lock_guard<std::mutex> lk(mu_);
        sent_ = seq;
        in_flight_ = false;
      }
      sent_cv_.notify_all();
    }
    if (router) {
      try {
        while (router->get(zmq::sockopt::events) & ZMQ_POLLIN) serve_replay(*router, buffer);
      } catch (const zmq::error_t& e) {
        logger()->warn("kv_events: replay failed: {}", e.what());
      }
    }
    if (stopping) {
      std::lock_guard<std::mutex> lk(mu_);
      if (pending_.empty()) break;
    }
  }
}

void KvEventPublisher::queue(KvEvent e) {
  if (!pending_.empty()) {
    KvEvent& last = pending_.back();
    // Consecutive blocks of one chain become one BlockStored, as vLLM sends a request's new
    // blocks; removals gather into one BlockRemoved.
    if (e.kind == KvEvent::Kind::stored && last.kind == KvEvent::Kind::stored &&
        last.block_size == e.block_size && e.parent && *e.parent == last.hashes.back()) {
      last.hashes.push_back(e.hashes[0]);
      last.tokens.insert(last.tokens.end(), e.tokens.begin(), e.tokens.end());
      return;
    }
    if (e.kind == KvEvent::Kind::removed && last.kind == KvEvent::Kind::removed) {
      last.hashes.insert(last.hashes.end(), e.hashes.begin(), e.hashes.end());
      return;
    }
  }
  pending_.push_back(std::move(e));
  cv_.notify_one();
}

void KvEventPublisher::block_stored(model::BlockHash hash, model::BlockHash parent,
                                    std::span<const int32_t> tokens) {
  std::lock_guard<std::mutex> lk(mu_);
  if (++held_[hash] > 1) return;  // another cache of this server already announced it
  KvEvent e;
  e.kind = KvEvent::Kind::stored;
  e.hashes = {hash};
  if (parent) e.parent = parent;
  e.tokens.assign(tokens.begin(), tokens.end());
  e.block_size = static_cast<uint32_t>(tokens.size());
  e.medium = medium_;
  queue(std::move(e));
}

void KvEventPublisher::blocks_removed(std::span<const model::BlockHash> hashes) {
  std::lock_guard<std::mutex> lk(mu_);
  KvEvent e;
  e.kind = KvEvent::Kind::removed;
  e.medium = medium_;
  for (model::BlockHash h : hashes) {
    auto it = held_.find(h);
    if (it == held_.end()) continue;  // keyed before this publisher was attached
    if (--it->second > 0) continue;
    held_.erase(it);
    e.hashes.push_back(h);
  }
  if (!e.hashes.empty()) queue(std::move(e));
}

uint64_t KvEventPublisher::sent() const {
  std::lock_guard<std::mutex> lk(mu_);
  return sent_;
}

bool KvEventPublisher::flush(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lk(mu_);
  return sent_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms),
                           [&] { return pending_.empty() && !in_flight_; });
}

}  // namespace sy::server
