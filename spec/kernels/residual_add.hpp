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

// Deliberate protocol bugs, for the checker to find (the bug zoo grows in later issues).
enum class ResidualAddMutation : std::uint32_t {
  none = 0,
  consumer_count_plus_one,  // empty barriers expect one arrival more than there are consumers
};

struct ResidualAddParams {
  const float* accum = nullptr;  // [num_elems]
  const float* c = nullptr;      // [num_elems], 16-byte aligned
  float* d = nullptr;            // [num_elems]
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

// The CPU reference: the same fused multiply-add the kernel performs, so results are
// bit-exact on both backends.
inline void residual_add_reference(const float* accum, const float* c, float beta, float* d,
                                   std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) d[i] = fmaf(beta, c[i], accum[i]);
}

template <class P, int Stages>
MBCHECK_HD void residual_add_kernel(const ResidualAddParams& p) {
  unsigned char* smem = P::shared_memory();
  auto* bars = reinterpret_cast<typename P::Barrier*>(smem);
  auto* stage_bufs = reinterpret_cast<float*>(smem + barrier_bytes<P>(2 * Stages));
  EpiLoadPipeline<P, Stages> pipe(bars);

  const std::uint32_t consumers = p.store_warps * P::warp_size();
  if (P::thread_idx() == 0) {
    std::uint32_t consumer_arrivals = consumers;
    if (p.mutation == ResidualAddMutation::consumer_count_plus_one) consumer_arrivals += 1;
    pipe.init_barriers(1, consumer_arrivals);
  }
  P::sync_threads();

  const std::uint32_t tiles = residual_add_num_tiles(p);
  const std::uint32_t warp = P::warp_idx();
  if (warp == 0) {
    // Epilogue-load warp: the elected lane runs the producer loop alone (as CUTLASS's
    // producer does). If every lane followed the pipeline, lane 0 could run two phases ahead
    // of a lagging lane, whose parity wait on empty[] would then alias: PTX does not keep
    // the lanes of a warp converged.
    if (P::elect_one()) {
      for (std::uint32_t t = P::block_idx(); t < tiles; t += P::grid_dim()) {
        auto stage = pipe.produce();
        const std::uint32_t first = t * p.tile_elems;
        const std::uint32_t elems = p.num_elems - first < p.tile_elems ? p.num_elems - first : p.tile_elems;
        const std::uint32_t bytes = elems * static_cast<std::uint32_t>(sizeof(float));
        stage.mbar().arrive_expect_tx(bytes);
        P::cp_async_bulk_global_to_shared(stage_bufs + stage.index() * p.tile_elems, p.c + first, bytes,
                                          stage.mbar().raw());
      }
    }
  } else if (warp <= p.store_warps) {
    // Epilogue-store warps: each thread handles every consumers-th element of the tile.
    const std::uint32_t me = P::thread_idx() - P::warp_size();
    for (std::uint32_t t = P::block_idx(); t < tiles; t += P::grid_dim()) {
      auto stage = pipe.consume();
      const float* tile = stage_bufs + stage.index() * p.tile_elems;
      const std::uint32_t first = t * p.tile_elems;
      const std::uint32_t elems = p.num_elems - first < p.tile_elems ? p.num_elems - first : p.tile_elems;
      for (std::uint32_t i = me; i < elems; i += consumers) {
        const float c = P::load(tile + i);
        const float acc = P::load(p.accum + first + i);
        P::store(p.d + first + i, fmaf(p.beta, c, acc));
      }
    }
  }
}

}  // namespace mbcheck
