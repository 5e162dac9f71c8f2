// cute/arch/cluster_sm90.hpp on the host: CUTLASS's own header is compiled under other names
// (its host fallbacks answer as if there were one thread), and these take its names, each the
// Platform call of the PTX instruction the original issues.
#pragma once

#include <cute/config.hpp>
#include <cute/numeric/numeric_types.hpp>

#include "mbcheck/cutlass_host/faults.hpp"
#include "mbcheck/cutlass_host/thread_identity.hpp"

#define cluster_arrive_relaxed cutlass_original_cluster_arrive_relaxed
#define cluster_arrive cutlass_original_cluster_arrive
#define cluster_wait cutlass_original_cluster_wait
#define cluster_sync cutlass_original_cluster_sync
#define cluster_grid_dims cutlass_original_cluster_grid_dims
#define cluster_id_in_grid cutlass_original_cluster_id_in_grid
#define block_id_in_cluster cutlass_original_block_id_in_cluster
#define cluster_shape cutlass_original_cluster_shape
#define block_rank_in_cluster cutlass_original_block_rank_in_cluster
#define set_block_rank cutlass_original_set_block_rank
#define elect_one_sync cutlass_original_elect_one_sync
#define elect_one_leader_sync cutlass_original_elect_one_leader_sync
#define store_shared_remote cutlass_original_store_shared_remote
#include_next <cute/arch/cluster_sm90.hpp>
#undef cluster_arrive_relaxed
#undef cluster_arrive
#undef cluster_wait
#undef cluster_sync
#undef cluster_grid_dims
#undef cluster_id_in_grid
#undef block_id_in_cluster
#undef cluster_shape
#undef block_rank_in_cluster
#undef set_block_rank
#undef elect_one_sync
#undef elect_one_leader_sync
#undef store_shared_remote

namespace cute {

using HostPlatform = ::mbcheck::sim::HostPlatform;

// barrier.cluster.arrive.relaxed.aligned / barrier.cluster.arrive.aligned (.release) /
// barrier.cluster.wait.aligned (.acquire)
inline void cluster_arrive_relaxed(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  HostPlatform::barrier_cluster_arrive_relaxed_aligned(site);
}
inline void cluster_arrive(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::cutlass_host::drop_held_wait();
  if (::mbcheck::cutlass_host::cluster_arrive_issued()) HostPlatform::barrier_cluster_arrive_aligned(site);
}
inline void cluster_wait(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  if (::mbcheck::cutlass_host::cluster_wait_issued()) HostPlatform::barrier_cluster_wait_aligned(site);
}
inline void cluster_sync(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  cluster_arrive(site);
  cluster_wait(site);
}

// %nclusterid, %clusterid, %cluster_ctaid, %cluster_nctaid, %cluster_ctarank
inline dim3 cluster_grid_dims() {
  const auto& g = ::mbcheck::cutlass_host::current_geometry();
  return {g.grid.x / g.cluster.x, g.grid.y / g.cluster.y, g.grid.z / g.cluster.z};
}
inline dim3 cluster_id_in_grid() {
  const auto& g = ::mbcheck::cutlass_host::current_geometry();
  const uint3 b = ::mbcheck::cutlass_host::block_index();
  return {b.x / g.cluster.x, b.y / g.cluster.y, b.z / g.cluster.z};
}
inline dim3 block_id_in_cluster() { return {HostPlatform::cluster_ctaid_x(), HostPlatform::cluster_ctaid_y(), 0}; }
inline dim3 cluster_shape() { return ::mbcheck::cutlass_host::current_geometry().cluster; }
inline uint32_t block_rank_in_cluster() { return HostPlatform::cluster_ctarank(); }

// mapa.shared::cluster.u32: a shared::cluster address names its CTA above the 24 bits a CTA's
// shared memory needs (rank + 1: rank 0 is told apart from a shared::cta address).
inline uint32_t set_block_rank(uint32_t smem_addr, uint32_t rank) {
  return (smem_addr & 0x00ffffffu) | ((rank + 1u) << 24);
}

// elect.sync over the full warp: a rendezvous of its lanes, true in one.
inline uint32_t elect_one_sync(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  return HostPlatform::elect_sync(0xffffffffu, site) ? 1u : 0u;
}
inline ElectOneLaneIdReturnType elect_one_leader_sync(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  return {elect_one_sync(site), 0u};
}

// st.async.shared::cluster.mbarrier::complete_tx::bytes.u32: the store to the peer's shared
// memory, then its complete_tx of 4 bytes on the peer's barrier (the store is performed at
// once: its asynchrony is not modelled).
inline void store_shared_remote(uint32_t value, uint32_t smem_addr, uint32_t mbarrier_addr, uint32_t dst_cta_rank,
                                ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  using ::mbcheck::cutlass_host::barrier_state;
  const void* data = ::mbcheck::cutlass_host::window_address(smem_addr & 0x00ffffffu);
  const auto* bar = static_cast<const uint64_t*>(::mbcheck::cutlass_host::window_address(mbarrier_addr & 0x00ffffffu));
  auto* local = reinterpret_cast<uint32_t*>(::mbcheck::cutlass_host::shared_address(data, 4, "st.async"));
  HostPlatform::store(HostPlatform::map_shared_rank(local, dst_cta_rank, site), value, site);
  HostPlatform::mbarrier_complete_tx_cluster(barrier_state(bar, site), dst_cta_rank, 4, site);
}

}  // namespace cute
