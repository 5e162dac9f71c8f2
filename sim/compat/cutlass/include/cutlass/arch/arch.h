// cutlass/arch/arch.h on the host: CUTLASS's own header, plus the thread queries it defines
// only for the device (%laneid and %smid): the lane is the calling thread's; the SM is its
// CTA's number (each CTA of a host launch runs on an SM of its own).
#pragma once

#include_next <cutlass/arch/arch.h>

#include "mbcheck/cutlass_host/thread_identity.hpp"

namespace cutlass::arch {

// mov.u32 %r, %laneid
inline int LaneId() { return static_cast<int>(::mbcheck::sim::HostPlatform::lane_idx()); }
// mov.u32 %r, %smid
inline int SmId() { return static_cast<int>(::mbcheck::sim::HostPlatform::block_idx()); }

}  // namespace cutlass::arch
