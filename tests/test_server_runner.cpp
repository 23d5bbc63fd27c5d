// Engine::cancel and the EngineRunner: the engine loop on its own thread with submissions from
// other threads, streaming callbacks, cancellation that frees KV blocks, deadlines, the queue
// bound and draining.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "config/config.h"
#include "engine/variant.h"
#include "host/host_api.h"
#include "server/engine_runner.h"
#include "server_fixture.h"

namespace {

using namespace sy;
using server::EngineRunner;
using server::Outcome;

Config tiny_config(const std::string& scheduler, const std::string& params = "",
                   const std::string& engine = "") {
  return parse_config(std::string("plugin_dirs = [\"") + SWITCHYARD_PLUGIN_DIR +
                          "\"]\n[model]\npath = \"" + test::model_file("f32").string() +
                          "\"\n[backend]\nplugin = \"cpu_ref\"\n[scheduler]\nplugin = \"" +
                          scheduler + "\"\n" + params +
                          (engine.empty() ? "" : "[engine]\n" + engine),
                      "runner.toml");
}

engine::RequestSpec spec(int salt, uint32_t n) {
  engine::RequestSpec s;
  s.prompt = test::sample_tokens(5 + salt % 7, 259, salt);
  s.max_new_tokens = n;
  s.stop_at_eos = false;
  return s;
}

// A request's tokens as they stream and its one finish.
struct Collector {
  std::mutex mu;
  std::vector<int32_t> streamed;
  std::promise<Outcome> done;
  int finishes = 0;
  server::Callbacks callbacks() {
    return {[this](int32_t t, const sy::text::TokenLogprob*,
                   const std::vector<sy::text::TokenLogprob>*) {
              std::lock_guard<std::mutex> lk(mu);
              streamed.push_back(t);
              return false;
            },
            [this](const Outcome& o) {
              ++finishes;
              done.set_value(o);
            }};
  }
};

TEST(EngineCancel, RemovesWaitingAndAbortsRunningFreeingBlocks) {
  test::Loaded m(test::model_file("f32"), "cpu_ref", 64);
  Scheduler s(test::host().load(SY_PLUGIN_SCHEDULER, "fixed_window"),
              Params{{"max_batch", "1"}, {"wait_window_ms", "0"}});
  engine::Engine e(*m.model, *m.cache, s, engine::EngineLimits{});
  const uint64_t a = e.submit(spec(1, 40)), b = e.submit(spec(2, 40));
  e.step();  // a runs alone (max_batch 1), b waits
  ASSERT_TRUE(e.request(a).running);
  ASSERT_LT(m.cache->pool().free_count(), m.cache->pool().total());
  EXPECT_TRUE(e.cancel(b));
  EXPECT_EQ(e.n_waiting(), 0u);
  EXPECT_EQ(e.request(b).finish, engine::FinishReason::aborted);
  EXPECT_TRUE(e.cancel(a));
  EXPECT_EQ(e.request(a).finish, engine::FinishReason::aborted);
  EXPECT_TRUE(e.idle());
  EXPECT_EQ(m.cache->pool().free_count(), m.cache->pool().total());
  EXPECT_FALSE(e.cancel(a));    // already finished
  EXPECT_FALSE(e.cancel(999));  // unknown
  e.forget(a);
  EXPECT_EQ(e.requests().count(a), 0u);
  EXPECT_EQ(e.requests().count(b), 1u);
}

TEST(EngineRunner, ConcurrentSubmissionsMatchADirectRunAndStream) {
  const Config cfg = tiny_config("dynamic");
  std::vector<std::vector<int32_t>> want;
  {
    auto v = engine::Variant::build(cfg);
    std::vector<uint64_t> ids;
    for (int i = 0; i < 6; ++i) ids.push_back(v->engine->submit(spec(i, 12)));
    v->engine->run_until_idle();
    for (auto id : ids) want.push_back(v->engine->request(id).output);
  }
  EngineRunner r("v", engine::Variant::build(cfg), 64, nullptr);
  std::vector<Collector> c(6);
  std::vector<std::thread> threads;
  std::vector<EngineRunner::Ticket> tickets(6);
  for (int i = 0; i < 6; ++i)
    threads.emplace_back(
        [&, i] { tickets[i] = r.submit(spec(i, 12), c[i].callbacks(), now_ns(), 0); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(tickets[i].status, EngineRunner::Admit::ok) << tickets[i].error;
    const Outcome o = c[i].done.get_future().get();
    EXPECT_EQ(o.reason, engine::FinishReason::length);
    EXPECT_EQ(o.tokens, want[i]) << i;
    EXPECT_EQ(c[i].streamed, want[i]) << i;
    EXPECT_EQ(o.token_ns.size(), 12u);
    EXPECT_GE(o.first_scheduled_ns, o.arrival_ns);
  }
  EXPECT_TRUE(r.variant().engine->requests().empty());  // finished records are dropped
}

TEST(EngineRunner, RefusesWhatTheEngineRefusesWithItsReason) {
  EngineRunner r("v", engine::Variant::build(tiny_config("fixed_window")), 8, nullptr);
  Collector c;
  const auto t = r.submit(spec(1, 600), c.callbacks(), now_ns(), 0);
  EXPECT_EQ(t.status, EngineRunner::Admit::invalid);
  EXPECT_EQ(t.error, "prompt of 6 tokens + max_new_tokens 600 exceeds the context of 512");
  EXPECT_EQ(c.finishes, 0);
}

TEST(EngineRunner, CancelAbortsARunningRequestAndFreesItsBlocks) {
  EngineRunner r("v", engine::Variant::build(tiny_config("fixed_window", "wait_window_ms = 0\n")),
                 8, nullptr);
  std::promise<void> first;
  bool signalled = false;
  Collector c;
  auto cb = c.callbacks();
  auto inner = cb.on_token;
  cb.on_token = [&](int32_t t, const sy::text::TokenLogprob* lp,
                    const std::vector<sy::text::TokenLogprob>* prompt_lp) {
    inner(t, lp, prompt_lp);
    if (!signalled) first.set_value();
    signalled = true;
    return false;
  };
  const auto t = r.submit(spec(3, 400), cb, now_ns(), 0);
  ASSERT_EQ(t.status, EngineRunner::Admit::ok);
  first.get_future().wait();
  r.cancel(t.id);
  const Outcome o = c.done.get_future().get();
  EXPECT_EQ(o.reason, engine::FinishReason::aborted);
  EXPECT_FALSE(o.timed_out);
  EXPECT_LT(o.tokens.size(), 400u);
  ASSERT_TRUE(test::eventually([&] { return r.snapshot().running == 0; }));
  EXPECT_EQ(r.snapshot().kv_used, 0u);
  r.cancel(t.id);  // finished: a no-op
}

TEST(EngineRunner, DeadlineAbortsAWaitingRequest) {
  // fixed_window holds a lone request for its 5 s window; the 100 ms deadline comes first.
  EngineRunner r(
      "v",
      engine::Variant::build(tiny_config("fixed_window", "max_batch = 4\nwait_window_ms = 5000\n")),
      8, nullptr);
  Collector c;
  const int64_t now = now_ns();
  ASSERT_EQ(r.submit(spec(1, 4), c.callbacks(), now, now + 100'000'000).status,
            EngineRunner::Admit::ok);
  auto f = c.done.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(3)), std::future_status::ready);
  const Outcome o = f.get();
  EXPECT_TRUE(o.timed_out);
  EXPECT_EQ(o.reason, engine::FinishReason::aborted);
  EXPECT_TRUE(o.tokens.empty());
  EXPECT_EQ(o.first_scheduled_ns, 0);
}

TEST(EngineRunner, QueueBoundAndDrain) {
  EngineRunner r(
      "v",
      engine::Variant::build(tiny_config("fixed_window", "max_batch = 4\nwait_window_ms = 300\n")),
      2, nullptr);
  Collector a, b, c;
  ASSERT_EQ(r.submit(spec(1, 3), a.callbacks(), now_ns(), 0).status, EngineRunner::Admit::ok);
  ASSERT_EQ(r.submit(spec(2, 3), b.callbacks(), now_ns(), 0).status, EngineRunner::Admit::ok);
  const auto full = r.submit(spec(3, 3), c.callbacks(), now_ns(), 0);
  EXPECT_EQ(full.status, EngineRunner::Admit::queue_full);
  EXPECT_EQ(full.error, "the queue of variant 'v' is full (2 requests waiting)");
  r.start_drain();
  const auto refused = r.submit(spec(3, 3), c.callbacks(), now_ns(), 0);
  EXPECT_EQ(refused.status, EngineRunner::Admit::draining);
  EXPECT_EQ(refused.error, "variant 'v' is draining");
  EXPECT_FALSE(r.wait_drained(0));
  EXPECT_TRUE(r.wait_drained(5000));  // the accepted two still run to the end
  EXPECT_EQ(a.done.get_future().get().reason, engine::FinishReason::length);
  EXPECT_EQ(b.done.get_future().get().tokens.size(), 3u);
  EXPECT_EQ(c.finishes, 0);
}

TEST(EngineRunner, DestructionAbortsWhatIsLeft) {
  Collector c;
  {
    EngineRunner r("v",
                   engine::Variant::build(
                       tiny_config("fixed_window", "max_batch = 4\nwait_window_ms = 5000\n")),
                   8, nullptr);
    ASSERT_EQ(r.submit(spec(1, 3), c.callbacks(), now_ns(), 0).status, EngineRunner::Admit::ok);
  }
  EXPECT_EQ(c.finishes, 1);
  EXPECT_EQ(c.done.get_future().get().reason, engine::FinishReason::aborted);
}

}  // namespace
