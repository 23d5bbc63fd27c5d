// Publishes the prefix cache's contents as vLLM's KV events over ZeroMQ, so a KV-aware router
// (llm-d's precise prefix-cache scorer, Dynamo's KV router) can send a request where its prefix
// is cached. What vLLM's ZmqEventPublisher does, on the same wire:
//   - a PUB socket; every message is three frames: topic, an 8-byte big-endian sequence number
//     (0, 1, 2, ...), and one msgpack EventBatch (server/kv_event_codec.h);
//   - an optional ROUTER socket for replay: a client sends the first sequence number it missed
//     (8 bytes, big-endian) and gets back [seq, payload] for every buffered batch from there on,
//     then [-1 (8 bytes), ""];
//   - an endpoint with '*' or '::', or an ipc:// or inproc:// one, is bound; any other is
//     connected to (a subscriber that binds, as llm-d's central indexer does).
// One publisher serves every variant of the server: a hash is announced when the first cache
// keys it and withdrawn when the last one drops it, so the stream describes the replica's
// caches taken together. The first batch is AllBlocksCleared: a new process holds nothing, and
// a subscriber must forget what an earlier one on this endpoint announced.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "model/kv_cache.h"
#include "server/kv_event_codec.h"
#include "server/kv_events_config.h"

namespace zmq {
class context_t;
}

namespace sy::server {

class KvEventPublisher : public model::BlockObserver {
 public:
  // Opens the sockets; throws std::runtime_error naming the endpoint when one cannot be bound
  // or connected.
  explicit KvEventPublisher(KvEventsConfig c);
  ~KvEventPublisher() override;  // sends what is pending, then closes
  KvEventPublisher(const KvEventPublisher&) = delete;
  KvEventPublisher& operator=(const KvEventPublisher&) = delete;

  void block_stored(model::BlockHash hash, model::BlockHash parent,
                    std::span<const int32_t> tokens) override;
  void blocks_removed(std::span<const model::BlockHash> hashes) override;

  // Batches sent so far (the next sequence number); the endpoint actually bound (a '*' port
  // resolved), for tests and logs.
  uint64_t sent() const;
  const std::string& endpoint() const { return bound_; }
  const std::string& replay_endpoint() const { return replay_bound_; }
  // Blocks until everything queued so far is sent (tests), at most timeout_ms.
  bool flush(int64_t timeout_ms);

 private:
  void run(std::promise<void>& started);
  void queue(KvEvent e);  // under mu_

  const KvEventsConfig cfg_;
  std::optional<std::string> medium_;
  std::string bound_, replay_bound_;
  // The sockets live on the publisher thread. Shared, not unique: a shared_ptr's deleter is bound
  // where it is made, so a build without ZeroMQ (server/kv_events_off.cpp) can destroy it.
  std::shared_ptr<zmq::context_t> ctx_;
  mutable std::mutex mu_;
  std::condition_variable cv_, sent_cv_;
  std::vector<KvEvent> pending_;
  bool in_flight_ = false;  // a batch taken from pending_ and not yet sent
  std::unordered_map<model::BlockHash, uint32_t> held_;  // caches holding each hash
  uint64_t sent_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sy::server
