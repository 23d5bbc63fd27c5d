#include "gemm_cache.h"

#include <omp.h>

namespace sy::cpu_onednn {
namespace {

// Bounds the map; with M a runtime dimension above kMaxFixedM, entries are per (K, N) shape.
constexpr size_t kMaxEntries = 256;
constexpr int64_t kRuntimeM = -1;
constexpr int64_t kMaxFixedM = 16;

// oneDNN's OpenMP runtime sizes its teams with omp_get_max_threads(); that ICV is per thread,
// so setting it to 1 around a call and restoring it leaves the host's own threads unaffected.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OmpThreads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace

size_t GemmCache::KeyHash::operator()(const Key& s) const {
  size_t h = 1469598103934665603ull;
  for (int64_t v : {s.m, s.k, s.n, s.ldc}) h = (h ^ (size_t)v) * 1099511628211ull;
  return h;
}

GemmCache::GemmCache() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

const GemmCache::Entry& GemmCache::get(const Key& key) {
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  if (cache_.size() >= kMaxEntries) cache_.clear();
  using md = dnnl::memory::desc;
  using dt = dnnl::memory::data_type;
  // key.m == kRuntimeM: one primitive serves every M, so batches whose size changes each step
  // (continuous batching) do not pay for a new primitive per step.
  const int64_t m = key.m == kRuntimeM ? DNNL_RUNTIME_DIM_VAL : key.m;
  const md src({m, key.k}, dt::f32, dnnl::memory::format_tag::ab);
  const md w({key.k, key.n}, dt::f32, dnnl::memory::format_tag::ba);
  const md dst({m, key.n}, dt::f32, dnnl::memory::dims{key.ldc, 1});
  const dnnl::matmul::desc desc(src, w, dst);
  const dnnl::matmul::primitive_desc pd(desc, engine_);
  return cache_.emplace(key, Entry{dnnl::matmul(pd), src, w, dst}).first->second;
}

void GemmCache::run(int64_t m, int64_t k, int64_t n, int64_t ldc, const float* src, const float* w,
                    float* dst) {
  // Small M (decode batches) are few and fastest with a shape-specialised primitive.
  const bool runtime_m = m > kMaxFixedM;
  const Entry& e = get(Key{runtime_m ? kRuntimeM : m, k, n, ldc});
  using md = dnnl::memory::desc;
  const md src_md =
      runtime_m ? md({m, k}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab) : e.src;
  const md dst_md =
      runtime_m ? md({m, n}, dnnl::memory::data_type::f32, dnnl::memory::dims{ldc, 1}) : e.dst;
  dnnl::memory src_mem(src_md, engine_, const_cast<float*>(src));
  dnnl::memory w_mem(e.w, engine_, const_cast<float*>(w));
  dnnl::memory dst_mem(dst_md, engine_, dst);
  OmpThreads team(1);
  e.prim.execute(stream_,
                 {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, dst_mem}});
  stream_.wait();
}

}  // namespace sy::cpu_onednn
