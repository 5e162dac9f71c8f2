// The CUTLASS host layer's own behaviour, each case a small kernel written against CUTLASS's
// barrier API (cutlass/arch/barrier.h, cute/arch/cluster_sm90.hpp), launched the CUDA way and
// checked exhaustively: the thread and cluster geometry, remote arrive.expect_tx, a transaction
// count that goes negative first, a try_wait whose answer the kernel branches on, 32-bit
// shared addresses, and the errors a bad launch gets. Exit status 0 when every case holds.
#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/util.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cluster_launch.hpp>

#include <cstdio>
#include <functional>
#include <string>

#include "mbcheck/cutlass_host/launch.hpp"

namespace {

using Barrier = cutlass::arch::ClusterTransactionBarrier;
using P = mbcheck::sim::HostPlatform;

struct Storage {
  uint64_t pad;  // the barrier is not at offset 0: 32-bit addresses are offsets, not pointers
  uint64_t bar;
};

}  // namespace

// Geometry: grid 4x2 of CTAs in clusters of 2x1, blocks of 32x2 threads.
__global__ void geometry_kernel(int) {
  const uint3 t = threadIdx, b = blockIdx;
  P::check(t.x < 32 && t.y < 2 && t.z == 0, "threadIdx within blockDim");
  P::check(t.y * 32 + t.x == P::thread_idx(), "threadIdx is x-major");
  P::check(b.x < 4 && b.y < 2, "blockIdx within gridDim");
  P::check(cute::block_rank_in_cluster() == b.x % 2, "rank in the cluster follows blockIdx.x");
  P::check(cute::block_id_in_cluster().x == b.x % 2 && cute::block_id_in_cluster().y == 0, "block_id_in_cluster");
  P::check(cute::cluster_id_in_grid().x == b.x / 2 && cute::cluster_id_in_grid().y == b.y, "cluster_id_in_grid");
  P::check(cute::cluster_shape().x == 2 && cute::cluster_grid_dims().x == 2 && cute::cluster_grid_dims().y == 2,
           "cluster shape and cluster grid");
  P::check(blockDim.x == 32 && gridDim.y == 2, "blockDim and gridDim");
  cutlass::arch::warpgroup_reg_alloc<232>();  // setmaxnreg: compiles, no effect on the host
}

// CTA 1 arrives on CTA 0's barrier with arrive.expect_tx (remote) and completes its bytes;
// CTA 0 only waits. `order`: 0 the arrive first, 1 the complete_tx first (tx goes negative).
__global__ void remote_expect_tx_kernel(int order) {
  extern __shared__ char shared_memory[];
  Storage& s = *reinterpret_cast<Storage*>(shared_memory);
  Barrier& bar = *reinterpret_cast<Barrier*>(&s.bar);
  if (threadIdx.x == 0) bar.init(1);
  cutlass::arch::fence_barrier_init();
  cute::cluster_sync();
  const uint32_t cta0 = 0;  // (a literal 0 would also be a null pointer to the static form)
  if (cute::block_rank_in_cluster() == 1 && threadIdx.x == 0) {
    if (order == 1) bar.complete_transaction(cta0, 16, 1);
    bar.arrive_and_expect_tx(16, cta0, 1);
    if (order == 0) bar.complete_transaction(cta0, 16, 1);
  }
  if (cute::block_rank_in_cluster() == 0) bar.wait(0);
  cute::cluster_sync();
}

// One thread arrives; the other polls with try_wait and waits only when the poll failed.
__global__ void try_wait_kernel(int) {
  extern __shared__ char shared_memory[];
  Storage& s = *reinterpret_cast<Storage*>(shared_memory);
  cutlass::arch::ClusterBarrier& bar = *reinterpret_cast<cutlass::arch::ClusterBarrier*>(&s.bar);
  P::check(cute::cast_smem_ptr_to_uint(&s.bar) == 8, "a 32-bit shared address is the offset in shared memory");
  if (threadIdx.x == 0) bar.init(1);
  __syncthreads();
  if (threadIdx.x == 0) bar.arrive();
  if (threadIdx.x == 32 && !bar.try_wait(0)) bar.wait(0);
  __syncthreads();
}

// Never registered (no cudaFuncSetAttribute on it).
__global__ void unregistered_kernel(int) {}

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

// Launches `kernel` with `arg` through CUTLASS's launcher and returns its record.
mbcheck::cutlass_host::LaunchRecord launch(void (*kernel)(int), int arg, dim3 grid, dim3 cluster, dim3 block,
                                           bool register_it = true) {
  if (register_it) cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sizeof(Storage)));
  void* args[] = {&arg};
  cutlass::ClusterLauncher::launch(grid, cluster, block, sizeof(Storage), nullptr, (const void*)kernel, args);
  auto records = mbcheck::cutlass_host::take_launch_records();
  return records.empty() ? mbcheck::cutlass_host::LaunchRecord{} : records.back();
}

// The same through cudaLaunchKernelExC itself (CUTLASS's launcher refuses some shapes first).
mbcheck::cutlass_host::LaunchRecord launch_ex(void (*kernel)(int), int arg, dim3 grid, dim3 cluster, dim3 block) {
  void* args[] = {&arg};
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster.x;
  attribute.val.clusterDim.y = cluster.y;
  attribute.val.clusterDim.z = cluster.z;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = sizeof(Storage);
  config.attrs = &attribute;
  config.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelExC(&config, (const void*)kernel, args);
  auto records = mbcheck::cutlass_host::take_launch_records();
  auto r = records.empty() ? mbcheck::cutlass_host::LaunchRecord{} : records.back();
  if (e == cudaSuccess) r.report += " (but the launch returned cudaSuccess)";
  return r;
}

bool verified(const mbcheck::cutlass_host::LaunchRecord& r) {
  return r.verdict == mbcheck::sim::CheckVerdict::verified;
}

}  // namespace

int main() {
  mbcheck::cutlass_host::launch_policy().print_reports = false;
  auto r = launch(geometry_kernel, 0, dim3(4, 2, 1), dim3(2, 1, 1), dim3(32, 2, 1));
  expect(verified(r), "geometry of grid 4x2, clusters 2x1, blocks 32x2: " + r.report);

  r = launch(remote_expect_tx_kernel, 0, dim3(2, 1, 1), dim3(2, 1, 1), dim3(32, 1, 1));
  expect(verified(r), "remote arrive.expect_tx, then its complete_tx: verified " + r.report);
  const auto in_order = r.executions;
  r = launch(remote_expect_tx_kernel, 1, dim3(2, 1, 1), dim3(2, 1, 1), dim3(32, 1, 1));
  expect(verified(r), "complete_tx before the remote arrive.expect_tx (tx negative first): verified " + r.report);
  std::printf("      executions: %llu in order, %llu with tx negative first\n",
              static_cast<unsigned long long>(in_order), static_cast<unsigned long long>(r.executions));

  r = launch(try_wait_kernel, 0, dim3(1, 1, 1), dim3(1, 1, 1), dim3(64, 1, 1));
  expect(verified(r), "try_wait branched on, then wait: verified " + r.report);
  std::printf("      executions: %llu\n", static_cast<unsigned long long>(r.executions));

  r = launch(unregistered_kernel, 0, dim3(1, 1, 1), dim3(1, 1, 1), dim3(32, 1, 1), false);
  expect(r.report.find("never registered") != std::string::npos, "an unregistered kernel is refused: " + r.report);
  r = launch_ex(remote_expect_tx_kernel, 0, dim3(3, 1, 1), dim3(2, 1, 1), dim3(32, 1, 1));
  expect(r.verdict != mbcheck::sim::CheckVerdict::verified &&
             r.report.find("whole number of clusters") != std::string::npos,
         "a grid that is no whole number of clusters is refused: " + r.report);
  r = launch_ex(remote_expect_tx_kernel, 0, dim3(2, 1, 2), dim3(2, 1, 2), dim3(32, 1, 1));
  expect(r.report.find("z must be 1") != std::string::npos, "a cluster in z is refused: " + r.report);

  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
