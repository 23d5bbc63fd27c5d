// A KV-event subscriber as a KV-aware router runs one: a SUB socket on the publisher, replay
// (the ROUTER socket) for what it missed, and the set of block hashes the replica holds,
// rebuilt from BlockStored / BlockRemoved / AllBlocksCleared.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <zmq.hpp>

#include "server/kv_event_codec.h"

namespace sy::test {

class KvEventSubscriber {
 public:
  KvEventSubscriber(const std::string& endpoint, const std::string& replay, std::string topic = "")
      : sub_(ctx_, zmq::socket_type::sub), replay_endpoint_(replay), topic_(std::move(topic)) {
    sub_.set(zmq::sockopt::subscribe, topic_);
    sub_.connect(endpoint);
  }

  // Takes whatever the SUB socket has, waiting up to ms for the first message.
  size_t drain(int ms) {
    size_t n = 0;
    zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
    while (zmq::poll(&item, 1, std::chrono::milliseconds(n ? 0 : ms)) > 0) {
      std::vector<zmq::message_t> parts;
      zmq::message_t m;
      do {
        (void)sub_.recv(m);
        parts.emplace_back(std::move(m));
      } while (parts.back().more());
      EXPECT_EQ(parts.size(), 3u) << "topic, sequence, payload";
      if (parts.size() != 3) continue;
      EXPECT_EQ(parts[0].to_string(), topic_);
      EXPECT_EQ(parts[1].size(), 8u);
      batches_[seq_of(parts[1].to_string())] = parts[2].to_string();
      ++n;
      ++live_;
    }
    return n;
  }

  // Asks the replay socket for every batch from `from` on (what the SUB socket missed).
  void replay(uint64_t from) {
    // A DEALER speaks REQ's framing (an empty delimiter first) and takes the many replies.
    zmq::socket_t req(ctx_, zmq::socket_type::dealer);
    req.set(zmq::sockopt::rcvtimeo, 5000);
    req.connect(replay_endpoint_);
    std::string start(8, '\0');
    for (int i = 7; i >= 0; --i, from >>= 8) start[i] = static_cast<char>(from & 0xff);
    req.send(zmq::message_t(), zmq::send_flags::sndmore);
    req.send(zmq::buffer(start));
    for (;;) {
      zmq::message_t delim, seq, payload;
      ASSERT_TRUE(req.recv(delim)) << "replay timed out";
      ASSERT_EQ(delim.size(), 0u);
      ASSERT_TRUE(req.recv(seq));
      ASSERT_TRUE(seq.more());
      ASSERT_TRUE(req.recv(payload));
      if (seq.to_string() == std::string(8, '\xff')) {
        EXPECT_EQ(payload.size(), 0u) << "the end marker has an empty payload";
        return;
      }
      batches_[seq_of(seq.to_string())] = payload.to_string();
      ++replayed_;
    }
  }

  // Applies every batch in sequence order; the numbers must run 0, 1, 2, ... without a gap.
  void rebuild() {
    held.clear();
    uint64_t expect = 0;
    for (const auto& [seq, payload] : batches_) {
      ASSERT_EQ(seq, expect) << "a batch is missing";
      ++expect;
      const server::KvEventBatch b = server::decode_kv_events(payload);
      EXPECT_EQ(b.data_parallel_rank, 0);
      for (const auto& e : b.events) apply(e);
    }
  }

  uint64_t received() const { return batches_.size(); }
  uint64_t live() const { return live_; }
  uint64_t replayed() const { return replayed_; }

  std::set<uint64_t> held;  // what the replica caches, as the stream tells it
  size_t stored_events = 0, removed_events = 0, cleared_events = 0, stored_blocks = 0;
  std::vector<server::KvEvent> first_blocks;  // BlockStored events without a parent

 private:
  static uint64_t seq_of(const std::string& b) {
    uint64_t v = 0;
    for (unsigned char c : b) v = v << 8 | c;
    return v;
  }
  void apply(const server::KvEvent& e) {
    switch (e.kind) {
      case server::KvEvent::Kind::stored:
        ++stored_events;
        stored_blocks += e.hashes.size();
        EXPECT_EQ(e.tokens.size(), e.hashes.size() * e.block_size);
        if (e.parent)
          EXPECT_TRUE(seen_.count(*e.parent)) << "a parent never announced";
        else
          first_blocks.push_back(e);
        for (uint64_t h : e.hashes) {
          EXPECT_TRUE(held.insert(h).second) << "block " << h << " announced twice";
          seen_.insert(h);
        }
        break;
      case server::KvEvent::Kind::removed:
        ++removed_events;
        for (uint64_t h : e.hashes) EXPECT_EQ(held.erase(h), 1u) << "removed unknown block " << h;
        break;
      case server::KvEvent::Kind::cleared:
        ++cleared_events;
        held.clear();
        break;
    }
  }

  zmq::context_t ctx_{1};
  zmq::socket_t sub_;
  std::string replay_endpoint_, topic_;
  std::map<uint64_t, std::string> batches_;
  std::set<uint64_t> seen_;
  uint64_t live_ = 0, replayed_ = 0;
};

}  // namespace sy::test
