#include "server/router.h"

#include "server/shadow.h"

namespace sy::server {
namespace {

constexpr uint64_t kSplitSalt = 0;
constexpr uint64_t kShadowSalt = 0x5eed;

}  // namespace

const Deployment::Entry* Deployment::find(const std::string& name) const {
  for (const auto& e : variants)
    if (e.name == name) return &e;
  return nullptr;
}

const Deployment::Entry* pick_by_weight(const Deployment& d, const std::string& request_id) {
  double total = 0;
  for (const auto& e : d.variants) total += e.weight;
  if (d.variants.empty() || total <= 0) return nullptr;
  const double x = unit_hash(request_id, kSplitSalt) * total;
  double acc = 0;
  for (const auto& e : d.variants) {
    acc += e.weight;
    if (e.weight > 0 && x < acc) return &e;
  }
  for (auto it = d.variants.rbegin(); it != d.variants.rend(); ++it)  // rounding at the top end
    if (it->weight > 0) return &*it;
  return nullptr;
}

std::shared_ptr<const Deployment> Router::install(std::shared_ptr<const Deployment> d) {
  std::lock_guard<std::mutex> lk(mu_);
  std::swap(d_, d);
  rolled_back_ = false;
  return d;
}

std::shared_ptr<const Deployment> Router::current() const {
  std::lock_guard<std::mutex> lk(mu_);
  return d_;
}

void Router::rollback() {
  std::lock_guard<std::mutex> lk(mu_);
  rolled_back_ = true;
}

bool Router::rolled_back() const {
  std::lock_guard<std::mutex> lk(mu_);
  return rolled_back_;
}

std::optional<Route> Router::route(const std::string& request_id, const std::string& pinned) const {
  std::shared_ptr<const Deployment> d;
  bool back;
  {
    std::lock_guard<std::mutex> lk(mu_);
    d = d_;
    back = rolled_back_;
  }
  if (!d) return std::nullopt;
  const Deployment::Entry* e = back              ? d->find(d->baseline)
                               : !pinned.empty() ? d->find(pinned)
                                                 : pick_by_weight(*d, request_id);
  if (!e) return std::nullopt;
  Route r{e->name, e->runner, "", nullptr};
  if (back || !pinned.empty() || !d->shadow || d->shadow->variant == e->name) return r;
  if (unit_hash(request_id, kShadowSalt) < d->shadow->fraction) {
    if (const auto* s = d->find(d->shadow->variant)) {
      r.shadow_name = s->name;
      r.shadow = s->runner;
    }
  }
  return r;
}

}  // namespace sy::server
