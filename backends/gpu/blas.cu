// cuBLAS through dlopen: the typedefs come from cublas_v2.h, the symbols from libcublas.so at
// run time. The library stays loaded for the process's lifetime, as unloading a CUDA library
// with live contexts is not safe.
#include "blas.h"

#if !defined(SY_GPU_HIP) && !defined(SY_GPU_EMU)

#include <cublas_v2.h>
#include <dlfcn.h>

#include "switchyard/sdk/backend.h"

namespace sy::gpu {
namespace {

#define SY_CUBLAS_LIB_(major) "libcublas.so." #major
#define SY_CUBLAS_LIB(major) SY_CUBLAS_LIB_(major)

class Cublas final : public Blas {
 public:
  Cublas(void* lib, std::string name) : name_(std::move(name)) {
    create_ = reinterpret_cast<decltype(&cublasCreate_v2)>(dlsym(lib, "cublasCreate_v2"));
    destroy_ = reinterpret_cast<decltype(&cublasDestroy_v2)>(dlsym(lib, "cublasDestroy_v2"));
    set_stream_ = reinterpret_cast<decltype(&cublasSetStream_v2)>(dlsym(lib, "cublasSetStream_v2"));
    sgemm_ = reinterpret_cast<decltype(&cublasSgemm_v2)>(dlsym(lib, "cublasSgemm_v2"));
  }
  ~Cublas() override {
    if (handle_) destroy_(handle_);
  }
  // Empty on success, else why not.
  std::string init(cudaStream_t stream) {
    if (!create_ || !destroy_ || !set_stream_ || !sgemm_) return name_ + " lacks a v2 symbol";
    if (create_(&handle_) != CUBLAS_STATUS_SUCCESS) {
      handle_ = nullptr;
      return "cublasCreate failed";
    }
    if (set_stream_(handle_, stream) != CUBLAS_STATUS_SUCCESS) return "cublasSetStream failed";
    return {};
  }
  const std::string& name() const override { return name_; }
  void gemm_nt(const float* x, const float* w, float* y, int m, int n, int k, int ldy) override {
    // Column-major view: Y(n x m, ld ldy) = W^T(n x k) * X(k x m), W and X both k-contiguous.
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t st =
        sgemm_(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, k, x, k, &zero, y, ldy);
    if (st != CUBLAS_STATUS_SUCCESS)
      throw plugin::Error(SY_ERR_DEVICE,
                          "matmul: cublasSgemm failed with status " + std::to_string(st));
  }

 private:
  std::string name_;
  cublasHandle_t handle_ = nullptr;
  decltype(&cublasCreate_v2) create_;
  decltype(&cublasDestroy_v2) destroy_;
  decltype(&cublasSetStream_v2) set_stream_;
  decltype(&cublasSgemm_v2) sgemm_;
};

}  // namespace

std::unique_ptr<Blas> Blas::load(cudaStream_t stream, std::string* why) {
  const char* name = SY_CUBLAS_LIB(CUBLAS_VER_MAJOR);
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib) {
    const char* e = dlerror();
    *why = e ? e : name;
    return nullptr;
  }
  auto blas = std::make_unique<Cublas>(lib, name);
  *why = blas->init(stream);
  if (!why->empty()) return nullptr;
  return blas;
}

}  // namespace sy::gpu

#else

namespace sy::gpu {

std::unique_ptr<Blas> Blas::load(cudaStream_t, std::string* why) {
  *why = "no vendor BLAS in this build";
  return nullptr;
}

}  // namespace sy::gpu

#endif
