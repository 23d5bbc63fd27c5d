// KvEventPublisher in a build without ZeroMQ (SWITCHYARD_KV_EVENTS off). The config reader
// refuses `[serve.kv_events]` with the file and line first (server/kv_events_config.cpp), so no
// publisher is ever made; the constructor says why all the same.
#include "server/kv_event_publisher.h"
#include "switchyard/common/error.h"

namespace sy::server {

bool kv_events_built() {
  return false;
}

KvEventPublisher::KvEventPublisher(KvEventsConfig c) : cfg_(std::move(c)) {
  throw sy::Error(SY_ERR_UNSUPPORTED,
                  "kv_events: this build has no KV cache events (SWITCHYARD_KV_EVENTS is off)");
}

KvEventPublisher::~KvEventPublisher() = default;

void KvEventPublisher::block_stored(model::BlockHash, model::BlockHash, std::span<const int32_t>) {}

void KvEventPublisher::blocks_removed(std::span<const model::BlockHash>) {}

uint64_t KvEventPublisher::sent() const {
  return 0;
}

bool KvEventPublisher::flush(int64_t) {
  return true;
}

}  // namespace sy::server
