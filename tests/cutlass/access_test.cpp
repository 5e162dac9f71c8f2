// Plain loads and stores of unmodified kernel code tracked (mbcheck_cutlass_track_accesses:
// this file is compiled with the ThreadSanitizer instrumentation and linked with mbcheck's
// callbacks). Each case is a small kernel written as CUDA C++ is (an extern __shared__ array,
// threadIdx, __syncthreads, cudaMalloc'd buffers), launched the CUDA way and checked
// exhaustively. Exit status 0 when every case holds.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "mbcheck/cutlass_host/launch.hpp"

namespace {
using P = mbcheck::sim::HostPlatform;
// The lines of the accesses a report must name (each the line after its constant).
constexpr int kSharedWriteLine = __LINE__ + 8;
constexpr int kSharedReadLine = __LINE__ + 9;
}  // namespace

// (a), (b): thread 0 writes a word of shared memory that thread 32 reads; `sync`: with
// __syncthreads() between them.
__global__ void shared_handoff_kernel(int* out, int sync) {
  extern __shared__ int smem[];
  if (threadIdx.x == 0) smem[5] = 42;
  if (sync) __syncthreads();
  if (threadIdx.x == 32) out[0] = smem[5];
  if (!sync) __syncthreads();
}

namespace {
constexpr int kVectorLine = __LINE__ + 8;
constexpr int kScalarLine = __LINE__ + 8;
}  // namespace

// (c): thread 0 copies 16 bytes from global memory at once (one 16-byte load and store:
// __tsan_read16, __tsan_write16); thread 32 stores the third word of them.
__global__ void vector_kernel(int* g, int) {
  extern __shared__ int smem[];
  if (threadIdx.x == 0) reinterpret_cast<uint4*>(smem)[0] = reinterpret_cast<const uint4*>(g)[0];
  if (threadIdx.x == 32) smem[2] = 7;
}

// (d): every thread of two CTAs adds 1 to a global counter through std::atomic_ref
// (__tsan_atomic32_fetch_add); `plain_read`: thread 1 of CTA 0 also reads it plainly.
__global__ void atomic_kernel(int* counter, int plain_read) {
  std::atomic_ref<int>(counter[0]).fetch_add(1);
  if (plain_read && blockIdx.x == 0 && threadIdx.x == 1) counter[1] = counter[0];
}

// (e): thread 0 of each CTA writes the same offset of its own shared memory and reads it back.
__global__ void per_cta_kernel(int* out, int) {
  extern __shared__ int smem[];
  if (threadIdx.x == 0) smem[0] = static_cast<int>(blockIdx.x) + 10;
  __syncthreads();
  P::check(smem[0] == static_cast<int>(blockIdx.x) + 10, "each CTA reads its own shared memory");
  if (threadIdx.x == 0) out[blockIdx.x] = smem[0];
}

namespace {
constexpr int kGlobalWriteLine = __LINE__ + 6;
constexpr int kGlobalReadLine = __LINE__ + 6;
}  // namespace

// (f): CTA 0 writes a global word that CTA 1 reads, with nothing between them.
__global__ void global_race_kernel(int* g, int) {
  if (blockIdx.x == 0 && threadIdx.x == 0) g[0] = 1;
  if (blockIdx.x == 1 && threadIdx.x == 0) g[1] = g[0];
}

// (g): plain stores fill shared memory, which a bulk store (the runtime's async proxy) copies
// to global memory; `fence`: with fence.proxy.async between (without it: the missing fence).
__global__ void plain_then_bulk_kernel(int* g, int fence) {
  extern __shared__ int smem[];
  smem[threadIdx.x] = static_cast<int>(threadIdx.x) * 3 + 1;
  if (fence) P::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x == 0) {
    // What the runtime's own load reads at the CTA's real address: the plain store's bytes.
    const int* real = reinterpret_cast<const int*>(mbcheck::cutlass_host::shared_address(smem + 5, 4, "smem"));
    P::check(P::load(real) == 16, "the runtime reads what a plain store wrote");
    P::cp_async_bulk_shared_to_global(g, mbcheck::cutlass_host::shared_address(smem, 64 * 4, "smem"), 64 * 4);
    P::cp_async_bulk_commit_group();
    P::cp_async_bulk_wait_group(0);
    for (int i = 0; i < 64; ++i) P::check(P::load(g + i) == i * 3 + 1, "the bulk store copied the plain stores");
  }
}

// memcpy into shared memory by thread 0 (the link wraps it), read by thread 32 plainly;
// `sync`: with __syncthreads() between.
__global__ void memcpy_kernel(int* g, int sync) {
  extern __shared__ int smem[];
  if (threadIdx.x == 0) std::memcpy(smem + 8, g, 4 * sizeof(int));
  if (sync) __syncthreads();
  if (threadIdx.x == 32) g[8] = smem[10];
  if (!sync) __syncthreads();
}

// DSMEM: thread 0 of rank 1 stores into rank 0's shared memory through mapa, plainly; rank 0's
// thread 0 reads it after a cluster barrier, or (`sync` 0) without one.
__global__ void dsmem_kernel(int* g, int sync) {
  extern __shared__ int smem[];
  if (P::cluster_ctarank() == 1 && threadIdx.x == 0) {
    void* own = mbcheck::cutlass_host::shared_address(smem + 3, 4, "smem");
    *static_cast<int*>(P::map_shared_rank(own, 0)) = 99;
  }
  if (sync) {
    P::barrier_cluster_arrive_aligned();
    P::barrier_cluster_wait_aligned();
  }
  if (P::cluster_ctarank() == 0 && threadIdx.x == 0) g[0] = smem[3];
  P::barrier_cluster_arrive_aligned();
  P::barrier_cluster_wait_aligned();
}

// (h) a poll loop counting its polls in a host object (neither the kernel's memory nor the
// thread's stack): registers and stack repeat from poll to poll, the count does not. Nobody
// completes the phase (count 2, one arrival): the loop gives up after three polls; it is no
// spin to merge, and no livelock.
struct PollCount {
  int polls;
};
PollCount g_poll_counts[64];

__global__ void host_counter_kernel(int* g, int) {
  extern __shared__ int smem[];
  auto& bar = *reinterpret_cast<P::Barrier*>(mbcheck::cutlass_host::shared_address(smem, sizeof(P::Barrier), "smem"));
  if (threadIdx.x == 0) P::mbarrier_init(bar, 2);
  __syncthreads();
  if (threadIdx.x == 0) {
    P::mbarrier_arrive(bar);
  } else {
    PollCount& count = g_poll_counts[threadIdx.x];
    count.polls = 0;
    while (count.polls < 3) {
      if (P::mbarrier_try_wait_parity(bar, 0)) break;
      ++count.polls;
    }
    g[threadIdx.x] = count.polls;
  }
}

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

mbcheck::cutlass_host::LaunchRecord launch(void (*kernel)(int*, int), int* buffer, int arg, unsigned ctas,
                                           unsigned threads) {
  mbcheck::cutlass_host::register_kernel(kernel);
  void* args[] = {&buffer, &arg};
  cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(ctas), dim3(threads), args, 1024, nullptr);
  auto records = mbcheck::cutlass_host::take_launch_records();
  return records.empty() ? mbcheck::cutlass_host::LaunchRecord{} : records.back();
}

mbcheck::cutlass_host::LaunchRecord launch_cluster(void (*kernel)(int*, int), int* buffer, int arg, unsigned ctas,
                                                   unsigned cluster, unsigned threads) {
  mbcheck::cutlass_host::register_kernel(kernel);
  void* args[] = {&buffer, &arg};
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(ctas);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = 1024;
  config.attrs = &attribute;
  config.numAttrs = 1;
  cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(kernel), args);
  auto records = mbcheck::cutlass_host::take_launch_records();
  return records.empty() ? mbcheck::cutlass_host::LaunchRecord{} : records.back();
}

bool verified(const mbcheck::cutlass_host::LaunchRecord& r) {
  return r.verdict == mbcheck::sim::CheckVerdict::verified;
}
bool race(const mbcheck::cutlass_host::LaunchRecord& r) { return r.bug_kind == mbcheck::sim::Verdict::race; }
bool names_line(const mbcheck::cutlass_host::LaunchRecord& r, int line) {
  return r.report.find("access_test.cpp:" + std::to_string(line) + ":") != std::string::npos;
}

}  // namespace

int main() {
  mbcheck::cutlass_host::launch_policy().print_reports = false;
  int* buffer = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&buffer), 256 * sizeof(int));

  auto r = launch(shared_handoff_kernel, buffer, 0, 1, 64);
  expect(race(r) && names_line(r, kSharedWriteLine) && names_line(r, kSharedReadLine),
         "(a) plain shared-memory write and read without a barrier: a race at both lines\n" + r.report);
  r = launch(shared_handoff_kernel, buffer, 1, 1, 64);
  expect(verified(r), "(b) the same with __syncthreads() between: verified " + r.report);

  r = launch(vector_kernel, buffer, 0, 1, 64);
  expect(race(r) && names_line(r, kVectorLine) && names_line(r, kScalarLine),
         "(c) a 16-byte store and a 4-byte store into its middle: a race\n" + r.report);

  cudaMemset(buffer, 0, 256 * sizeof(int));
  r = launch(atomic_kernel, buffer, 0, 2, 64);
  expect(verified(r) && buffer[0] == 128,
         "(d) 128 atomic adds: verified, counter " + std::to_string(buffer[0]) + " " + r.report);
  cudaMemset(buffer, 0, 256 * sizeof(int));
  r = launch(atomic_kernel, buffer, 1, 2, 64);
  expect(race(r), "(d) a plain read of an atomically updated word: a race\n" + r.report);

  r = launch(per_cta_kernel, buffer, 0, 2, 64);
  expect(verified(r) && buffer[0] == 10 && buffer[1] == 11,
         "(e) two CTAs write the same shared-memory offset: verified " + r.report);

  r = launch(global_race_kernel, buffer, 0, 2, 32);
  expect(race(r) && names_line(r, kGlobalWriteLine) && names_line(r, kGlobalReadLine),
         "(f) a global write and read of two CTAs: a race at both lines\n" + r.report);

  r = launch(plain_then_bulk_kernel, buffer, 1, 1, 64);
  expect(verified(r), "(g) plain stores, fence.proxy.async, a bulk store: it copies their bytes " + r.report);
  r = launch(plain_then_bulk_kernel, buffer, 0, 1, 64);
  expect(race(r) && r.report.find("missing fence.proxy.async") != std::string::npos,
         "(g) the same without the fence: the bulk store reads plain stores unfenced\n" + r.report);

  for (int i = 0; i < 4; ++i) buffer[i] = 5 + i;
  r = launch(memcpy_kernel, buffer, 1, 1, 64);
  expect(verified(r) && buffer[8] == 7, "memcpy into shared memory, __syncthreads, a read: verified " + r.report);
  r = launch(memcpy_kernel, buffer, 0, 1, 64);
  expect(race(r) && r.report.find("in memcpy_kernel") != std::string::npos,
         "memcpy into shared memory and a read without a barrier: a race\n" + r.report);

  r = launch_cluster(dsmem_kernel, buffer, 1, 2, 2, 32);
  expect(verified(r) && buffer[0] == 99,
         "a plain DSMEM store, a cluster barrier, the owner's read: verified " + r.report);
  r = launch_cluster(dsmem_kernel, buffer, 0, 2, 2, 32);
  expect(race(r), "a plain DSMEM store and the owner's read without a barrier: a race\n" + r.report);

  r = launch(host_counter_kernel, buffer, 0, 1, 2);
  expect(verified(r) && buffer[1] == 3,
         "(h) a poll loop counting in a host object gives up after three polls: verified, no livelock " + r.report);

  cudaFree(buffer);
  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
