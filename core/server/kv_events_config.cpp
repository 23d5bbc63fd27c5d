#include "server/kv_events_config.h"

#include "config/toml_reader.h"

namespace sy::server {

KvEventsConfig read_kv_events(const std::string& origin, const toml::table& t) {
  if (!kv_events_built())
    throw ConfigError(where(origin, t.source()) +
                      ": serve.kv_events: this build has no KV cache events (configure with "
                      "-DSWITCHYARD_KV_EVENTS=ON, which needs libzmq3-dev, cppzmq-dev and "
                      "libmsgpack-cxx-dev)");
  KvEventsConfig c;
  TableReader r(origin, t, "serve.kv_events.");
  r.read_string("endpoint", c.endpoint);
  if (c.endpoint.find("://") == std::string::npos)
    r.fail(t.get("endpoint") ? *t.get("endpoint") : static_cast<const toml::node&>(t), "endpoint",
           "expected a ZeroMQ endpoint such as tcp://*:5557, got '" + c.endpoint + "'");
  r.read_string("topic", c.topic);
  r.read_string("replay_endpoint", c.replay_endpoint);
  r.read_int("buffer_steps", c.buffer_steps, 1, 10'000'000);
  r.read_int("hwm", c.hwm, 0, 100'000'000);
  std::string enc = "array";
  r.read_string("encoding", enc);
  if (enc == "map")
    c.encoding = KvEventEncoding::map;
  else if (enc != "array")
    r.fail(*t.get("encoding"), "encoding", "expected \"array\" or \"map\", got '" + enc + "'");
  r.read_string("medium", c.medium);
  r.reject_unknown();
  return c;
}

}  // namespace sy::server
