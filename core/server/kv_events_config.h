// `[serve] kv_events = { endpoint = "tcp://*:5557", topic = "" }`: where the server publishes
// its KV cache events (server/kv_event_publisher.h). Absent: off, as in vLLM. The keys are
// vLLM's KVEventsConfig names.
#pragma once

#include <toml++/toml.h>
#include <cstdint>
#include <string>

#include "server/kv_event_codec.h"

namespace sy::server {

struct KvEventsConfig {
  std::string endpoint = "tcp://*:5557";
  std::string topic;
  std::string replay_endpoint;    // "" = no replay socket
  uint32_t buffer_steps = 10000;  // batches kept for replay
  uint32_t hwm = 100000;          // the PUB socket's send high-water mark
  KvEventEncoding encoding = KvEventEncoding::array;
  std::string medium;  // "" = nil (the engine's own KV cache)
};

// Whether this build publishes KV events (SWITCHYARD_KV_EVENTS: ZeroMQ and msgpack were found).
// Defined beside the publisher: kv_event_publisher.cpp says yes, kv_events_off.cpp no.
bool kv_events_built();

// Throws ConfigError("<origin>:<line>:<col>: serve.kv_events.<key>: <problem>"), and
// ConfigError("<origin>:<line>:<col>: serve.kv_events: this build has no KV cache events ...")
// for the whole table in a build without them.
KvEventsConfig read_kv_events(const std::string& origin, const toml::table& t);

}  // namespace sy::server
