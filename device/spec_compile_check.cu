// Compiles every spec/ template for sm_90a with the device Platform, so a change in spec/ or
// device/ that nvcc rejects fails the default build. The kernels are valid programs (so
// they can become tests later), but nothing launches them yet.
#include "device/platform.cuh"
#include "spec/classics.hpp"
#include "spec/kernels/residual_add.hpp"
#include "spec/kernels/tma_store.hpp"
#include "spec/pipeline.hpp"

namespace mbcheck::dev::compile_check {

using P = DevicePlatform;

static_assert(sizeof(P::Barrier) == 8 && alignof(P::Barrier) == 8, "an mbarrier is one 8-byte word");
static_assert(sizeof(P::Token) == 8, "the arrive state is 64 bits");
static_assert(barrier_bytes<P>(2 * 4) == 128, "barriers then 128-byte aligned stage buffers");

// The residual-add epilogue, one kernel per stage count.
template <int Stages>
__global__ void residual_add(ResidualAddParams p) {
  residual_add_kernel<P, Stages>(p);
}
template __global__ void residual_add<1>(ResidualAddParams);
template __global__ void residual_add<2>(ResidualAddParams);
template __global__ void residual_add<3>(ResidualAddParams);
template __global__ void residual_add<4>(ResidualAddParams);

// The TMA-store epilogue (ordinary stores to smem, fence.proxy.async, bulk store to global).
__global__ void tma_store(TmaStoreParams p) { tma_store_kernel<P>(p); }

// The classic DPOR benchmarks, over the Platform's plain atomics.
__global__ void classics(std::int64_t* words, std::uint32_t n) {
  readers_thread<P>(words);
  lastzero_thread<P>(words, n);
  ordering_bug_thread<P>(words, words + 1, n);
}

// The pipeline paths residual_add does not use: the producer takes its stage through
// produce(), acquire_producer() and the manual wait_consumer/producer_mbar/producer_step in
// turn, and the consumers through consume(), acquire_consumer(), consume_explicit() (lane 0
// arrives for its warp) and the manual wait_producer/consumer_stage/consumer_step.
// Launch: 1 block of 32 * (1 + consumer_warps) threads; shared memory: the barriers, then
// Stages ints.
template <int Stages>
__global__ void pipeline_paths(std::uint32_t items, std::uint32_t consumer_warps, std::uint32_t* sums) {
  unsigned char* smem = P::shared_memory();
  EpiLoadPipeline<P, Stages> pipe(reinterpret_cast<P::Barrier*>(smem));
  auto* slots = reinterpret_cast<std::uint32_t*>(smem + barrier_bytes<P>(2 * Stages));
  const std::uint32_t consumers = consumer_warps * P::warp_size();
  if (P::thread_idx() == 0) pipe.init_barriers(1, consumers);
  P::sync_threads();

  if (P::warp_idx() == 0) {
    // The elected lane is the producer (as in residual_add: a whole warp following the
    // pipeline could let one lane run two phases ahead of another).
    if (P::elect_one()) {
      for (std::uint32_t i = 0; i < items; ++i) {
        switch (i % 3) {
          case 0: {
            auto stage = pipe.produce();
            P::store(slots + stage.index(), i);
            stage.mbar().arrive();
            break;
          }
          case 1: {
            auto stage = pipe.acquire_producer();
            P::store(slots + stage.index(), i);
            stage.mbar().arrive();
            stage.release();
            break;
          }
          default: {
            pipe.wait_consumer();
            P::store(slots + pipe.pipeline.producer_stage(), i);
            pipe.producer_mbar().arrive();
            pipe.producer_step();
            break;
          }
        }
      }
    }
  } else if (P::warp_idx() <= consumer_warps) {
    std::uint32_t sum = 0;
    for (std::uint32_t i = 0; i < items; ++i) {
      switch (i % 4) {
        case 0: {
          auto stage = pipe.consume();
          sum += P::load(slots + stage.index());
          break;
        }
        case 1: {
          auto stage = pipe.acquire_consumer();
          sum += P::load(slots + stage.index());
          stage.release();
          break;
        }
        case 2: {
          auto stage = pipe.consume_explicit();
          sum += P::load(slots + stage.index());
          // The warp's reads happen before lane 0 releases the stage for it. (racecheck of
          // CUDA 13.0 does not credit the __syncwarp and reports these reads as racing with
          // the next fill; the PTX memory model orders them.)
          __syncwarp();
          if (P::lane_idx() == 0) stage.mbar().arrive(P::warp_size());
          break;
        }
        default: {
          pipe.wait_producer();
          sum += P::load(slots + pipe.consumer_stage());
          pipe.pipeline.consumer_release();
          pipe.consumer_step();
          break;
        }
      }
    }
    P::check(sum == items * (items - 1) / 2, "pipeline_paths: a consumer saw a wrong item");
    P::store(sums + P::thread_idx() - P::warp_size(), sum);
  }
}
template __global__ void pipeline_paths<1>(std::uint32_t, std::uint32_t, std::uint32_t*);
template __global__ void pipeline_paths<2>(std::uint32_t, std::uint32_t, std::uint32_t*);
template __global__ void pipeline_paths<4>(std::uint32_t, std::uint32_t, std::uint32_t*);

// Every Mbarrier member and Platform instruction not used above, in one valid sequence
// run by the elected lane of a single warp. Launch: 1 block of 32 threads; shared memory:
// barrier_bytes<P>(4) + 16 bytes; `src` 16-byte aligned, 16 bytes; `out` 8 words.
__global__ void mbarrier_ops(const std::uint32_t* src, std::uint32_t* out) {
  unsigned char* smem = P::shared_memory();
  auto* raw = reinterpret_cast<P::Barrier*>(smem);
  auto* buf = reinterpret_cast<std::uint32_t*>(smem + barrier_bytes<P>(4));
  const Mbarrier<P> a(raw[0]), b(raw[1]), c(raw[2]), d(raw[3]);
  if (P::thread_idx() == 0) {
    P::label(raw[0], "a", 0);
    a.init(2);
    b.init(1);
    c.init(2);
    d.init(1);
  }
  P::sync_threads();

  if (P::warp_idx() == 0 && P::elect_one()) {
    // a: a .noComplete arrive, then the completing one; its token sees phase 0 complete.
    const auto t = a.arrive_no_complete(1);
    out[0] = P::mbarrier_pending_count(t);
    a.arrive();
    out[1] = a.test_wait(t) && a.try_wait(t);
    a.wait(t);  // the blocking wait on a token of a completed phase returns
    // b: tx bytes expected and completed by hand, then the arrival completes phase 0.
    b.expect_tx(16);
    b.complete_tx(16);
    b.arrive();
    out[2] = b.test_wait(std::int64_t{0});
    // c: arrive_drop lowers the expected count to 1 for phase 0 and every later phase.
    c.arrive_drop(1);
    c.arrive(1);
    c.wait(0);
    c.arrive();
    out[3] = c.try_wait(std::int64_t{1});
    // d: a bulk copy into buf; the fence orders the generic write before the async one.
    P::store(buf, 0u);
    P::fence_proxy_async_shared_cta();
    d.arrive_expect_tx(16);
    P::cp_async_bulk_global_to_shared(buf, src, 16, d.raw());
    d.wait(d.try_wait_status(0));  // try then wait on its status (CUTLASS's consumer_try_wait)
    for (int i = 0; i < 4; ++i) out[4 + i] = P::load(buf + i);
  }
  P::sync_threads();
  if (P::thread_idx() == 0) {
    a.inval();
    b.inval();
    c.inval();
    d.inval();
  }
}

}  // namespace mbcheck::dev::compile_check
