// vLLM's KV cache events: the msgpack bytes (what msgspec writes for vLLM's structs), the
// decoder's errors, the config keys, and a subscriber that rebuilds the set of cached block
// hashes from the ZeroMQ stream, which must equal the prefix cache's own: under eviction, over
// a hot swap, and when a cache goes away.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "config/toml_reader.h"
#include "kv_event_subscriber.h"
#include "server/kv_event_publisher.h"
#include "server/serve_config.h"
#include "server_fixture.h"
#include "tiny_model.h"

using sy::server::KvEvent;
using sy::server::KvEventBatch;
using sy::server::KvEventEncoding;

namespace {

std::string hex(const std::string& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (unsigned char c : b) (s += d[c >> 4]) += d[c & 15];
  return s;
}

std::string ascii_hex(const char* s) {
  return hex(std::string(s));
}

KvEventBatch sample_batch() {
  KvEventBatch b;
  b.ts = 1.5;
  KvEvent st;
  st.kind = KvEvent::Kind::stored;
  st.hashes = {1, 300};
  st.tokens = {5, 6};
  st.block_size = 1;
  KvEvent rm;
  rm.kind = KvEvent::Kind::removed;
  rm.hashes = {1};
  KvEvent cl;
  cl.kind = KvEvent::Kind::cleared;
  b.events = {st, rm, cl};
  b.data_parallel_rank = 0;
  return b;
}

std::set<uint64_t> as_set(const std::vector<uint64_t>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

// The bytes msgspec writes for vLLM's array_like structs: the batch [ts, events, dp_rank], each
// event [tag, fields...] with every field that has no default present (nil when None).
TEST(KvEventCodec, ArrayEncodingIsVllmsPositionalMsgpack) {
  const std::string want =
      "93"                  // EventBatch: 3 fields
      "cb3ff8000000000000"  // ts = 1.5 (float64)
      "93"                  // 3 events
      "98"                  // BlockStored: tag + 7 fields
      "ab" +
      ascii_hex("BlockStored") +
      "9201cd012c"  // block_hashes [1, 300]
      "c0"          // parent_block_hash None
      "920506"      // token_ids [5, 6]
      "01"          // block_size 1
      "c0c0c0"      // lora_id, medium, lora_name None
      "93"          // BlockRemoved: tag + 2 fields
      "ac" +
      ascii_hex("BlockRemoved") +
      "9101c0"  // block_hashes [1], medium None
      "91"      // AllBlocksCleared: the tag alone
      "b0" +
      ascii_hex("AllBlocksCleared") + "00";  // data_parallel_rank 0
  EXPECT_EQ(hex(sy::server::encode_kv_events(sample_batch())), want);
}

TEST(KvEventCodec, MapEncodingNamesEveryFieldAndTagsWithType) {
  KvEventBatch b = sample_batch();
  b.events.resize(1);
  b.events[0].parent = 7;
  b.events[0].medium = "GPU";
  const std::string bytes = sy::server::encode_kv_events(b, KvEventEncoding::map);
  // The event is a map of 8: "type" first, then the fields in declaration order.
  const std::string h = hex(bytes);
  EXPECT_EQ(h.substr(0, 24),
            "93cb3ff800000000000091"
            "88");
  EXPECT_NE(h.find("a4" + ascii_hex("type") + "ab" + ascii_hex("BlockStored")), std::string::npos);
  EXPECT_NE(h.find("b1" + ascii_hex("parent_block_hash") + "07"), std::string::npos);
  EXPECT_NE(h.find("a6" + ascii_hex("medium") + "a3" + ascii_hex("GPU")), std::string::npos);
  const KvEventBatch back = sy::server::decode_kv_events(bytes);
  ASSERT_EQ(back.events.size(), 1u);
  EXPECT_EQ(back.events[0].hashes, (std::vector<uint64_t>{1, 300}));
  EXPECT_EQ(back.events[0].parent, 7u);
  EXPECT_EQ(back.events[0].tokens, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(back.events[0].medium, "GPU");
}

TEST(KvEventCodec, DecodesBothEncodingsAndLargeHashes) {
  KvEventBatch b = sample_batch();
  b.events[0].hashes = {0xfedcba9876543210ull};  // above int64: msgpack uint64
  for (auto enc : {KvEventEncoding::array, KvEventEncoding::map}) {
    const KvEventBatch back = sy::server::decode_kv_events(sy::server::encode_kv_events(b, enc));
    EXPECT_DOUBLE_EQ(back.ts, 1.5);
    ASSERT_EQ(back.events.size(), 3u);
    EXPECT_EQ(back.events[0].kind, KvEvent::Kind::stored);
    EXPECT_EQ(back.events[0].hashes[0], 0xfedcba9876543210ull);
    EXPECT_FALSE(back.events[0].parent.has_value());
    EXPECT_EQ(back.events[0].block_size, 1u);
    EXPECT_EQ(back.events[1].kind, KvEvent::Kind::removed);
    EXPECT_EQ(back.events[2].kind, KvEvent::Kind::cleared);
  }
}

TEST(KvEventCodec, MalformedBatchesAreRefusedByName) {
  auto error = [](const std::string& bytes) {
    try {
      sy::server::decode_kv_events(bytes);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("\x91\xc0"), "malformed KV event batch: the batch has 1 fields");
  EXPECT_EQ(error(std::string("\x92\xcb\x3f\xf8\0\0\0\0\0\0\x91\x91\xa3"
                              "Foo",
                              16)),
            "malformed KV event batch: unknown event tag 'Foo'");
  EXPECT_EQ(error(std::string("\x92\xcb\x3f\xf8\0\0\0\0\0\0\x91\x91\x01", 13)),
            "malformed KV event batch: an event's tag is not a string");
  EXPECT_EQ(error(std::string("\x92\xa1x\x90", 4)), "malformed KV event batch: ts is not a number");
}

TEST(KvEventsConfig, ServeTableKeysAreCheckedWithTheirPosition) {
  const auto cfg = sy::server::parse_serve_config(
      "[serve]\nkv_events = { endpoint = \"tcp://*:6000\", topic = \"kv@a@b\", encoding = \"map\" "
      "}\n"
      "[model]\npath = \"m.gguf\"\n[backend]\nplugin = \"cpu_ref\"\n[scheduler]\nplugin = "
      "\"dynamic\"\n",
      "t.toml");
  ASSERT_TRUE(cfg.serve.kv_events.has_value());
  EXPECT_EQ(cfg.serve.kv_events->endpoint, "tcp://*:6000");
  EXPECT_EQ(cfg.serve.kv_events->topic, "kv@a@b");
  EXPECT_EQ(cfg.serve.kv_events->encoding, KvEventEncoding::map);
  EXPECT_FALSE(sy::server::parse_serve_config("[model]\npath = \"m.gguf\"\n[backend]\nplugin = "
                                              "\"cpu_ref\"\n[scheduler]\nplugin = \"dynamic\"\n",
                                              "t.toml")
                   .serve.kv_events.has_value())
      << "off by default";
  auto error = [](const std::string& serve) {
    try {
      sy::server::parse_serve_config(
          "[serve]\n" + serve +
              "\n[model]\npath = \"m.gguf\"\n[backend]\n"
              "plugin = \"cpu_ref\"\n[scheduler]\nplugin = \"dynamic\"\n",
          "t.toml");
    } catch (const sy::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("kv_events = { endpoint = \"localhost:5557\" }"),
            "t.toml:2:26: serve.kv_events.endpoint: expected a ZeroMQ endpoint such as "
            "tcp://*:5557, got 'localhost:5557'");
  EXPECT_EQ(error("kv_events = { encoding = \"json\" }"),
            "t.toml:2:26: serve.kv_events.encoding: expected \"array\" or \"map\", got 'json'");
  EXPECT_EQ(error("kv_events = { port = 1 }"), "t.toml:2:15: serve.kv_events.port: unknown key");
  EXPECT_EQ(error("kv_events = 1"), "t.toml:2:13: serve.kv_events: expected a table, got integer");
}

TEST(KvEventPublisher, AnEndpointThatCannotBeBoundIsAnErrorNamingIt) {
  sy::server::KvEventsConfig c;
  c.endpoint = "tcp://127.0.0.1:*";
  sy::server::KvEventPublisher first(c);
  c.replay_endpoint = first.endpoint();  // already bound by `first`
  try {
    sy::server::KvEventPublisher second(c);
    FAIL() << "bound twice";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "kv_events: cannot open " + first.endpoint() + ": Address already in use");
  }
}

// The engine's prefix cache under eviction, its publish and evict points feeding the publisher;
// the subscriber joins late (ZeroMQ drops what a PUB sends before a SUB is connected) and
// replays what it missed, as vLLM's subscriber does.
TEST(KvEventPublisher, SubscriberRebuildsTheCachedBlockSetOfAnEngine) {
  sy::server::KvEventsConfig c;
  c.endpoint = "tcp://127.0.0.1:*";
  c.replay_endpoint = "tcp://127.0.0.1:*";
  c.topic = "kv@127.0.0.1:8000@tiny";
  sy::server::KvEventPublisher pub(c);
  sy::test::KvEventSubscriber sub(pub.endpoint(), pub.replay_endpoint(), c.topic);

  sy::test::Loaded m(sy::test::model_file("f32"), "cpu_ref", 20);  // 20 blocks of 16: evictions
  m.cache->pool().set_observer(&pub);
  sy::Scheduler sched(sy::test::host().load(SY_PLUGIN_SCHEDULER, "dynamic"), {});
  sy::engine::EngineLimits lim;
  lim.prefix_caching = true;
  lim.max_seqs = 3;
  sy::engine::Engine e(*m.model, *m.cache, sched, lim);
  std::vector<std::vector<int32_t>> firsts;  // each prompt's first block
  auto run = [&](int salt0, int n) {
    for (int i = 0; i < n; ++i) {
      // Three system prompts (2 blocks each) shared across requests, then a tail of its own.
      std::vector<int32_t> p = sy::test::sample_tokens(32, 200, (salt0 + i) % 3);
      const auto tail = sy::test::sample_tokens(10 + 7 * (i % 4), 200, 50 + salt0 + i);
      p.insert(p.end(), tail.begin(), tail.end());
      for (auto& t : p) t += 3;
      firsts.emplace_back(p.begin(), p.begin() + 16);
      sy::engine::RequestSpec s;
      s.prompt = p;
      s.max_new_tokens = 9;
      s.stop_at_eos = false;
      e.submit(s);
    }
    for (int steps = 0; !e.idle() && steps < 5000; ++steps) e.step();
    ASSERT_TRUE(e.idle());
  };
  run(0, 8);
  ASSERT_TRUE(pub.flush(5000));
  sub.drain(50);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the SUB is connected by now
  run(100, 8);
  ASSERT_TRUE(pub.flush(5000));
  EXPECT_GT(sub.drain(5000), 0u) << "nothing came over the PUB socket";
  sub.replay(0);
  sub.rebuild();
  EXPECT_EQ(sub.received(), pub.sent());
  EXPECT_GT(sub.replayed(), 0u);

  const auto own = as_set(m.cache->pool().cached_hashes());
  EXPECT_EQ(sub.held, own) << "the stream's cache differs from the engine's";
  EXPECT_FALSE(own.empty());
  EXPECT_GT(m.cache->pool().evictions(), 0u);
  EXPECT_GT(sub.removed_events, 0u);
  EXPECT_EQ(sub.cleared_events, 1u) << "the first batch clears what an earlier process announced";
  // Consecutive blocks of a chain travel as one event, the way vLLM sends a request's blocks.
  EXPECT_LT(sub.stored_events, sub.stored_blocks);
  // A chain's first blocks carry the tokens the hashes were computed from (llm-d recomputes
  // its keys from token_ids).
  ASSERT_FALSE(sub.first_blocks.empty());
  for (const KvEvent& ev : sub.first_blocks) {
    EXPECT_EQ(ev.block_size, 16u);
    EXPECT_EQ(sy::model::block_hashes(ev.tokens.data(), ev.tokens.size(), 16), ev.hashes);
    const std::vector<int32_t> head(ev.tokens.begin(), ev.tokens.begin() + 16);
    EXPECT_NE(std::find(firsts.begin(), firsts.end(), head), firsts.end());
  }

  // A cache that goes away takes its blocks with it.
  m.cache.reset();
  ASSERT_TRUE(pub.flush(5000));
  sub.drain(5000);
  sub.replay(0);
  sub.rebuild();
  EXPECT_TRUE(sub.held.empty());
}

// The server wires [serve] kv_events to every variant's cache, and a hot swap that retires a
// variant withdraws its blocks.
TEST(KvEventServer, StreamFollowsTheServersCachesAcrossAHotSwap) {
  using sy::test::json;
  auto config = [](uint32_t max_seqs) {
    return sy::test::plugin_dirs_line() +
           "[serve]\nkv_events = { endpoint = \"tcp://127.0.0.1:*\", replay_endpoint = "
           "\"tcp://127.0.0.1:*\", topic = \"kv\" }\n" +
           sy::test::variant_tables("", "dynamic", "", {},
                                    "prefix_caching = true\nkv_blocks = 48\nmax_seqs = " +
                                        std::to_string(max_seqs) + "\n");
  };
  sy::test::TestServer s("kv_events", config(4));
  sy::server::KvEventPublisher* pub = s.server->kv_events();
  ASSERT_NE(pub, nullptr);
  sy::test::KvEventSubscriber sub(pub->endpoint(), pub->replay_endpoint(), "kv");
  const std::string system(40, 's');
  for (int i = 0; i < 4; ++i) {
    auto r = s.post("/v1/completions", sy::test::greedy(system + std::string(5 + i, 'a' + i), 4));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }
  auto cached = [&] {
    std::set<uint64_t> all;
    for (const auto& e : s.server->router().current()->variants)
      for (uint64_t h : e.runner->variant().cache->pool().cached_hashes()) all.insert(h);
    return all;
  };
  ASSERT_TRUE(pub->flush(5000));
  sub.replay(0);
  sub.rebuild();
  const auto before = cached();
  EXPECT_FALSE(before.empty());
  EXPECT_EQ(sub.held, before);

  sy::test::write_file(s.config, config(3));  // a changed variant: built anew, the old retired
  auto r = s.post("/admin/reload", json::object());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_TRUE(sy::test::eventually([&] { return s.server->reloader().draining() == 0; }));
  auto again = s.post("/v1/completions", sy::test::greedy(system + "zz", 4));
  ASSERT_TRUE(again);
  ASSERT_EQ(again->status, 200);
  ASSERT_TRUE(pub->flush(5000));
  sub.replay(0);
  sub.rebuild();
  const auto after = cached();
  EXPECT_EQ(sub.held, after);
  for (uint64_t h : before)
    EXPECT_EQ(after.count(h), sub.held.count(h)) << "a retired cache's block is still announced";
}
