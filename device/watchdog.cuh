// The hang watchdog: a blocking mbarrier wait on the GPU gives up after a clock64() budget,
// records the first timeout here and leaves the kernel, so a protocol deadlock ends as a
// report instead of a hung GPU.
//
// Both variables are `static`: under whole-program compilation (no -rdc) every .cu file is
// its own device module, so each translation unit has its own copy, and the host code that
// launches a kernel must set and read the copy of the file that defines that kernel (the
// helpers below do exactly that when called from that file).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mbcheck::dev {

// What the first timed-out wait saw. Filled by the thread that wins `fired`; `timeouts`
// counts every thread that timed out. Read it after the kernel has finished.
struct WatchdogRecord {
  unsigned int fired;     // 0, or 1 once a wait has timed out
  unsigned int timeouts;  // threads that timed out (all of them, not just the first)
  int smem_offset;        // barrier address minus the dynamic shared memory base
  unsigned int thread;    // threadIdx.x of the first thread that timed out
  unsigned int block;     // blockIdx.x of that thread
  unsigned int reserved;
  long long phase;            // the FULL phase number it waited for
  unsigned long long waited;  // clock64() cycles it waited
};

// About 3 s at the H200's 1.98 GHz boost clock: far above any legitimate wait in our
// kernels, short enough for a test suite full of deliberate deadlocks.
inline constexpr unsigned long long kDefaultWatchdogCycles = 6'000'000'000ull;

static __constant__ unsigned long long watchdog_budget_cycles = kDefaultWatchdogCycles;
static __device__ WatchdogRecord watchdog_record = {};

// Host helpers; call them from the .cu file that defines the kernel (see above).
static inline cudaError_t watchdog_set_budget(unsigned long long cycles) {
  return cudaMemcpyToSymbol(watchdog_budget_cycles, &cycles, sizeof(cycles));
}
static inline cudaError_t watchdog_clear() {
  const WatchdogRecord zero = {};
  return cudaMemcpyToSymbol(watchdog_record, &zero, sizeof(zero));
}
static inline cudaError_t watchdog_read(WatchdogRecord* out) {
  return cudaMemcpyFromSymbol(out, watchdog_record, sizeof(*out));
}

// Records a timeout; only the first one fills the record (atomicCAS on `fired`).
__device__ inline void watchdog_record_timeout(int smem_offset, long long phase, unsigned long long waited) {
  atomicAdd(&watchdog_record.timeouts, 1u);
  if (atomicCAS(&watchdog_record.fired, 0u, 1u) == 0u) {
    watchdog_record.smem_offset = smem_offset;
    watchdog_record.thread = threadIdx.x;
    watchdog_record.block = blockIdx.x;
    watchdog_record.phase = phase;
    watchdog_record.waited = waited;
    __threadfence();
  }
}

}  // namespace mbcheck::dev
