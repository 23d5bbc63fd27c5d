// Routes each request to a variant: deterministically by a hash of its id, in proportion to the
// variants' weights; optionally also to a shadow variant. A hot swap installs a new deployment
// in one step; a rollback sends all traffic to the baseline until the next install.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/engine_runner.h"
#include "server/serve_config.h"

namespace sy::server {

// One installed variant set; immutable once installed (a swap installs a new one).
struct Deployment {
  struct Entry {
    std::string name;
    double weight = 1;
    std::string fingerprint;  // serve_config.h: equal fingerprints build equal variants
    std::shared_ptr<EngineRunner> runner;
  };
  std::vector<Entry> variants;
  std::string baseline;
  std::optional<ShadowSpec> shadow;
  double request_timeout_s = 600;
  uint64_t generation = 0;
  const Entry* find(const std::string& name) const;
};

struct Route {
  std::string primary_name;
  std::shared_ptr<EngineRunner> primary;
  std::string shadow_name;  // empty: no shadow run
  std::shared_ptr<EngineRunner> shadow;
};

class Router {
 public:
  // Replaces the deployment at once and clears a rollback; returns the previous one.
  std::shared_ptr<const Deployment> install(std::shared_ptr<const Deployment> d);
  std::shared_ptr<const Deployment> current() const;
  // `pinned`: a variant the client named ("" = split by weight). nullopt: nothing installed or
  // no such variant.
  std::optional<Route> route(const std::string& request_id, const std::string& pinned = "") const;
  // All traffic, pinned requests included, to the baseline, and no shadow runs.
  void rollback();
  bool rolled_back() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Deployment> d_;
  bool rolled_back_ = false;
};

// The variant a request id goes to under `d`'s weights (what route() picks when not pinned
// and not rolled back).
const Deployment::Entry* pick_by_weight(const Deployment& d, const std::string& request_id);

}  // namespace sy::server
