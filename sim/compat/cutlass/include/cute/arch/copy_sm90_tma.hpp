// cute/arch/copy_sm90_tma.hpp on the host: CUTLASS's own header, with the non-tensor bulk copies
// and the TMA store group instructions under their names as the Platform calls of the same PTX,
// and the tiled tensor-map atoms (SM90_TMA_LOAD, _MULTICAST, SM90_TMA_STORE, SM90_TMA_REDUCE_ADD,
// each rank and each dispatch struct with its PREFETCH) as the runtime's tensor copies
// (sim/runtime/host_tma.hpp). The im2col atoms stay CUTLASS's (not modelled).
#pragma once

#include <cute/config.hpp>
#include <cute/arch/config.hpp>
#include <cute/arch/copy.hpp>
#include "cutlass/arch/synclog.hpp"

#include "mbcheck/cutlass_host/thread_identity.hpp"
#include "sim/runtime/host_tma.hpp"

#define SM90_BULK_COPY_G2S cutlass_original_SM90_BULK_COPY_G2S
#define SM90_BULK_COPY_S2G cutlass_original_SM90_BULK_COPY_S2G
#define tma_store_fence cutlass_original_tma_store_fence
#define tma_store_arrive cutlass_original_tma_store_arrive
#define tma_store_wait cutlass_original_tma_store_wait
#define SM90_TMA_LOAD_1D cutlass_original_SM90_TMA_LOAD_1D
#define SM90_TMA_LOAD_2D cutlass_original_SM90_TMA_LOAD_2D
#define SM90_TMA_LOAD_3D cutlass_original_SM90_TMA_LOAD_3D
#define SM90_TMA_LOAD_4D cutlass_original_SM90_TMA_LOAD_4D
#define SM90_TMA_LOAD_5D cutlass_original_SM90_TMA_LOAD_5D
#define SM90_TMA_LOAD cutlass_original_SM90_TMA_LOAD
#define SM90_TMA_LOAD_MULTICAST_1D cutlass_original_SM90_TMA_LOAD_MULTICAST_1D
#define SM90_TMA_LOAD_MULTICAST_2D cutlass_original_SM90_TMA_LOAD_MULTICAST_2D
#define SM90_TMA_LOAD_MULTICAST_3D cutlass_original_SM90_TMA_LOAD_MULTICAST_3D
#define SM90_TMA_LOAD_MULTICAST_4D cutlass_original_SM90_TMA_LOAD_MULTICAST_4D
#define SM90_TMA_LOAD_MULTICAST_5D cutlass_original_SM90_TMA_LOAD_MULTICAST_5D
#define SM90_TMA_LOAD_MULTICAST cutlass_original_SM90_TMA_LOAD_MULTICAST
#define SM90_TMA_STORE_1D cutlass_original_SM90_TMA_STORE_1D
#define SM90_TMA_STORE_2D cutlass_original_SM90_TMA_STORE_2D
#define SM90_TMA_STORE_3D cutlass_original_SM90_TMA_STORE_3D
#define SM90_TMA_STORE_4D cutlass_original_SM90_TMA_STORE_4D
#define SM90_TMA_STORE_5D cutlass_original_SM90_TMA_STORE_5D
#define SM90_TMA_STORE cutlass_original_SM90_TMA_STORE
#define SM90_TMA_REDUCE_ADD_1D cutlass_original_SM90_TMA_REDUCE_ADD_1D
#define SM90_TMA_REDUCE_ADD_2D cutlass_original_SM90_TMA_REDUCE_ADD_2D
#define SM90_TMA_REDUCE_ADD_3D cutlass_original_SM90_TMA_REDUCE_ADD_3D
#define SM90_TMA_REDUCE_ADD_4D cutlass_original_SM90_TMA_REDUCE_ADD_4D
#define SM90_TMA_REDUCE_ADD_5D cutlass_original_SM90_TMA_REDUCE_ADD_5D
#define SM90_TMA_REDUCE_ADD cutlass_original_SM90_TMA_REDUCE_ADD
#include_next <cute/arch/copy_sm90_tma.hpp>
#undef SM90_BULK_COPY_G2S
#undef SM90_BULK_COPY_S2G
#undef tma_store_fence
#undef tma_store_arrive
#undef tma_store_wait
#undef SM90_TMA_LOAD_1D
#undef SM90_TMA_LOAD_2D
#undef SM90_TMA_LOAD_3D
#undef SM90_TMA_LOAD_4D
#undef SM90_TMA_LOAD_5D
#undef SM90_TMA_LOAD
#undef SM90_TMA_LOAD_MULTICAST_1D
#undef SM90_TMA_LOAD_MULTICAST_2D
#undef SM90_TMA_LOAD_MULTICAST_3D
#undef SM90_TMA_LOAD_MULTICAST_4D
#undef SM90_TMA_LOAD_MULTICAST_5D
#undef SM90_TMA_LOAD_MULTICAST
#undef SM90_TMA_STORE_1D
#undef SM90_TMA_STORE_2D
#undef SM90_TMA_STORE_3D
#undef SM90_TMA_STORE_4D
#undef SM90_TMA_STORE_5D
#undef SM90_TMA_STORE
#undef SM90_TMA_REDUCE_ADD_1D
#undef SM90_TMA_REDUCE_ADD_2D
#undef SM90_TMA_REDUCE_ADD_3D
#undef SM90_TMA_REDUCE_ADD_4D
#undef SM90_TMA_REDUCE_ADD_5D
#undef SM90_TMA_REDUCE_ADD

namespace mbcheck::cutlass_host::tma_atoms {

// The descriptor is the CUtensorMap in the kernel's Params (host memory here); shared addresses
// are window offsets, made the running CTA's by shared_address (thread_identity.hpp).
inline void load(void const* desc, uint64_t* mbar, void* smem, const int32_t* crd, uint16_t mask, bool multicast,
                 CallSite site) {
  const std::uint32_t bytes = ::mbcheck::sim::HostTma::box_bytes(desc);
  settle_held_wait(site);  // a refill: a held acquire before it is performed
  unsigned char* dst = shared_address(smem, bytes ? bytes : 16, "cp.async.bulk.tensor destination");
  ::mbcheck::sim::MbarrierState& bar = barrier_state(mbar, site);
  if (multicast)
    ::mbcheck::sim::HostTma::load_multicast(desc, crd, dst, bar, mask, site);
  else
    ::mbcheck::sim::HostTma::load(desc, crd, dst, bar, site);
}
inline void store(void const* desc, void const* smem, const int32_t* crd, bool reduce, CallSite site) {
  const std::uint32_t bytes = ::mbcheck::sim::HostTma::box_bytes(desc);
  unsigned char* src = shared_address(smem, bytes ? bytes : 16, "cp.async.bulk.tensor source");
  if (reduce)
    ::mbcheck::sim::HostTma::reduce_add(desc, crd, src, site);
  else
    ::mbcheck::sim::HostTma::store(desc, crd, src, site);
}

}  // namespace mbcheck::cutlass_host::tma_atoms

namespace cute {

#define MBCHECK_TMA_CRD_PARAMS_1 int32_t const& crd0
#define MBCHECK_TMA_CRD_PARAMS_2 MBCHECK_TMA_CRD_PARAMS_1, int32_t const& crd1
#define MBCHECK_TMA_CRD_PARAMS_3 MBCHECK_TMA_CRD_PARAMS_2, int32_t const& crd2
#define MBCHECK_TMA_CRD_PARAMS_4 MBCHECK_TMA_CRD_PARAMS_3, int32_t const& crd3
#define MBCHECK_TMA_CRD_PARAMS_5 MBCHECK_TMA_CRD_PARAMS_4, int32_t const& crd4
#define MBCHECK_TMA_CRD_ARGS_1 crd0
#define MBCHECK_TMA_CRD_ARGS_2 MBCHECK_TMA_CRD_ARGS_1, crd1
#define MBCHECK_TMA_CRD_ARGS_3 MBCHECK_TMA_CRD_ARGS_2, crd2
#define MBCHECK_TMA_CRD_ARGS_4 MBCHECK_TMA_CRD_ARGS_3, crd3
#define MBCHECK_TMA_CRD_ARGS_5 MBCHECK_TMA_CRD_ARGS_4, crd4

// One rank N of each atom: cp.async.bulk.tensor.Nd (the dispatch structs below pick by arity).
#define MBCHECK_TMA_RANK(N)                                                                                          \
  struct SM90_TMA_LOAD_##N##D {                                                                                      \
    static void copy(void const* desc_ptr, uint64_t* mbar_ptr, uint64_t, void* smem_ptr, MBCHECK_TMA_CRD_PARAMS_##N, \
                     ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {                                    \
      const int32_t crd[] = {MBCHECK_TMA_CRD_ARGS_##N};                                                              \
      ::mbcheck::cutlass_host::tma_atoms::load(desc_ptr, mbar_ptr, smem_ptr, crd, 0, false, site);                   \
    }                                                                                                                \
    struct PREFETCH {                                                                                                \
      static void copy(void const* desc_ptr, MBCHECK_TMA_CRD_PARAMS_##N,                                             \
                       ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {                                  \
        const int32_t crd[] = {MBCHECK_TMA_CRD_ARGS_##N};                                                            \
        ::mbcheck::sim::HostTma::prefetch(desc_ptr, crd, site);                                                      \
      }                                                                                                              \
    };                                                                                                               \
  };                                                                                                                 \
  struct SM90_TMA_LOAD_MULTICAST_##N##D {                                                                            \
    static void copy(void const* desc_ptr, uint64_t* mbar_ptr, uint16_t multicast_mask, uint64_t, void* smem_ptr,    \
                     MBCHECK_TMA_CRD_PARAMS_##N, ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {        \
      const int32_t crd[] = {MBCHECK_TMA_CRD_ARGS_##N};                                                              \
      ::mbcheck::cutlass_host::tma_atoms::load(desc_ptr, mbar_ptr, smem_ptr, crd, multicast_mask, true, site);       \
    }                                                                                                                \
  };                                                                                                                 \
  struct SM90_TMA_STORE_##N##D {                                                                                     \
    static void copy(void const* desc_ptr, void const* smem_ptr, MBCHECK_TMA_CRD_PARAMS_##N,                         \
                     ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {                                    \
      const int32_t crd[] = {MBCHECK_TMA_CRD_ARGS_##N};                                                              \
      ::mbcheck::cutlass_host::tma_atoms::store(desc_ptr, smem_ptr, crd, false, site);                               \
    }                                                                                                                \
  };                                                                                                                 \
  struct SM90_TMA_REDUCE_ADD_##N##D {                                                                                \
    static void copy(void const* desc_ptr, void const* smem_ptr, MBCHECK_TMA_CRD_PARAMS_##N,                         \
                     ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {                                    \
      const int32_t crd[] = {MBCHECK_TMA_CRD_ARGS_##N};                                                              \
      ::mbcheck::cutlass_host::tma_atoms::store(desc_ptr, smem_ptr, crd, true, site);                                \
    }                                                                                                                \
  };
MBCHECK_TMA_RANK(1)
MBCHECK_TMA_RANK(2)
MBCHECK_TMA_RANK(3)
MBCHECK_TMA_RANK(4)
MBCHECK_TMA_RANK(5)
#undef MBCHECK_TMA_RANK

// The dispatch structs: copy(..., crd0..crdN-1) is SM90_TMA_*_Nd::copy, as CUTLASS's.
namespace mbcheck_tma_detail {
template <class... C>
inline constexpr bool coords = sizeof...(C) >= 1 && sizeof...(C) <= 5 && (std::is_convertible_v<C, int32_t> && ...);
}  // namespace mbcheck_tma_detail

struct SM90_TMA_LOAD {
  template <class... C, class = std::enable_if_t<mbcheck_tma_detail::coords<C...>>>
  static void copy(void const* desc_ptr, uint64_t* mbar_ptr, uint64_t cache_hint, void* smem_ptr, C const&... crd) {
    const int32_t c[] = {int32_t(crd)...};
    ::mbcheck::cutlass_host::tma_atoms::load(desc_ptr, mbar_ptr, smem_ptr, c, 0, false, ::mbcheck::CallSite::current());
    (void)cache_hint;
  }
  struct PREFETCH {
    template <class... C, class = std::enable_if_t<mbcheck_tma_detail::coords<C...>>>
    static void copy(void const* desc_ptr, C const&... crd) {
      const int32_t c[] = {int32_t(crd)...};
      ::mbcheck::sim::HostTma::prefetch(desc_ptr, c);
    }
  };
};

struct SM90_TMA_LOAD_MULTICAST {
  template <class... C, class = std::enable_if_t<mbcheck_tma_detail::coords<C...>>>
  static void copy(void const* desc_ptr, uint64_t* mbar_ptr, uint16_t multicast_mask, uint64_t cache_hint,
                   void* smem_ptr, C const&... crd) {
    const int32_t c[] = {int32_t(crd)...};
    ::mbcheck::cutlass_host::tma_atoms::load(desc_ptr, mbar_ptr, smem_ptr, c, multicast_mask, true,
                                             ::mbcheck::CallSite::current());
    (void)cache_hint;
  }
};

struct SM90_TMA_STORE {
  template <class... C, class = std::enable_if_t<mbcheck_tma_detail::coords<C...>>>
  static void copy(void const* desc_ptr, void const* smem_ptr, C const&... crd) {
    const int32_t c[] = {int32_t(crd)...};
    ::mbcheck::cutlass_host::tma_atoms::store(desc_ptr, smem_ptr, c, false, ::mbcheck::CallSite::current());
  }
};

struct SM90_TMA_REDUCE_ADD {
  template <class... C, class = std::enable_if_t<mbcheck_tma_detail::coords<C...>>>
  static void copy(void const* desc_ptr, void const* smem_ptr, C const&... crd) {
    const int32_t c[] = {int32_t(crd)...};
    ::mbcheck::cutlass_host::tma_atoms::store(desc_ptr, smem_ptr, c, true, ::mbcheck::CallSite::current());
  }
};

#undef MBCHECK_TMA_CRD_PARAMS_1
#undef MBCHECK_TMA_CRD_PARAMS_2
#undef MBCHECK_TMA_CRD_PARAMS_3
#undef MBCHECK_TMA_CRD_PARAMS_4
#undef MBCHECK_TMA_CRD_PARAMS_5
#undef MBCHECK_TMA_CRD_ARGS_1
#undef MBCHECK_TMA_CRD_ARGS_2
#undef MBCHECK_TMA_CRD_ARGS_3
#undef MBCHECK_TMA_CRD_ARGS_4
#undef MBCHECK_TMA_CRD_ARGS_5

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
