// A persistent warp-specialized ping-pong mainloop in the style of CUTLASS's sm90 ping-pong
// kernels and FlashAttention-3's warp-group scheduler, written with phase BITS as CUTLASS's
// PipelineState keeps them and with named barriers.
//
// Threads: warp 0 is the producer warp (its lane 0 streams, the other lanes exit); then two
// consumer warp groups of `group_threads` threads each. Tile t (of `tiles`) is `k_blocks`
// blocks of `tile_elems` floats; block k of tile t goes through stage (t*k_blocks+k) % Stages.
// Group t % 2 consumes tile t: each thread sums its elements (i = lane-in-group mod
// group_threads) over the tile's blocks and stores the sum to out[t * group_threads + i].
//
// Barriers (mbarriers): full[s] (count 1: arrive.expect_tx + the copy's bytes), empty[s]
// (count group_threads: the group that consumed the block releases it). Every wait passes
// only the phase bit.
// Named barriers: order[g] (id kOrderBarrier + g, 2 * group_threads threads): group g syncs
// order[g] before its mainloop and arrives on order[1-g] after it; group 1 arrives on
// order[0] once at the start, so group 0 goes first. A group skips the other's blocks by
// advancing its pipeline state by k_blocks; its parity waits are right only because
// order[g] carries what the other group consumed (without it a wait of the same parity as a
// phase it saw itself would return at once).
#pragma once

#include "spec/mbarrier.hpp"
#include "spec/named_barrier.hpp"
#include "spec/pipeline.hpp"
#include "spec/platform.hpp"

namespace mbcheck {

enum class PingPongMutation : std::uint32_t {
  none = 0,
  no_order,              // group 0 does not wait for its turn: it reads stages of tiles in flight
  order_count_mismatch,  // group 1 names the order barriers with group_threads, not 2x: misuse
  double_arrive,         // group 1 arrives twice for one tile (an early-return arrive, then the
                         // loop's: vllm PR #26026): group 0 runs a mainloop early
  producer_start_bit_0,  // the producer's state starts at bit 0: its first wait on a fresh
                         // empty barrier never returns (deadlock)
  idle_group_returns,    // a group with no tile returns before handing the first turn over:
                         // with one tile, group 0 waits for its turn forever (deadlock)
};

struct PingPongParams {
  const float* src = nullptr;  // [tiles * k_blocks * tile_elems], 16-byte aligned
  float* out = nullptr;        // [tiles * group_threads]
  std::uint32_t group_threads = 128;
  std::uint32_t tiles = 4;
  std::uint32_t k_blocks = 2;
  std::uint32_t tile_elems = 64;  // floats per block, a multiple of 4
  PingPongMutation mutation = PingPongMutation::none;
};

inline constexpr std::uint32_t kOrderBarrier = 1;  // ids 1 and 2 (0 is __syncthreads's)

template <class P, int Stages>
MBCHECK_HD std::uint32_t pingpong_smem_bytes(const PingPongParams& p) {
  return barrier_bytes<P>(2 * Stages) + Stages * p.tile_elems * static_cast<std::uint32_t>(sizeof(float));
}

template <class P, int Stages>
MBCHECK_HD void pingpong_kernel(const PingPongParams& p) {
  using M = PingPongMutation;
  auto* bars = reinterpret_cast<typename P::Barrier*>(P::shared_memory());
  auto* stages = reinterpret_cast<float*>(P::shared_memory() + barrier_bytes<P>(2 * Stages));
  auto full = [&](std::uint32_t s) { return Mbarrier<P>(bars[s]); };
  auto empty = [&](std::uint32_t s) { return Mbarrier<P>(bars[Stages + s]); };
  const std::uint32_t bytes = p.tile_elems * static_cast<std::uint32_t>(sizeof(float));
  const std::uint32_t me = P::thread_idx(), ws = P::warp_size();
  if (me == 0) {
    for (int s = 0; s < Stages; ++s) {
      P::label(bars[s], "full", s);
      P::label(bars[Stages + s], "empty", s);
      full(s).init(1);
      empty(s).init(p.group_threads);
      label_memory<P>(stages + s * p.tile_elems, p.tile_elems, "stage", s);
    }
  }
  P::sync_threads();
  if (me < ws) {  // the producer warp: one lane streams every block of every tile
    if (me != 0) return;
    PipelineStateBit<Stages> st(p.mutation == M::producer_start_bit_0 ? 0u : 1u);
    for (std::uint32_t b = 0; b < p.tiles * p.k_blocks; ++b, ++st) {
      empty(st.index()).wait_parity(st.phase());
      full(st.index()).arrive_expect_tx(bytes);
      P::cp_async_bulk_global_to_shared(stages + st.index() * p.tile_elems, p.src + std::size_t{b} * p.tile_elems,
                                        bytes, full(st.index()).raw());
    }
    return;
  }
  const std::uint32_t g = (me - ws) / p.group_threads, lane = (me - ws) % p.group_threads;
  const std::uint32_t order_threads =
      p.mutation == M::order_count_mismatch && g == 1 ? p.group_threads : 2 * p.group_threads;
  const NamedBarrier<P> my_turn(order_threads, kOrderBarrier + g), their_turn(order_threads, kOrderBarrier + 1 - g);
  PipelineStateBit<Stages> st(0u);
  if (p.mutation == M::idle_group_returns && g >= p.tiles) return;
  if (g == 1) {
    st.advance(p.k_blocks);  // tile 0 is group 0's
    their_turn.arrive();     // group 0 goes first
  }
  for (std::uint32_t t = g; t < p.tiles; t += 2) {
    if (!(p.mutation == M::no_order && g == 0)) my_turn.sync();
    if (p.mutation == M::double_arrive && g == 1 && t == 1) their_turn.arrive();
    float sum = 0;
    for (std::uint32_t k = 0; k < p.k_blocks; ++k, ++st) {
      full(st.index()).wait_parity(st.phase());
      const float* block = stages + st.index() * p.tile_elems;
      for (std::uint32_t i = lane; i < p.tile_elems; i += p.group_threads) sum += P::load(block + i);
      P::fence_proxy_async_shared_cta();  // generic reads before the next bulk copy's writes
      empty(st.index()).arrive();
    }
    their_turn.arrive();
    st.advance(p.k_blocks);  // the other group's tile
    P::store(p.out + std::size_t{t} * p.group_threads + lane, sum);
  }
}

}  // namespace mbcheck
