// A TMA-store epilogue: every thread writes its elements of a shared-memory tile with
// ordinary stores, one thread stores the tile to global memory with a bulk copy (the async
// proxy), and the tile is reused for the next round once that copy has read it.
//
// The two rules it exercises: each writer must run fence.proxy.async between its ordinary
// stores and the barrier after which the async proxy reads them; and the tile may be
// rewritten only after cp.async.bulk.wait_group.read says the copy has read it.
#pragma once

#include "spec/platform.hpp"

namespace mbcheck {

enum class TmaStoreMutation : std::uint32_t {
  none = 0,
  missing_proxy_fence,  // writers skip fence.proxy.async: race (async read of unfenced stores)
  skip_read_wait,       // the tile is rewritten before the store has read it: race
};

struct TmaStoreParams {
  float* out = nullptr;          // [rounds * tile_elems], 16-byte aligned
  std::uint32_t tile_elems = 0;  // multiple of 4
  std::uint32_t rounds = 1;
  TmaStoreMutation mutation = TmaStoreMutation::none;
};

// The value element i of round r holds: what the host checks `out` against.
MBCHECK_HD inline float tma_store_value(std::uint32_t round, std::uint32_t i) {
  return static_cast<float>(round * 1000003u + i);
}

template <class P>
MBCHECK_HD void tma_store_kernel(const TmaStoreParams& p) {
  auto* tile = reinterpret_cast<float*>(P::shared_memory());
  const std::uint32_t me = P::thread_idx();
  for (std::uint32_t r = 0; r < p.rounds; ++r) {
    for (std::uint32_t i = me; i < p.tile_elems; i += P::block_dim()) P::store(tile + i, tma_store_value(r, i));
    if (p.mutation != TmaStoreMutation::missing_proxy_fence) P::fence_proxy_async_shared_cta();
    P::sync_threads();
    if (me == 0) {
      P::cp_async_bulk_shared_to_global(p.out + r * p.tile_elems, tile,
                                        p.tile_elems * static_cast<std::uint32_t>(sizeof(float)));
      P::cp_async_bulk_commit_group();
      if (p.mutation != TmaStoreMutation::skip_read_wait) P::cp_async_bulk_wait_group_read0();
    }
    P::sync_threads();
  }
}

}  // namespace mbcheck
