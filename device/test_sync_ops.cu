// Litmus tests on the GPU for the operations added beside clusters, each a count of outcomes
// the emulator forbids (0 to pass), or a measured fact the emulator's model rests on:
//  - cp.async + cp.async.mbarrier.arrive.noinc (and the incrementing form beside an arrive):
//    a waiter reads stale copied data;
//  - cp.async.bulk.wait_group.read 1: the older group's source, overwritten after the wait,
//    reaches global memory overwritten;
//  - bar.red.popc/.and/.or: a result other than the reduction of the generation's predicates;
//  - named-barrier counting: bar.sync id, 64 in a CTA of 4 warps releases two warps while the
//    other two are still delayed (measured); a warp whose upper 16 lanes exited counts as a
//    whole warp (measured; the emulator counts warps the same way, tests/test_named_barriers.cpp);
//  - OrderedSequenceBarrier (spec/ordered_sequence_barrier.hpp): a turn out of order;
//  - wgmma.mma_async operand reads: a stage released before wgmma.wait_group and overwritten
//    reaches the MMA (measured: what the emulator reports as a race), released after it never
//    does (forbidden).
// Exit status 0 when every forbidden count is 0.
#include <cstring>
#include <vector>

#include "device/counters.cuh"
#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "spec/mbarrier.hpp"
#include "spec/ordered_sequence_barrier.hpp"

using namespace mbcheck;
using P = dev::DevicePlatform;

namespace {

__device__ void spin(unsigned long long cycles) {
  const unsigned long long start = clock64();
  while (clock64() - start < cycles) {}
}

// Warp 0 copies 32 x 16 bytes of round r's data with cp.async, then each lane has the barrier
// (count 32) track its copy: .noinc (the async arrive is the lane's arrival) or the incrementing
// form beside a plain arrive. Warp 1 waits and reads every word; stale reads counted.
__global__ void cp_async_arrive(const std::uint32_t* src, std::uint32_t rounds, bool noinc, unsigned int* stale) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  auto* data = reinterpret_cast<std::uint32_t*>(P::shared_memory() + 128);
  const std::uint32_t me = P::thread_idx();
  if (me == 0) P::mbarrier_init(*bar, 32);
  P::sync_threads();
  for (std::uint32_t r = 0; r < rounds; ++r) {
    if (me < 32) {
      P::cp_async(data + 4 * me, src + (r % 8) * 128 + 4 * me, 16);
      if (noinc) {
        P::cp_async_mbarrier_arrive_noinc(*bar);  // the lane's arrival, once its copy landed
      } else {
        P::cp_async_mbarrier_arrive(*bar);  // pending +1, then an arrive once the copy landed
        P::mbarrier_arrive(*bar);           // the lane's own arrival, which the count expects
      }
    } else {
      P::mbarrier_wait_parity(*bar, r);
      for (std::uint32_t i = me - 32; i < 128; i += 32)
        if (data[i] != src[(r % 8) * 128 + i]) atomicAdd(stale, 1u);
    }
    P::sync_threads();  // this round's reads are done before the next round's copies
  }
}

// One thread: tile A (256 B) and tile B bulk-stored in two groups; wait_group.read 1; tile A
// overwritten; then wait_group 0. The global copy of A must hold the old values.
__global__ void bulk_wait_group_1(std::uint32_t* global, unsigned int* wrong) {
  auto* tile = reinterpret_cast<std::uint32_t*>(P::shared_memory());
  if (P::thread_idx() != 0) return;
  std::uint32_t* out = global + std::size_t{blockIdx.x} * 128;
  for (int i = 0; i < 128; ++i) tile[i] = 1000 + i;
  P::fence_proxy_async_shared_cta();
  P::cp_async_bulk_shared_to_global(out, tile, 256);
  P::cp_async_bulk_commit_group();
  P::cp_async_bulk_shared_to_global(out + 64, tile + 64, 256);
  P::cp_async_bulk_commit_group();
  P::cp_async_bulk_wait_group_read(1);
  for (int i = 0; i < 64; ++i) tile[i] = 7;  // the first group read its source: free again
  P::cp_async_bulk_wait_group(0);
  for (int i = 0; i < 64; ++i)
    if (out[i] != 1000u + i) atomicAdd(wrong, 1u);
}

__global__ void bar_red(std::uint32_t rounds, unsigned int* wrong) {
  const std::uint32_t me = P::thread_idx(), n = P::block_dim();
  for (std::uint32_t r = 0; r < rounds; ++r) {
    const bool vote = (me * 7 + r) % 5 == 0;
    std::uint32_t expected = 0;
    for (std::uint32_t t = 0; t < n; ++t) expected += (t * 7 + r) % 5 == 0 ? 1 : 0;
    if (P::bar_red_popc(3, n, vote) != expected) atomicAdd(wrong, 1u);
    if (P::bar_red_and(3, n, vote) != (expected == n)) atomicAdd(wrong, 1u);
    if (P::bar_red_or(3, n, vote) != (expected > 0)) atomicAdd(wrong, 1u);
  }
}

// Warps 0-1 sync `rounds` times on barrier 1 for 64 threads while warps 2-3 are delayed, then
// sync on barrier 2 for 64: how many of the 64-thread rounds finished before the delayed warps
// started (all of them: bar.sync counts only its 64 threads).
__global__ void named_count(std::uint32_t rounds, unsigned long long delay, unsigned int* early_rounds) {
  __shared__ unsigned long long started, finished;
  const std::uint32_t w = P::warp_idx();
  if (w >= 2) {
    spin(delay);
    if (P::thread_idx() == 64) started = clock64();
    P::bar_sync(2, 64);
  } else {
    for (std::uint32_t r = 0; r < rounds; ++r) P::bar_sync(1, 64);
    if (P::thread_idx() == 0) finished = clock64();
  }
  __syncthreads();
  if (P::thread_idx() == 0 && finished < started) atomicAdd(early_rounds, 1u);
}

// Warp 0's lanes 16-31 exit; lanes 0-15 and warp 1 then bar.sync(1, 64): PTX counts warps
// (a warp arrives when all its non-exited lanes have), so it completes.
__global__ void named_exited_lanes(unsigned int* passed) {
  if (P::warp_idx() == 0 && P::lane_idx() >= 16) return;
  P::bar_sync(1, 64);
  if (P::thread_idx() == 0) atomicAdd(passed, 1u);
}

// Two groups of 128 threads take 64 turns each through OrderedSequenceBarrier<2, 2>; turn k of
// group g finds its stage's word holding 2 * (k / 2) + g.
__global__ void ordered_sequence(unsigned int* wrong) {
  auto* bars = reinterpret_cast<P::Barrier*>(P::shared_memory());
  auto* words = reinterpret_cast<volatile std::uint32_t*>(P::shared_memory() + 128);
  const std::uint32_t me = P::thread_idx(), group = me / 128, t = me % 128;
  OrderedSequenceBarrier<P, 2, 2> seq(bars, group);
  if (me == 0) seq.init(128);
  words[me] = 0;
  P::sync_threads();
  for (std::uint32_t turn = 0; turn < 64; ++turn) {
    seq.wait();
    volatile std::uint32_t* word = words + 128 * (turn % 2) + t;
    if (*word != 2 * (turn / 2) + group) atomicAdd(wrong, 1u);
    *word = *word + 1;
    seq.arrive();
  }
}

// Misuse: warp 0 names barrier 1 with 64 threads, warp 1 with 128 (PTX: undefined).
__global__ void named_count_mismatch(unsigned int* passed) {
  P::bar_sync(1, P::warp_idx() == 0 ? 64 : 128);
  atomicAdd(passed, 1u);
}
// Misuse: __syncwarp with a mask that leaves out the calling lane (PTX: undefined).
__global__ void syncwarp_without_self(unsigned int* passed) {
  P::syncwarp(P::lane_idx() == 0 ? 0xfffffffeu : 0xffffffffu);
  atomicAdd(passed, 1u);
}

// cp.async groups: each thread copies round r's 16 bytes into slot A (group 0) and into slot
// B (group 1), waits with cp.async.wait_group 1 and reads A, then wait_group 0 and reads B.
// Stale reads counted.
__global__ void cp_async_groups(const std::uint32_t* src, std::uint32_t rounds, unsigned int* stale) {
  auto* smem = reinterpret_cast<std::uint32_t*>(P::shared_memory());
  const std::uint32_t me = P::thread_idx();
  std::uint32_t* a = smem + 8 * me;
  std::uint32_t* b = smem + 8 * me + 4;
  for (std::uint32_t r = 0; r < rounds; ++r) {
    const std::uint32_t* from = src + ((r + me) % 8) * 128 + 4 * (me % 32);
    P::cp_async(a, from, 16);
    P::cp_async_commit_group();
    P::cp_async(b, from, 16);
    P::cp_async_commit_group();
    P::cp_async_wait_group(1);
    for (int i = 0; i < 4; ++i)
      if (a[i] != from[i]) atomicAdd(stale, 1u);
    P::cp_async_wait_group(0);
    for (int i = 0; i < 4; ++i)
      if (b[i] != from[i]) atomicAdd(stale, 1u);
  }
}

// The PTX 8.6 .relaxed arrive-on forms count as arrivals: warps 0-2 arrive on a barrier of
// count 96 with arrive.relaxed, arrive.expect_tx.relaxed (+ its complete_tx) and arrive.relaxed;
// warp 3 waits for each phase. In the last round warp 2 uses arrive_drop.relaxed, so one more
// phase completes with warps 0-1 alone (64 arrivals). Counts the phases warp 3 saw complete.
__global__ void relaxed_arrives(std::uint32_t rounds, unsigned int* phases) {
  auto* bar = reinterpret_cast<P::Barrier*>(P::shared_memory());
  const std::uint32_t me = P::thread_idx(), warp = me / 32;
  if (me == 0) P::mbarrier_init(*bar, 96);
  P::sync_threads();
  for (std::uint32_t r = 0; r <= rounds; ++r) {
    const bool last = r == rounds;  // the phase after the drop: 64 arrivals
    if (warp == 0) {
      P::mbarrier_arrive_relaxed(*bar);
    } else if (warp == 1) {
      if (me == 32) {
        P::mbarrier_arrive_expect_tx_relaxed(*bar, 16);
        P::mbarrier_complete_tx(*bar, 16);
      } else {
        P::mbarrier_arrive_relaxed(*bar);
      }
    } else if (warp == 2) {
      if (r + 1 == rounds)
        P::mbarrier_arrive_drop_relaxed(*bar);
      else if (!last)
        P::mbarrier_arrive_relaxed(*bar);
    } else {
      P::mbarrier_wait_parity(*bar, r);
      if (me == 96) atomicAdd(phases, 1u);
    }
    P::sync_threads();
  }
}

// shfl.sync.idx: each lane takes the next lane's operand of the same round.
__global__ void shfl(std::uint32_t rounds, unsigned int* wrong) {
  const std::uint32_t lane = P::lane_idx();
  for (std::uint32_t r = 0; r < rounds; ++r) {
    const std::uint32_t got = P::shfl_sync_idx(0xffffffffu, lane * 7 + r, (lane + 1) % 32);
    if (got != ((lane + 1) % 32) * 7 + r) atomicAdd(wrong, 1u);
  }
}

// A warp group (threads 0..127) runs kChain MMAs on (A, B0) and a last one on (A, B), all of
// ones, in one group; thread 0 releases the stage (barrier, count 1) before or after
// wgmma.wait_group 0. Warp 4 waits for the release and overwrites B with twos. D[0] is then
// 16 (kChain + 1) if the last MMA read the old B, 16 kChain + 32 if it read the new B, another
// value if a mix. outcome[0..2] count the three per CTA.
constexpr int kChain = 64;
__global__ void __launch_bounds__(256) wgmma_release(bool before_wait, unsigned int* outcome) {
  __shared__ alignas(128) std::uint16_t a[1024], b0[128], b[128];  // bf16: 2 KiB, 256 B, 256 B
  __shared__ P::Barrier empty;
  const std::uint32_t me = P::thread_idx();
  constexpr std::uint16_t kOne = 0x3F80, kTwo = 0x4000;
  for (std::uint32_t i = me; i < 1024; i += 256) a[i] = kOne;
  if (me < 128) b0[me] = kOne, b[me] = kOne;
  if (me == 0) P::mbarrier_init(empty, 1);
  P::fence_proxy_async_shared_cta();  // the generic stores, to the MMA's async-proxy reads
  __syncthreads();
  // The warp group's index, warp-uniform as the compiler can see (CUTLASS's
  // canonical_warp_group_idx): a wgmma in a path it thinks divergent is serialized.
  const std::uint32_t group = __shfl_sync(0xffffffffu, me / 128, 0);
  if (group == 0) {
    P::WgmmaAccumulator acc;
    P::wgmma_fence();
    for (int i = 0; i < kChain; ++i) P::wgmma_mma_async(acc, a, sizeof a, b0, sizeof b0);
    P::wgmma_mma_async(acc, a, sizeof a, b, sizeof b);
    P::wgmma_commit_group();
    if (before_wait && me == 0) P::mbarrier_arrive(empty);
    P::wgmma_wait_group(0);
    P::wgmma_fence_operand(acc);
    if (!before_wait && me == 0) P::mbarrier_arrive(empty);
    if (me == 0) {
      const float d = acc.d[0];
      atomicAdd(&outcome[d == 16.0f * (kChain + 1) ? 0 : d == 16.0f * kChain + 32.0f ? 1 : 2], 1u);
    }
  } else if (__shfl_sync(0xffffffffu, me / 32, 0) == 4) {
    P::mbarrier_wait_parity(empty, 0);
    for (std::uint32_t i = (me - 128) * 4; i < (me - 128) * 4 + 4; ++i) b[i] = kTwo;
  }
}

using dev::counter;
using dev::read_and_free;

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 2 && std::strcmp(argv[1], "--misuse") == 0) {
    // One misuse per process (a hang or fault must not take the rest down): what the hardware
    // does. A bar.sync that never completes hangs: run it under an outer timeout.
    unsigned int* passed = counter();
    const bool named = std::strcmp(argv[2], "named-count-mismatch") == 0;
    if (named)
      named_count_mismatch<<<64, 64>>>(passed);
    else
      syncwarp_without_self<<<64, 32>>>(passed);
    const cudaError_t e = cudaDeviceSynchronize();
    unsigned int v = 0;
    if (e == cudaSuccess) v = read_and_free(passed);
    std::printf("misuse %s (emulator: misuse %s): 64 CTAs: kernel %s; threads past it: %u of %u\n", argv[2],
                named ? "named-barrier" : "collective", e == cudaSuccess ? "no error" : cudaGetErrorString(e), v,
                named ? 64u * 64u : 64u * 32u);
    return 0;
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;  // small, for the sanitizers
  int failures = 0;
  cudaDeviceProp prop{};
  MBCHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const unsigned ctas = quick ? 4u : static_cast<unsigned>(prop.multiProcessorCount) * 4;
  const std::uint32_t rounds = quick ? 20 : 2000;

  std::vector<std::uint32_t> src(8 * 128);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint32_t>(i * 2654435761u);
  std::uint32_t* d_src = nullptr;
  MBCHECK_CUDA(cudaMalloc(&d_src, src.size() * 4));
  MBCHECK_CUDA(cudaMemcpy(d_src, src.data(), src.size() * 4, cudaMemcpyHostToDevice));
  for (bool noinc : {true, false}) {
    unsigned int* stale = counter();
    cp_async_arrive<<<ctas, 64, 1024>>>(d_src, rounds, noinc, stale);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(stale);
    std::printf(
        "litmus cp.async + cp.async.mbarrier.arrive%s: %u CTAs x %u rounds x 128 words, stale reads: %u "
        "(forbidden)\n",
        noinc ? ".noinc" : " (+1, beside an arrive)", ctas, rounds, v);
    failures += v != 0;
  }
  {
    unsigned int* stale = counter();
    cp_async_groups<<<ctas, 64, 64 * 32>>>(d_src, rounds, stale);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(stale);
    std::printf(
        "litmus cp.async groups (wait_group 1 then read the older group, wait_group 0 then the newer): %u "
        "CTAs x 64 threads x %u rounds, stale reads: %u (forbidden)\n",
        ctas, rounds, v);
    failures += v != 0;
  }
  MBCHECK_CUDA(cudaFree(d_src));

  {
    std::uint32_t* d_out = nullptr;
    MBCHECK_CUDA(cudaMalloc(&d_out, std::size_t{ctas} * 128 * 4));
    unsigned int* wrong = counter();
    bulk_wait_group_1<<<ctas, 32, 512>>>(d_out, wrong);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(wrong);
    MBCHECK_CUDA(cudaFree(d_out));
    std::printf(
        "litmus cp.async.bulk.wait_group.read 1: %u CTAs, older group's words stored overwritten: %u "
        "(forbidden)\n",
        ctas, v);
    failures += v != 0;
  }
  {
    unsigned int* wrong = counter();
    bar_red<<<ctas, 256>>>(rounds / 10, wrong);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(wrong);
    std::printf("litmus bar.red popc/and/or, 256 threads: %u CTAs x %u rounds, wrong results: %u (forbidden)\n", ctas,
                rounds / 10, v);
    failures += v != 0;
  }
  {
    unsigned int* phases = counter();
    relaxed_arrives<<<ctas, 128, 128>>>(rounds, phases);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(phases);
    const unsigned int expected = ctas * (rounds + 1);
    std::printf(
        "litmus mbarrier.arrive{,.expect_tx,_drop}.relaxed count as arrivals: %u CTAs x %u rounds + 1 after "
        "the drop, phases seen complete %u of %u, missing: %u (forbidden)\n",
        ctas, rounds, v, expected, expected - v);
    failures += v != expected;
  }
  {
    unsigned int* wrong = counter();
    shfl<<<ctas, 128>>>(rounds, wrong);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(wrong);
    std::printf(
        "litmus shfl.sync.idx (the next lane's operand of the round): %u CTAs x 128 threads x %u rounds, "
        "wrong values: %u (forbidden)\n",
        ctas, rounds, v);
    failures += v != 0;
  }
  {
    unsigned int* early = counter();
    named_count<<<ctas, 128>>>(100, 200'000ull, early);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(early);
    std::printf(
        "named-barrier counting: bar.sync 1, 64 x 100 rounds by warps 0-1 while warps 2-3 are delayed: all "
        "rounds done before the delayed warps started in %u of %u CTAs (as modelled: the count is 64 "
        "threads)\n",
        v, ctas);
    unsigned int* passed = counter();
    named_exited_lanes<<<ctas, 64>>>(passed);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int p = read_and_free(passed);
    std::printf(
        "named-barrier counting: bar.sync 1, 64 with 16 of warp 0's lanes exited: completed in %u of %u CTAs "
        "(PTX counts warps, and so does the emulator)\n",
        p, ctas);
  }
  for (const bool before_wait : {true, false}) {
    unsigned int* outcome = nullptr;
    MBCHECK_CUDA(cudaMalloc(&outcome, 3 * sizeof(unsigned int)));
    MBCHECK_CUDA(cudaMemset(outcome, 0, 3 * sizeof(unsigned int)));
    const unsigned launches = quick ? 1 : 50;
    for (unsigned l = 0; l < launches; ++l) wgmma_release<<<ctas, 256>>>(before_wait, outcome);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    unsigned int v[3] = {};
    MBCHECK_CUDA(cudaMemcpy(v, outcome, sizeof v, cudaMemcpyDeviceToHost));
    MBCHECK_CUDA(cudaFree(outcome));
    std::printf(
        "litmus wgmma.mma_async operand read vs a release %s wgmma.wait_group 0 (then the stage is "
        "overwritten): %u trials, MMA read the old operand %u, the new %u, a mix %u%s\n",
        before_wait ? "before" : "after", ctas * launches, v[0], v[1], v[2],
        before_wait ? " (the new or a mix: what the emulator reports as a race)" : " (new or mix forbidden)");
    if (!before_wait) failures += v[1] + v[2] != 0;
    if (v[0] + v[1] + v[2] != ctas * launches) ++failures;
  }
  {
    unsigned int* wrong = counter();
    ordered_sequence<<<ctas, 256, 1280>>>(wrong);
    MBCHECK_CUDA(cudaGetLastError());
    MBCHECK_CUDA(cudaDeviceSynchronize());
    const unsigned int v = read_and_free(wrong);
    std::printf(
        "litmus OrderedSequenceBarrier<2,2>, 2 groups of 128 x 64 turns: %u CTAs, turns out of order: %u "
        "(forbidden)\n",
        ctas, v);
    failures += v != 0;
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
