// switchyard-plugin-runner: runs one untrusted scheduler plugin in its own process and serves
// create and plan calls from the host over a socket (host/plan_wire.h), so a crash or a hang in
// the plugin costs the host one step, not the process. Started by the host, never by hand:
//   switchyard-plugin-runner --fd N [--log-level L] PLUGIN.so
#include <spdlog/sinks/base_sink.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "host/host_api.h"
#include "host/log.h"
#include "host/plan_wire.h"
#include "host/plugin_host.h"
#include "host/scheduler.h"

namespace {

using namespace sy;

int g_fd = -1;

// The parent is gone or speaks nonsense: nothing useful is left to do.
[[noreturn]] void lost(const std::string& why) {
  std::fprintf(stderr, "switchyard-plugin-runner: %s\n", why.c_str());
  std::_Exit(3);
}

void send(uint8_t type, const wire::Writer& w) {
  std::string why;
  if (wire::write_frame(g_fd, type, w.data(), 0, why) != wire::Io::ok)
    lost("cannot write to the host" + (why.empty() ? "" : ": " + why));
}

// False when the host closed the socket: time to shut down.
bool receive(wire::Frame& f) {
  std::string why;
  const wire::Io io = wire::read_frame(g_fd, f, 0, why);
  if (io == wire::Io::eof) return false;
  if (io != wire::Io::ok) lost("cannot read from the host: " + why);
  return true;
}

// The plugin's host->log calls (and the loader's own messages) travel to the host's log.
class FrameSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    wire::Writer w;
    w.put(static_cast<uint32_t>(msg.level));
    w.str(std::string(msg.payload.data(), msg.payload.size()));
    send(wire::kLog, w);
  }
  void flush_() override {}
};

// Counters the plugin added during a call, as deltas for the host's counters.
void send_counter_deltas(std::map<std::string, double>& seen) {
  for (const auto& [name, value] : host_counters()) {
    const double delta = value - seen[name];
    if (delta == 0) continue;
    seen[name] = value;
    wire::Writer w;
    w.str(name);
    w.put(delta);
    send(wire::kCounter, w);
  }
}

// The view's cost model lives in the host: ask it.
int64_t remote_estimate(void*, const sy_step_shape* shape) {
  sy_step_shape s{};
  std::memcpy(&s, shape,
              std::min<size_t>(shape->struct_size, sizeof s));  // a plugin's may be older
  wire::Writer w;
  wire::put_shape(w, s);
  send(wire::kEstimate, w);
  wire::Frame f;
  if (!receive(f) || f.type != wire::kEstimateReply) lost("expected an estimate reply");
  wire::Reader r(f.payload);
  return r.get<int64_t>();
}

wire::Writer serve_plan(Scheduler& sched, const wire::Frame& f) {
  wire::Reader r(f.payload);
  wire::ViewCopy c = wire::get_view(r);
  if (c.has_cost_model) c.view.estimate_step_ns = remote_estimate;
  // Counters the plugin adds through it go to this process's totals, forwarded to the host
  // after the call (where they land in the planning engine's counters).
  static Counters forwarded;
  c.view.host_ctx = &forwarded;
  std::vector<sy_sched_entry> entries(c.entries_capacity);
  std::vector<uint64_t> preempt(c.preempt_capacity);
  sy_sched_plan plan{};
  plan.struct_size = sizeof plan;
  plan.entries_capacity = c.entries_capacity;
  plan.entries = entries.data();
  plan.preempt_capacity = c.preempt_capacity;
  plan.preempt = preempt.data();
  // The plugin's failure travels to the host as its status and message (the boundary).
  sy_status st = SY_OK;
  std::string error;
  try {
    sched.plan(c.view, plan);
  } catch (const Error& e) {
    st = e.status();
    error = e.what();
  }
  wire::Writer w;
  w.put(static_cast<uint32_t>(st));
  w.str(error);
  wire::put_plan(w, plan);
  return w;
}

int run(const std::string& path) {
  std::shared_ptr<Plugin> plugin;
  try {
    plugin = PluginHost({}).load_file(path, SY_PLUGIN_SCHEDULER);
  } catch (const PluginError& e) {
    wire::Writer w;
    w.put(uint8_t{0});
    w.str(e.what());
    send(wire::kHello, w);
    return 2;
  }
  wire::Writer hello;
  hello.put(uint8_t{1});
  hello.str(plugin->name());
  hello.str(plugin->version());
  hello.str(plugin->description());
  hello.put(plugin->abi_version());
  hello.put(plugin->capabilities());
  send(wire::kHello, hello);

  std::map<std::string, double> counters = host_counters();
  std::unique_ptr<Scheduler> sched;
  // Counters go before each reply, so the host has them when the call returns.
  for (wire::Frame f; receive(f);) {
    if (f.type == wire::kCreate) {
      wire::Reader r(f.payload);
      Params params(r.get<uint32_t>());
      for (auto& [k, v] : params) {
        k = r.str();
        v = r.str();
      }
      wire::Writer w;
      try {
        sched.reset();
        sched = std::make_unique<Scheduler>(plugin, params);
        w.put(static_cast<uint32_t>(SY_OK));
        w.str("");
      } catch (const PluginError& e) {
        w.put(static_cast<uint32_t>(SY_ERR_INVALID_ARG));
        w.str(e.what());
      }
      send_counter_deltas(counters);
      send(wire::kResult, w);
    } else if (f.type == wire::kPlan && sched) {
      const wire::Writer w = serve_plan(*sched, f);
      send_counter_deltas(counters);
      send(wire::kPlanResult, w);
    } else {
      lost("unexpected message type " + std::to_string(f.type));
    }
  }
  return 0;  // the scheduler, then the plugin, shut down as the locals go
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Runs one untrusted scheduler plugin for the host, which talks to it over a socket.",
               "switchyard-plugin-runner");
  std::string path;
  int level = spdlog::level::warn;
  app.add_option("--fd", g_fd, "the socket inherited from the host")
      ->required()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--log-level", level, "spdlog level number (0 trace .. 6 off)")
      ->check(CLI::Range(0, 6));
  app.add_option("plugin", path, "the scheduler plugin (.so)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // the help on stdout, or the error on stderr
  }
  auto log = logger();
  log->sinks().clear();
  log->sinks().push_back(std::make_shared<FrameSink>());
  log->set_pattern("%v");
  log->set_level(static_cast<spdlog::level::level_enum>(level));
  try {
    return run(path);
  } catch (const wire::WireError& e) {
    lost(std::string("malformed message from the host: ") + e.what());
  }
}
