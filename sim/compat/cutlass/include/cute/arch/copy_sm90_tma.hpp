// cute/arch/copy_sm90_tma.hpp on the host: CUTLASS's own header (its tensor-map TMA atoms are
// not modelled: off the GPU they do nothing), with the non-tensor bulk copies and the TMA store
// group instructions under their names as the Platform calls of the same PTX.
#pragma once

#include <cute/config.hpp>
#include <cute/arch/config.hpp>
#include <cute/arch/copy.hpp>
#include "cutlass/arch/synclog.hpp"

#include "mbcheck/cutlass_host/thread_identity.hpp"

#define SM90_BULK_COPY_G2S cutlass_original_SM90_BULK_COPY_G2S
#define SM90_BULK_COPY_S2G cutlass_original_SM90_BULK_COPY_S2G
#define tma_store_fence cutlass_original_tma_store_fence
#define tma_store_arrive cutlass_original_tma_store_arrive
#define tma_store_wait cutlass_original_tma_store_wait
#include_next <cute/arch/copy_sm90_tma.hpp>
#undef SM90_BULK_COPY_G2S
#undef SM90_BULK_COPY_S2G
#undef tma_store_fence
#undef tma_store_arrive
#undef tma_store_wait

namespace cute {

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
struct SM90_BULK_COPY_G2S {
  static void copy(void const* gmem_ptr, uint64_t* mbar_ptr, void* smem_ptr, int32_t load_bytes,
                   ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
    using namespace ::mbcheck::cutlass_host;
    const auto bytes = static_cast<uint32_t>(load_bytes);
    settle_held_wait(site);  // a refill: a held acquire before it is performed
    ::mbcheck::sim::HostPlatform::cp_async_bulk_global_to_shared(
        shared_address(smem_ptr, bytes, "cp.async.bulk destination"), gmem_ptr, bytes, barrier_state(mbar_ptr, site),
        site);
  }
  struct PREFETCH {
    static void copy(void const*, int32_t) {}  // cp.async.bulk.prefetch.L2: no effect on the protocol
  };
};

// cp.async.bulk.global.shared::cta.bulk_group
struct SM90_BULK_COPY_S2G {
  static void copy(void const* smem_ptr, void* gmem_ptr, int32_t store_bytes,
                   ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
    const auto bytes = static_cast<uint32_t>(store_bytes);
    ::mbcheck::sim::HostPlatform::cp_async_bulk_shared_to_global(
        gmem_ptr, ::mbcheck::cutlass_host::shared_address(smem_ptr, bytes, "cp.async.bulk source"), bytes, site);
  }
};

// fence.proxy.async.shared::cta
inline void tma_store_fence(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::fence_proxy_async_shared_cta(site);
}
// cp.async.bulk.commit_group
inline void tma_store_arrive(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::cp_async_bulk_commit_group(site);
}
// cp.async.bulk.wait_group.read Count
template <int Count>
inline void tma_store_wait(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  ::mbcheck::sim::HostPlatform::cp_async_bulk_wait_group_read(Count, site);
}

}  // namespace cute
