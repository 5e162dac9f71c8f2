// cute/arch/mma_sm90_gmma.hpp on the host: CUTLASS's own header (its GMMA atoms are not
// modelled), with the warp-group fences of wgmma under their names as the Platform's
// warp-group collectives (each a rendezvous of the warp group, as the .sync.aligned PTX is).
#pragma once

#include <cute/config.hpp>
#include "cutlass/arch/synclog.hpp"

#include "sim/host_platform.hpp"

#define warpgroup_arrive cutlass_original_warpgroup_arrive
#define warpgroup_wait cutlass_original_warpgroup_wait
#define warpgroup_commit_batch cutlass_original_warpgroup_commit_batch
#include_next <cute/arch/mma_sm90_gmma.hpp>
#undef warpgroup_arrive
#undef warpgroup_wait
#undef warpgroup_commit_batch

namespace cute {

// wgmma.fence.sync.aligned
inline void warpgroup_arrive(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::wgmma_fence(site);
}
// wgmma.wait_group.sync.aligned N
template <int N>
inline void warpgroup_wait(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::wgmma_wait_group(N, site);
}
// wgmma.commit_group.sync.aligned
inline void warpgroup_commit_batch(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::wgmma_commit_group(site);
}

}  // namespace cute
