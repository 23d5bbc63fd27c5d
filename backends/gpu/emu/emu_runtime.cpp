// The CPU emulator behind vendor_emu.h: fibers with a hand-written x86-64 context switch (glibc's
// swapcontext makes a syscall per switch, 40x slower here), barriers, and a runtime API whose
// calls complete synchronously.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "vendor.h"

#if !defined(__x86_64__)
#error "the GPU emulator's context switch is written for x86-64"
#endif

// sy_emu_switch(save, load): saves the callee-saved state on the current stack, stores the stack
// pointer in *save and resumes the context whose stack pointer is `load`.
// sy_emu_trampoline: first code a new fiber runs; calls r12(rbx).
asm(R"(
  .text
  .globl sy_emu_switch
  .hidden sy_emu_switch
  .type sy_emu_switch, @function
sy_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw (%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size sy_emu_switch, .-sy_emu_switch

  .globl sy_emu_trampoline
  .hidden sy_emu_trampoline
  .type sy_emu_trampoline, @function
sy_emu_trampoline:
  movq %rbx, %rdi
  callq *%r12
  ud2
  .size sy_emu_trampoline, .-sy_emu_trampoline
)");

extern "C" void sy_emu_switch(void** save, void* load);
extern "C" void sy_emu_trampoline();

namespace sy::emu {
namespace {

constexpr size_t kStackBytes = 64 << 10;

struct Group {  // a warp or the whole block: what a barrier waits for
  int live = 0, arrived = 0;
  uint64_t generation = 0;
};

struct Fiber {
  void* sp = nullptr;
  char* stack = nullptr;  // mmap'd, lowest page a guard
  ThreadCtx ctx;
  int warp = 0;
  bool done = true;
};

struct Scheduler {
  std::vector<Fiber> fibers;
  std::vector<Group> warps;
  Group block;
  std::vector<uint64_t> slots;  // shuffle exchange, one per thread
  Fiber* current = nullptr;
  void* main_sp = nullptr;
  const std::function<void()>* body = nullptr;
  uint64_t progress = 0;  // barrier arrivals, releases and exits: a round without any is a deadlock
};

thread_local Scheduler t_sched;

void yield() {
  sy_emu_switch(&t_sched.current->sp, t_sched.main_sp);
}

void release_if_complete(Group& g) {
  if (g.arrived > 0 && g.arrived == g.live) {
    g.arrived = 0;
    ++g.generation;
  }
}

void wait(Group& g) {
  const uint64_t gen = g.generation;
  ++g.arrived;
  ++t_sched.progress;
  release_if_complete(g);
  while (g.generation == gen) yield();
}

void fiber_main(Fiber* f) {
  (*t_sched.body)();
  f->done = true;
  ++t_sched.progress;
  Group& w = t_sched.warps[f->warp];
  --w.live;
  release_if_complete(w);
  --t_sched.block.live;
  release_if_complete(t_sched.block);
  yield();  // never resumed
  std::abort();
}

char* new_stack() {
  void* p = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("gpu emulator: mmap");
    std::abort();
  }
  mprotect(p, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE);  // overflow faults instead of corrupting
  return static_cast<char*>(p);
}

// The frame sy_emu_switch pops: fpcw/mxcsr, r15..r12, rbx, rbp, then the trampoline as return.
void* initial_sp(Fiber* f) {
  uint64_t* top = reinterpret_cast<uint64_t*>(f->stack + kStackBytes);  // 16-byte aligned
  top[-1] = reinterpret_cast<uint64_t>(&sy_emu_trampoline);
  top[-2] = 0;                                        // rbp
  top[-3] = reinterpret_cast<uint64_t>(f);            // rbx: the fiber
  top[-4] = reinterpret_cast<uint64_t>(&fiber_main);  // r12: entry
  top[-5] = top[-6] = top[-7] = 0;                    // r13, r14, r15
  top[-8] = 0x1F80;                                   // mxcsr (default)
  top[-9] = 0x037F;                                   // x87 control word (default)
  return &top[-9];
}

void run_block(unsigned n_threads) {
  Scheduler& s = t_sched;
  for (unsigned i = 0; i < n_threads; ++i) {
    Fiber& f = s.fibers[i];
    f.done = false;
    f.sp = initial_sp(&f);
  }
  for (size_t w = 0; w < s.warps.size(); ++w) s.warps[w] = Group{};
  for (unsigned i = 0; i < n_threads; ++i) ++s.warps[s.fibers[i].warp].live;
  s.block = Group{(int)n_threads, 0, 0};
  for (unsigned left = n_threads; left > 0;) {
    const uint64_t before = s.progress;
    for (unsigned i = 0; i < n_threads; ++i) {
      Fiber& f = s.fibers[i];
      if (f.done) continue;
      s.current = &f;
      sy_emu_switch(&s.main_sp, f.sp);
      if (f.done) --left;
    }
    if (left > 0 && s.progress == before) {
      std::fprintf(stderr, "gpu emulator: deadlock (threads wait at barriers that cannot fill)\n");
      std::abort();
    }
  }
  s.current = nullptr;
}

}  // namespace

ThreadCtx& ctx() {
  return t_sched.current->ctx;
}

void syncthreads() {
  wait(t_sched.block);
}

uint64_t exchange(uint64_t bits, int lane_mask) {
  Scheduler& s = t_sched;
  const unsigned tid = static_cast<unsigned>(s.current - s.fibers.data());
  s.slots[tid] = bits;
  wait(s.warps[s.current->warp]);
  const unsigned src = (tid & ~(SY_WARP - 1u)) | ((tid ^ (unsigned)lane_mask) & (SY_WARP - 1u));
  const uint64_t got = s.slots[src];
  wait(s.warps[s.current->warp]);
  return got;
}

void launch(dim3 grid, dim3 block, const std::function<void()>& body) {
  Scheduler& s = t_sched;
  if (s.current) {
    std::fprintf(stderr, "gpu emulator: kernel launched from a kernel\n");
    std::abort();
  }
  const unsigned n = block.x * block.y * block.z;
  if (n == 0 || n % SY_WARP != 0 || n > 1024) {
    std::fprintf(stderr, "gpu emulator: block of %u threads is not whole warps of %d (max 1024)\n",
                 n, SY_WARP);
    std::abort();
  }
  while (s.fibers.size() < n) {
    s.fibers.emplace_back();
    s.fibers.back().stack = new_stack();
  }
  s.warps.resize(n / SY_WARP);
  s.slots.resize(n);
  s.body = &body;
  for (unsigned i = 0; i < n; ++i) {
    Fiber& f = s.fibers[i];
    f.ctx.thread = {i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
    f.ctx.block_dim = block;
    f.ctx.grid_dim = grid;
    f.warp = (int)(i / SY_WARP);
  }
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        for (unsigned i = 0; i < n; ++i) s.fibers[i].ctx.block = {x, y, z};
        run_block(n);
      }
  s.body = nullptr;
}

}  // namespace sy::emu

// ---- runtime API ----

struct sy_emu_stream {};
struct sy_emu_event {};

cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : cudaErrorNoDevice;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return cudaErrorNoDevice;
  std::memset(prop, 0, sizeof *prop);
  std::snprintf(prop->name, sizeof prop->name, "GPU kernels emulated on the CPU (warp %d)",
                SY_WARP);
  size_t free_bytes = 0;
  cudaMemGetInfo(&free_bytes, &prop->totalGlobalMem);
  prop->warpSize = SY_WARP;
  prop->multiProcessorCount = 1;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  const long page = sysconf(_SC_PAGESIZE);
  *total_bytes = (size_t)page * (size_t)sysconf(_SC_PHYS_PAGES);
  *free_bytes = (size_t)page * (size_t)sysconf(_SC_AVPHYS_PAGES);
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 0;
  return cudaSuccess;
}
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorNoDevice:
      return "no device";
    case cudaErrorNotReady:
      return "not ready";
    default:
      return "unknown error";
  }
}
cudaError_t cudaGetLastError() {
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t size) {
  *p = std::aligned_alloc(256, (size + 255) / 256 * 256);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, size_t size) {
  return cudaMalloc(p, size);
}
cudaError_t cudaFreeHost(void* p) {
  return cudaFree(p);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind, cudaStream_t) {
  std::memcpy(dst, src, n);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t n, cudaStream_t) {
  std::memset(dst, value, n);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = new sy_emu_stream;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = new sy_emu_event;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) {
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t) {
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) {
  return cudaSuccess;
}
