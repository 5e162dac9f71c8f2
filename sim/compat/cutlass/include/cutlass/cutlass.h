// cutlass/cutlass.h on the host: CUTLASS's own header, with the warp and lane queries it answers
// with 0 off the GPU replaced by the calling thread's (the warp index through shfl.sync, as
// CUTLASS computes it on the device, so that a warp's lanes agree on it).
#pragma once

#include "cutlass/detail/helper_macros.hpp"
#include "mbcheck/cutlass_host/thread_identity.hpp"

#define thread0 cutlass_original_thread0
#define canonical_lane_idx cutlass_original_canonical_lane_idx
#define canonical_warp_idx_sync cutlass_original_canonical_warp_idx_sync
#define canonical_warp_idx cutlass_original_canonical_warp_idx
#define canonical_warp_group_idx cutlass_original_canonical_warp_group_idx
#include_next <cutlass/cutlass.h>
#undef thread0
#undef canonical_lane_idx
#undef canonical_warp_idx_sync
#undef canonical_warp_idx
#undef canonical_warp_group_idx

namespace cutlass {

inline bool thread0() {
  const uint3 t = ::mbcheck::cutlass_host::thread_index(), b = ::mbcheck::cutlass_host::block_index();
  return !t.x && !t.y && !t.z && !b.x && !b.y && !b.z;
}
inline int canonical_lane_idx() { return static_cast<int>(::mbcheck::sim::HostPlatform::lane_idx()); }
inline int canonical_warp_idx_sync(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  using P = ::mbcheck::sim::HostPlatform;
  return static_cast<int>(P::shfl_sync_idx(0xffffffffu, P::thread_idx() / NumThreadsPerWarp, 0, site));
}
inline int canonical_warp_idx() {
  return static_cast<int>(::mbcheck::sim::HostPlatform::thread_idx() / NumThreadsPerWarp);
}
inline int canonical_warp_group_idx(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  using P = ::mbcheck::sim::HostPlatform;
  return static_cast<int>(P::shfl_sync_idx(0xffffffffu, P::thread_idx() / NumThreadsPerWarpGroup, 0, site));
}

}  // namespace cutlass
