// The residual-add epilogue, D = accum + beta * C, as a template over the Platform P.
//
// One CTA = 1 epilogue-load warp (warp 0) + `store_warps` epilogue-store warps. The load
// warp's elected lane walks this CTA's tiles (a persistent grid: tile = block_idx, +=
// grid_dim); for each it takes a stage with produce(), arms full[stage] with the tile's byte
// count and issues one bulk copy of the C tile into the stage buffer (complete_tx signals
// full[stage] when the bytes land). The store warps take the stage with consume(), compute
// their elements of D and release the stage (128 arrivals on empty[stage] by default).
//
// Shared memory: 2*Stages barriers, then Stages buffers of tile_elems floats.
#pragma once

#include <math.h>

#include "spec/pipeline.hpp"

namespace mbcheck {

// Deliberate protocol bugs (the bug zoo), for the checker to find. Each comment says what
// goes wrong and what a checker should report.
enum class ResidualAddMutation : std::uint32_t {
  none = 0,
  consumer_count_plus_one,    // empty barriers expect one arrival too many: deadlock
  producer_start_phase_0,     // producer waits for phase 0 of empty, not -1: deadlock
  producer_skips_empty_wait,  // producer refills a stage once its last copy landed, without
                              // waiting for the consumers to release it: race
  release_before_read,        // consumers arrive on empty before reading the stage: race
  tx_overcount,               // expect_tx 16 bytes more than the copy delivers: deadlock
  tx_undercount_split,        // tile loaded by two copies, expect_tx counts one: race
  single_stage_wrong_parity,  // (1 stage) consumers wait for the opposite parity: aliasing
  double_arrive,              // one consumer thread arrives twice per tile: misuse or race
  explicit_without_signal,    // consume_explicit and nobody signals empty: deadlock
  use_before_init,            // no sync_threads between init and use: misuse
  reinit_live,                // a second thread initialises the live barriers again: misuse
  all_lanes_produce,          // every lane of the load warp follows the pipeline: a lane can
                              // fall two phases behind the elected one: aliasing
  consumer_do_while,          // the store warps' tile loop tests its bound after the first pass
                              // (right while every CTA has a tile): a CTA with none waits for a
                              // fill that never comes: deadlock
  no_read_fence,              // consumers release the stage they read with no fence.proxy.async
                              // before the release: a race under --proxy-fences strict (PTX's
                              // reading), none under writes
};

struct ResidualAddParams {
  const float* accum = nullptr;  // [num_elems], 16-byte aligned
  const float* c = nullptr;      // [num_elems], 16-byte aligned
  float* d = nullptr;            // [num_elems], 16-byte aligned
  float beta = 1.0f;
  std::uint32_t num_elems = 0;   // multiple of 4 (bulk copies move multiples of 16 bytes)
  std::uint32_t tile_elems = 0;  // multiple of 4
  std::uint32_t store_warps = 4;
  ResidualAddMutation mutation = ResidualAddMutation::none;
};

MBCHECK_HD inline std::uint32_t residual_add_num_tiles(const ResidualAddParams& p) {
  return (p.num_elems + p.tile_elems - 1) / p.tile_elems;
}

template <class P, int Stages>
MBCHECK_HD std::uint32_t residual_add_smem_bytes(const ResidualAddParams& p) {
  return barrier_bytes<P>(2 * Stages) + Stages * p.tile_elems * static_cast<std::uint32_t>(sizeof(float));
}

// Four floats moved as one 16-byte access (LDG.128/LDS.128/STG.128 on the device): the
// store warps are memory-bound, and 16-byte accesses need a quarter of the instructions.
struct alignas(16) ResidualAddVec {
  float x, y, z, w;
};

// Vectors each store thread loads before it stores any: independent loads in flight hide
// global-memory latency (stores may alias the loads, so the compiler cannot batch them).
inline constexpr std::uint32_t kResidualAddVecsPerBatch = 4;

MBCHECK_HD inline ResidualAddVec residual_add_vec(float beta, const ResidualAddVec& c, const ResidualAddVec& acc) {
  return {fmaf(beta, c.x, acc.x), fmaf(beta, c.y, acc.y), fmaf(beta, c.z, acc.z), fmaf(beta, c.w, acc.w)};
}

// The CPU reference: the same fused multiply-add the kernel performs, so results are
// bit-exact on both backends.
inline void residual_add_reference(const float* accum, const float* c, float beta, float* d, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) d[i] = fmaf(beta, c[i], accum[i]);
}

// One store thread's share of one tile: every consumers-th 16-byte vector, batched.
template <class P>
MBCHECK_HD void residual_add_store_tile(const ResidualAddParams& p, const float* tile_buf, std::uint32_t t,
                                        std::uint32_t me, std::uint32_t consumers) {
  // Each thread handles every consumers-th 16-byte vector of the tile,
  // kResidualAddVecsPerBatch of them at a time (all loads of a batch, then its stores).
  using Vec = ResidualAddVec;
  constexpr std::uint32_t kBatch = kResidualAddVecsPerBatch;
  const auto* tile = reinterpret_cast<const Vec*>(tile_buf);
  const std::uint32_t first = t * p.tile_elems;
  const std::uint32_t elems = p.num_elems - first < p.tile_elems ? p.num_elems - first : p.tile_elems;
  const std::uint32_t vecs = elems / 4;
  const auto* accum = reinterpret_cast<const Vec*>(p.accum + first);
  auto* d = reinterpret_cast<Vec*>(p.d + first);
  for (std::uint32_t base = me; base < vecs; base += consumers * kBatch) {
    Vec c[kBatch];
    Vec acc[kBatch];
    for (std::uint32_t u = 0; u < kBatch; ++u) {
      const std::uint32_t v = base + u * consumers;
      if (v < vecs) {
        c[u] = P::load(tile + v);
        acc[u] = P::load(accum + v);
      }
    }
    for (std::uint32_t u = 0; u < kBatch; ++u) {
      const std::uint32_t v = base + u * consumers;
      if (v < vecs) P::store(d + v, residual_add_vec(p.beta, c[u], acc[u]));
    }
  }
}

template <class P, int Stages>
MBCHECK_HD void residual_add_kernel(const ResidualAddParams& p) {
  using M = ResidualAddMutation;
  unsigned char* smem = P::shared_memory();
  auto* bars = reinterpret_cast<typename P::Barrier*>(smem);
  auto* stage_bufs = reinterpret_cast<float*>(smem + barrier_bytes<P>(2 * Stages));
  EpiLoadPipeline<P, Stages> pipe(bars, p.mutation == M::producer_start_phase_0 ? 0 : -1,
                                  p.mutation == M::single_stage_wrong_parity ? 1 : 0);

  if (P::thread_idx() == 0) {  // names for reports (host only)
    for (int s = 0; s < Stages; ++s) label_memory<P>(stage_bufs + s * p.tile_elems, p.tile_elems, "C stage", s);
    label_memory<P>(p.d, p.num_elems, "D");
  }
  const std::uint32_t consumers = p.store_warps * P::warp_size();
  const bool second_initialiser = p.mutation == M::reinit_live && P::thread_idx() == P::warp_size();
  if (P::thread_idx() == 0 || second_initialiser)
    pipe.init_barriers(1, consumers + (p.mutation == M::consumer_count_plus_one ? 1 : 0));
  if (p.mutation != M::use_before_init) P::sync_threads();

  const std::uint32_t tiles = residual_add_num_tiles(p);
  const std::uint32_t warp = P::warp_idx();
  if (warp == 0) {
    // Epilogue-load warp: the elected lane runs the producer loop alone (as CUTLASS's
    // producer does). If every lane followed the pipeline, lane 0 could run two phases ahead
    // of a lagging lane, whose parity wait on empty[] would then alias: PTX does not keep
    // the lanes of a warp converged.
    const bool elected = P::elect_one();
    if (!elected && p.mutation != M::all_lanes_produce) return;
    for (std::uint32_t t = P::block_idx(); t < tiles; t += P::grid_dim()) {
      const std::uint32_t first = t * p.tile_elems;
      const std::uint32_t elems = p.num_elems - first < p.tile_elems ? p.num_elems - first : p.tile_elems;
      const std::uint32_t bytes = elems * static_cast<std::uint32_t>(sizeof(float));
      float* dst = stage_bufs + pipe.pipeline.producer_stage() * p.tile_elems;
      if (p.mutation == M::producer_skips_empty_wait) {
        // Waits on the wrong barrier: full[stage] (its own previous fill), not empty[stage].
        pipe.producer_mbar().wait(pipe.pipeline.producer_state().phase());
        pipe.producer_mbar().arrive_expect_tx(bytes);
        P::cp_async_bulk_global_to_shared(dst, p.c + first, bytes, pipe.producer_mbar().raw());
        pipe.producer_step();
        continue;
      }
      auto stage = pipe.produce();
      if (!elected) continue;  // all_lanes_produce: the other lanes only follow the phases
      if (p.mutation == M::tx_undercount_split && bytes >= 32) {
        const std::uint32_t half = bytes / 32 * 16;  // a multiple of 16
        stage.mbar().arrive_expect_tx(half);
        P::cp_async_bulk_global_to_shared(dst, p.c + first, half, stage.mbar().raw());
        P::cp_async_bulk_global_to_shared(dst + half / 4, p.c + first + half / 4, bytes - half, stage.mbar().raw());
        continue;
      }
      stage.mbar().arrive_expect_tx(bytes + (p.mutation == M::tx_overcount ? 16 : 0));
      P::cp_async_bulk_global_to_shared(dst, p.c + first, bytes, stage.mbar().raw());
    }
  } else if (warp <= p.store_warps) {
    // Epilogue-store warps.
    const std::uint32_t me = P::thread_idx() - P::warp_size();
    if (p.mutation == M::consumer_do_while && P::block_idx() >= tiles) {
      auto stage = pipe.consume();  // the do-while's first pass, in a CTA with no tile
    }
    for (std::uint32_t t = P::block_idx(); t < tiles; t += P::grid_dim()) {
      if (p.mutation == M::release_before_read) {
        auto stage = pipe.acquire_consumer();
        const float* tile = stage_bufs + stage.index() * p.tile_elems;
        stage.release();
        residual_add_store_tile<P>(p, tile, t, me, consumers);
      } else if (p.mutation == M::explicit_without_signal) {
        auto stage = pipe.consume_explicit();
        residual_add_store_tile<P>(p, stage_bufs + stage.index() * p.tile_elems, t, me, consumers);
      } else {
        auto stage = pipe.consume();
        residual_add_store_tile<P>(p, stage_bufs + stage.index() * p.tile_elems, t, me, consumers);
        // The stage was read with ordinary loads and the producer's next bulk copy overwrites
        // it: PTX orders a generic read before an async-proxy write only through a proxy fence,
        // here the reader's, before the release (docs/semantics.md; CUTLASS's TMA epilogues do
        // the same before consumer_release).
        if (p.mutation != M::no_read_fence) P::fence_proxy_async_shared_cta();
        if (p.mutation == M::double_arrive && me == 0) pipe.pipeline.consumer_mbar().arrive();
      }
    }
  }
}

}  // namespace mbcheck
