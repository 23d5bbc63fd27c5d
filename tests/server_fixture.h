// Helpers for the server tests: config files in a temp dir (replaced atomically, as an
// operator's editor would), a server on an ephemeral loopback port, an HTTP client and a
// reader for the Prometheus text.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "server/server.h"
#include "tiny_model.h"

namespace sy::test {

using nlohmann::json;

inline fs::path server_dir() {
  const fs::path d = fs::path(testing::TempDir()) / "sy-server";
  fs::create_directories(d);
  return d;
}

// dense-small (2048 context): cpu_ref spends milliseconds per step on it, so a running request
// outlasts a metrics scrape even on a loaded two-core machine. Written once per directory.
inline fs::path stepping_model() {
  const fs::path p = server_dir() / "dense-small.gguf";
  if (!fs::exists(p))
    sy::model::write_random_llama(sy::model::preset_shape("dense-small"), "f32", 5, p);
  return p;
}

// Writes `text` to `path` through a rename, so a watcher never reads half a file.
inline void write_file(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream(tmp) << text;
  fs::rename(tmp, path);
}

// One variant's tables. `prefix` is "" for a single-variant file or "variants." inside
// [[variants]].
inline std::string variant_tables(const std::string& prefix, const std::string& scheduler,
                                  const std::string& sched_params = "", const fs::path& model = {},
                                  const std::string& engine = "") {
  std::string s = "[" + prefix + "model]\npath = \"" +
                  (model.empty() ? model_file("f32") : model).string() + "\"\n";
  s += "[" + prefix + "backend]\nplugin = \"cpu_ref\"\n";
  s += "[" + prefix + "scheduler]\nplugin = \"" + scheduler + "\"\n" + sched_params;
  if (!engine.empty()) s += "[" + prefix + "engine]\n" + engine;
  return s;
}

inline std::string plugin_dirs_line() {
  return std::string("plugin_dirs = [\"") + SWITCHYARD_PLUGIN_DIR + "\"]\n";
}

struct TestServer {
  fs::path config;
  std::unique_ptr<server::Server> server;
  std::unique_ptr<httplib::Client> client;

  TestServer(const std::string& name, const std::string& text, uint32_t watch_ms = 0,
             bool sighup = false, server::AccessKeys keys = {}, std::string host = "127.0.0.1") {
    config = server_dir() / (name + ".toml");
    write_file(config, text);
    server::ServerOverrides o;
    o.host = host;
    o.keys = std::move(keys);
    o.port = 0;
    o.watch_ms = watch_ms;
    o.sighup = sighup;
    server = std::make_unique<server::Server>(config, o);
    server->start();
    client = make_client();
  }
  ~TestServer() { server->stop(); }
  std::unique_ptr<httplib::Client> make_client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", server->port());
    c->set_read_timeout(60, 0);
    return c;
  }
  httplib::Result post(const std::string& path, const json& body,
                       const httplib::Headers& h = {}) const {
    return client->Post(path.c_str(), h, body.dump(), "application/json");
  }
  httplib::Result post_raw(const std::string& path, const std::string& body) const {
    return client->Post(path.c_str(), body, "application/json");
  }
  std::string metrics() const {
    auto r = make_client()->Get("/metrics");
    return r ? r->body : "";
  }
};

// The value of one series in Prometheus text ("name{labels}" exactly as rendered); -1 if absent.
inline double metric(const std::string& text, const std::string& series) {
  const std::string key = series + " ";
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + key.size()));
    at += key.size();
  }
  return -1;
}

// Polls until `done` holds or `ms` pass; returns whether it held.
inline bool eventually(const std::function<bool()>& done, int ms = 10000) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// Each `data:` payload of an SSE body, in order.
inline std::vector<std::string> events(const std::string& body) {
  std::vector<std::string> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("data: ", 0) == 0) out.push_back(line.substr(6));
  return out;
}

inline std::vector<int32_t> token_ids(const json& completion) {
  return completion["choices"][0]["token_ids"].get<std::vector<int32_t>>();
}

// A greedy completion of exactly n tokens.
inline json greedy(const std::string& prompt, uint32_t n) {
  return json{{"prompt", prompt}, {"max_tokens", n}, {"temperature", 0}, {"ignore_eos", true}};
}

}  // namespace sy::test
