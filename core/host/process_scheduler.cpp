#include "host/process_scheduler.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "host/host_api.h"
#include "host/log.h"
#include "host/plan_wire.h"

extern char** environ;

namespace sy {
namespace fs = std::filesystem;

fs::path default_runner_path() {
  if (const char* env = std::getenv("SWITCHYARD_PLUGIN_RUNNER"); env && *env) return env;
  return boost::dll::program_location().parent_path() / "switchyard-plugin-runner";
}

namespace {

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

constexpr int kChildFd = 3;

// One child process and the host's end of its socket.
class Child {
 public:
  ~Child() { stop(); }
  bool alive() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // Starts the runner or throws sy::Error saying why not. The child gets its end of the socket
  // as fd 3 and no other descriptor of the host's (a listening socket, say); its stdout goes to
  // stderr, so a chatty plugin cannot mix into generated text.
  void spawn(const fs::path& runner, const fs::path& plugin) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw Error(SY_ERR_UNAVAILABLE, std::string("socketpair: ") + std::strerror(errno));
    if (sv[1] == kChildFd) {  // dup2 onto itself would keep close-on-exec: move it first
      const int moved = ::fcntl(sv[1], F_DUPFD_CLOEXEC, kChildFd + 1);
      ::close(sv[1]);
      sv[1] = moved;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, sv[1], kChildFd);  // dup2 clears close-on-exec
    posix_spawn_file_actions_addclosefrom_np(&fa, kChildFd + 1);
    const std::string fd_arg = std::to_string(kChildFd);
    const std::string level = std::to_string(static_cast<int>(logger()->level()));
    const std::string r = runner.string(), p = plugin.string();
    char* argv[] = {const_cast<char*>(r.c_str()),
                    const_cast<char*>("--fd"),
                    const_cast<char*>(fd_arg.c_str()),
                    const_cast<char*>("--log-level"),
                    const_cast<char*>(level.c_str()),
                    const_cast<char*>(p.c_str()),
                    nullptr};
    const int err = ::posix_spawn(&pid_, r.c_str(), &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(sv[1]);
    if (err != 0) {
      ::close(sv[0]);
      pid_ = -1;
      throw Error(SY_ERR_UNAVAILABLE, std::strerror(err));
    }
    fd_ = sv[0];
  }

  // Ends the child now and says how it ended. `grace_ms`: how long it may take to exit by
  // itself (it closed its end, or the host just closed the socket) before SIGKILL.
  std::string end(int64_t grace_ms) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (pid_ < 0) return "not running";
    int status = 0;
    const int64_t until = now_ns() + grace_ms * 1'000'000;
    pid_t got = 0;
    while ((got = ::waitpid(pid_, &status, WNOHANG)) == 0 && now_ns() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (got == 0) {
      ::kill(pid_, SIGKILL);
      got = ::waitpid(pid_, &status, 0);
    }
    const pid_t pid = pid_;
    pid_ = -1;
    if (got != pid) return "could not be reaped";
    return describe_exit(status);
  }
  void stop() {
    if (pid_ >= 0 || fd_ >= 0) end(1000);
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

class ProcessScheduler : public SchedulerImpl {
 public:
  ProcessScheduler(fs::path plugin, Params params, ProcessOptions opt)
      : plugin_(std::move(plugin)), params_(std::move(params)), opt_(std::move(opt)) {
    if (opt_.runner.empty()) opt_.runner = default_runner_path();
  }
  const std::string& name() const { return name_; }

  // Starts a child and creates the scheduler in it; throws PluginError.
  void start() {
    auto fail = [&](const std::string& why) {
      return PluginError("plugin " + plugin_.string() + ": " + why);
    };
    if (!fs::exists(opt_.runner))
      throw fail("cannot run it in a child process: no runner at " + opt_.runner.string());
    try {
      child_.spawn(opt_.runner, plugin_);
    } catch (const Error& e) {
      throw fail("cannot start " + opt_.runner.string() + ": " + e.what());
    }
    const int64_t deadline = now_ns() + opt_.start_timeout_ms * 1'000'000;
    wire::Frame f;
    try {
      await(wire::kHello, f, deadline, nullptr, "start");
    } catch (const Error& e) {
      throw fail(e.what());
    }
    try {
      wire::Reader r(f.payload);
      if (r.get<uint8_t>() == 0) {
        const std::string refusal = r.str();  // load_file's own message
        child_.end(1000);
        throw PluginError(refusal);
      }
      name_ = r.str();
    } catch (const wire::WireError& e) {
      throw fail(stop_child(std::string("sent a bad reply to start: ") + e.what()));
    }
    wire::Writer w;
    w.put(static_cast<uint32_t>(params_.size()));
    for (const auto& [k, v] : params_) {
      w.str(k);
      w.str(v);
    }
    try {
      call(wire::kCreate, w, wire::kResult, f, deadline, nullptr, "create");
    } catch (const Error& e) {
      throw fail(e.what());
    }
    try {
      wire::Reader r(f.payload);
      const auto st = r.get<uint32_t>();
      const std::string message = r.str();
      if (st != SY_OK) {
        child_.end(1000);
        throw PluginError(message);  // the in-process create message
      }
    } catch (const wire::WireError& e) {
      throw fail(stop_child(std::string("sent a bad reply to create: ") + e.what()));
    }
  }

  void plan(const sy_sched_view& view, sy_sched_plan& plan) override {
    if (!child_.alive()) {
      if (restarts_ >= opt_.max_restarts)
        throw Error(SY_ERR_UNAVAILABLE,
                    "scheduler process is down: it failed " + std::to_string(failures_) +
                        " times and may be restarted at most " + std::to_string(opt_.max_restarts));
      ++restarts_;
      host_counter_add("scheduler_process_restarts", 1);
      logger()->warn("scheduler {}: restarting its process (restart {} of at most {})", name_,
                     restarts_, opt_.max_restarts);
      try {
        start();
      } catch (const PluginError& e) {
        count_failure();
        throw Error(SY_ERR_UNAVAILABLE,
                    std::string("restarting the scheduler process failed: ") + e.what());
      }
    }
    const int64_t deadline = now_ns() + opt_.plan_timeout_ms * 1'000'000;
    wire::Writer w;
    wire::put_view(w, view, plan);
    wire::Frame f;
    try {
      call(wire::kPlan, w, wire::kPlanResult, f, deadline, &view, "plan");
    } catch (const Error&) {
      count_failure();
      throw;
    }
    sy_status st = SY_OK;
    std::string message;
    try {
      wire::Reader r(f.payload);
      st = static_cast<sy_status>(r.get<uint32_t>());
      message = r.str();
      wire::get_plan(r, plan);
    } catch (const wire::WireError& e) {
      count_failure();
      throw Error(SY_ERR_UNAVAILABLE,
                  stop_child(std::string("sent a bad reply to plan: ") + e.what()));
    }
    if (st != SY_OK) throw Error(st, message);  // the plugin's own failure, as in process
  }

 private:
  void count_failure() {
    ++failures_;
    host_counter_add("scheduler_process_failures", 1);
  }
  // Kills the child after it misbehaved; returns the message for it.
  std::string stop_child(const std::string& what) {
    const std::string how = child_.end(0);
    return "scheduler process " + what + " (" + how + "); killed it";
  }

  // Sends a frame and awaits the answer; throws sy::Error(SY_ERR_UNAVAILABLE) as await() does.
  void call(uint8_t type, const wire::Writer& w, uint8_t want, wire::Frame& out, int64_t deadline,
            const sy_sched_view* view, const char* what) {
    std::string io_why;
    const wire::Io io = wire::write_frame(child_.fd(), type, w.data(), deadline, io_why);
    if (io != wire::Io::ok) failed(io, io_why, what);
    await(want, out, deadline, view, what);
  }

  // Reads frames until one of type `want`, serving the child's log, counter and cost-model
  // messages on the way. On failure kills the child and throws sy::Error saying why.
  void await(uint8_t want, wire::Frame& out, int64_t deadline, const sy_sched_view* view,
             const char* what) {
    for (;;) {
      std::string io_why;
      const wire::Io io = wire::read_frame(child_.fd(), out, deadline, io_why);
      if (io != wire::Io::ok) failed(io, io_why, what);
      if (out.type == want) return;
      std::string why;  // set when the child misbehaved
      try {
        wire::Reader r(out.payload);
        if (out.type == wire::kLog) {
          const auto level = static_cast<spdlog::level::level_enum>(r.get<uint32_t>());
          logger()->log(level, "{}", r.str());
        } else if (out.type == wire::kCounter) {
          const std::string name = r.str();
          const double delta = r.get<double>();
          if (view)  // the planning engine's counters
            host_counter_add_to(view->host_ctx, name, delta);
          else
            host_counter_add(name, delta);
        } else if (out.type == wire::kEstimate && view && view->estimate_step_ns) {
          const sy_step_shape shape = wire::get_shape(r);
          wire::Writer w;
          w.put(view->estimate_step_ns(view->cost_ctx, &shape));
          const wire::Io wio =
              wire::write_frame(child_.fd(), wire::kEstimateReply, w.data(), deadline, io_why);
          if (wio != wire::Io::ok) failed(wio, io_why, what);
        } else {
          why = stop_child("sent an unexpected message (type " + std::to_string(out.type) +
                           ") during " + what);
        }
      } catch (const wire::WireError& e) {
        why = stop_child(std::string("sent a bad message during ") + what + ": " + e.what());
      }
      if (!why.empty()) throw Error(SY_ERR_UNAVAILABLE, why);
    }
  }

  // The child stopped answering: ends it and throws sy::Error saying why.
  [[noreturn]] void failed(wire::Io io, const std::string& io_why, const char* what) {
    std::string why;
    if (io == wire::Io::timeout) {
      child_.end(0);
      const int64_t ms = std::string(what) == "plan" ? opt_.plan_timeout_ms : opt_.start_timeout_ms;
      why = "scheduler process did not answer " + std::string(what) + " within " +
            std::to_string(ms) + " ms; killed it";
    } else if (io == wire::Io::eof) {
      why = "scheduler process died during " + std::string(what) + ": " + child_.end(1000);
    } else {
      why = "scheduler process connection failed during " + std::string(what) + ": " + io_why +
            " (" + child_.end(0) + ")";
    }
    throw Error(SY_ERR_UNAVAILABLE, why);
  }

  fs::path plugin_;
  Params params_;
  ProcessOptions opt_;
  std::string name_;
  Child child_;
  uint32_t failures_ = 0, restarts_ = 0;
};

}  // namespace

std::unique_ptr<Scheduler> make_process_scheduler(const fs::path& plugin_path, const Params& params,
                                                  const ProcessOptions& options) {
  auto impl = std::make_unique<ProcessScheduler>(plugin_path, params, options);
  impl->start();
  std::string name = impl->name();
  return std::make_unique<Scheduler>(std::move(name), std::move(impl));
}

}  // namespace sy
