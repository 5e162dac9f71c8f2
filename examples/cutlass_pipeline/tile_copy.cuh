// A small warp-specialized kernel written against CUTLASS's own pipeline: a producer warp
// loads tiles into a ring of shared-memory stages with bulk copies (TMA) on
// cutlass::PipelineTmaAsync; two consumer warps store each stage back out, every thread a
// 16-byte slice with a bulk store it waits for, then meet at a cutlass::arch::NamedBarrier
// after which one of them releases the stage for all. The same source is
// checked on the host by mbcheck (tile_copy_host.cpp, through the CUTLASS host layer) and runs
// on an H100/H200 (tile_copy_gpu.cu), where the output must equal the input bit for bit.
#pragma once

#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/cluster_launch.hpp>
#include <cutlass/pipeline/pipeline.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace tile_copy {

constexpr int kTileInts = 256;  // 1 KiB per tile (a bulk copy's size must be a multiple of 16 B)
constexpr int kStages = 2;
constexpr int kConsumers = 64;                      // warp group 1: two consumer warps
constexpr int kThreads = 128 + kConsumers;          // warp group 0: the producer warp (and three idle)
constexpr int kSliceInts = kTileInts / kConsumers;  // 16 B per consumer thread

enum Mutation : int {
  kCorrect = 0,
  kReleaseBeforeStoreRead = 1,  // the consumers do not wait for their bulk stores to read the stage
  kNoEpilogueSync = 2,          // the stage is released without the named barrier after the stores
};

struct SharedStorage {
  alignas(128) int tiles[kStages][kTileInts];
  typename cutlass::PipelineTmaAsync<kStages>::SharedStorage pipeline;
};

}  // namespace tile_copy

// At global scope, as its extern __shared__ array is: the host binds that array by its linker
// name (sim/compat/cutlass/CMakeLists.txt), which a namespace would mangle.
__global__ void tile_copy_kernel(const int* in, int* out, int tiles_per_cta, int mutation) {
  extern __shared__ __align__(128) char smem[];
  using namespace tile_copy;
  SharedStorage& shared = *reinterpret_cast<SharedStorage*>(smem);
  using Pipeline = cutlass::PipelineTmaAsync<kStages>;
  using State = cutlass::PipelineState<kStages>;
  constexpr uint32_t kTileBytes = kTileInts * sizeof(int);

  const int warp_group = cutlass::canonical_warp_group_idx();
  typename Pipeline::Params params;
  params.transaction_bytes = kTileBytes;
  params.role = warp_group == 0 ? Pipeline::ThreadCategory::Producer : Pipeline::ThreadCategory::Consumer;
  params.is_leader = threadIdx.x == 0;
  params.num_consumers = 1;  // one consumer thread releases a stage, for all of them
  Pipeline pipeline(shared.pipeline, params, cute::Shape<cute::_1, cute::_1, cute::_1>{});
  __syncthreads();  // the barriers' inits are visible to the CTA (a cluster of one)

  const int first = blockIdx.x * tiles_per_cta;
  if (warp_group == 0) {
    const int warp = cutlass::canonical_warp_idx_sync();
    if (warp == 0 && cute::elect_one_sync()) {
      State write = cutlass::make_producer_start_state<Pipeline>();
      for (int t = 0; t < tiles_per_cta; ++t) {
        pipeline.producer_acquire(write);
        cute::SM90_BULK_COPY_G2S::copy(in + (first + t) * kTileInts, pipeline.producer_get_barrier(write),
                                       shared.tiles[write.index()], kTileBytes);
        ++write;
      }
      pipeline.producer_tail(write);  // the CTA outlives the consumers' last releases
    }
  } else {
    cutlass::arch::NamedBarrier epilogue(kConsumers, 0);
    const int slice = (threadIdx.x - 128) * kSliceInts;
    State read;
    for (int t = 0; t < tiles_per_cta; ++t) {
      pipeline.consumer_wait(read);
      cute::SM90_BULK_COPY_S2G::copy(&shared.tiles[read.index()][slice], out + (first + t) * kTileInts + slice,
                                     kSliceInts * sizeof(int));
      cute::tma_store_arrive();
      if (mutation != kReleaseBeforeStoreRead) cute::tma_store_wait<0>();  // this slice has been read
      if (mutation != kNoEpilogueSync) epilogue.arrive_and_wait();         // ... and every slice
      if (threadIdx.x == 128) pipeline.consumer_release(read);
      ++read;
    }
    cute::tma_store_wait<0>();
  }
}

namespace tile_copy {

// The host side, the same on the GPU and under mbcheck: buffers, the launch, the check.
struct TileCopy {
  int ctas = 2, tiles_per_cta = 4, mutation = kCorrect;
  int* in = nullptr;
  int* out = nullptr;

  std::size_t ints() const { return std::size_t(ctas) * tiles_per_cta * kTileInts; }
  static int input_at(std::size_t i) { return static_cast<int>(static_cast<uint32_t>(i) * 2654435761u); }

  cudaError_t launch() {
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&in), ints() * sizeof(int));
    if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(&out), ints() * sizeof(int));
    if (e != cudaSuccess) return e;
    std::vector<int> host(ints());
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = input_at(i);
    cudaMemcpy(in, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(out, 0, ints() * sizeof(int));
    const int smem = int(sizeof(SharedStorage));
    e = cudaFuncSetAttribute(tile_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    void* args[] = {&in, &out, &tiles_per_cta, &mutation};
    const cutlass::Status s = cutlass::ClusterLauncher::launch(dim3(ctas, 1, 1), dim3(1, 1, 1), dim3(kThreads, 1, 1),
                                                               smem, nullptr, (const void*)tile_copy_kernel, args);
    return s == cutlass::Status::kSuccess ? cudaSuccess : cudaErrorLaunchFailure;
  }

  // nullopt when the output equals the input bit for bit, else the first difference.
  std::optional<std::string> verify() const {
    std::vector<int> host(ints());
    cudaMemcpy(host.data(), out, host.size() * sizeof(int), cudaMemcpyDeviceToHost);
    for (std::size_t i = 0; i < host.size(); ++i)
      if (host[i] != input_at(i)) {
        char line[128];
        std::snprintf(line, sizeof line, "out[%zu] = %d, expected %d", i, host[i], input_at(i));
        return std::string(line);
      }
    return std::nullopt;
  }
};

}  // namespace tile_copy
