// cute/arch/copy_sm75.hpp on the host: CUTLASS's own header, with its ldmatrix atoms
// (SM75_U32x{1,2,4}_LDSM_N, SM75_U16x{2,4,8}_LDSM_T) under their names as the host's ldmatrix,
// a warp collective (mbcheck/cutlass_host/warp_matrix.hpp).
#pragma once

#include <cute/config.hpp>
#include <cute/arch/copy.hpp>

#include "mbcheck/cutlass_host/warp_matrix.hpp"

#define SM75_U32x1_LDSM_N cutlass_original_SM75_U32x1_LDSM_N
#define SM75_U32x2_LDSM_N cutlass_original_SM75_U32x2_LDSM_N
#define SM75_U32x4_LDSM_N cutlass_original_SM75_U32x4_LDSM_N
#define SM75_U16x2_LDSM_T cutlass_original_SM75_U16x2_LDSM_T
#define SM75_U16x4_LDSM_T cutlass_original_SM75_U16x4_LDSM_T
#define SM75_U16x8_LDSM_T cutlass_original_SM75_U16x8_LDSM_T
#include_next <cute/arch/copy_sm75.hpp>
#undef SM75_U32x1_LDSM_N
#undef SM75_U32x2_LDSM_N
#undef SM75_U32x4_LDSM_N
#undef SM75_U16x2_LDSM_T
#undef SM75_U16x4_LDSM_T
#undef SM75_U16x8_LDSM_T

namespace cute {

// Count matrices, .trans or not; the U16 atoms are the .trans forms (CUTLASS's naming).
template <std::uint32_t Count, bool Trans>
struct HostLdsm {
  using SRegisters = uint128_t[1];
  using DRegisters = uint32_t[Count];
  template <class... Dst>
  static void copy(uint128_t const& smem_src, Dst&... dst) {
    static_assert(sizeof...(Dst) == Count);
    ::mbcheck::cutlass_host::ldmatrix<Count, Trans>(&smem_src, ::mbcheck::CallSite::current(), dst...);
  }
};
struct SM75_U32x1_LDSM_N : HostLdsm<1, false> {};
struct SM75_U32x2_LDSM_N : HostLdsm<2, false> {};
struct SM75_U32x4_LDSM_N : HostLdsm<4, false> {};
struct SM75_U16x2_LDSM_T : HostLdsm<1, true> {};
struct SM75_U16x4_LDSM_T : HostLdsm<2, true> {};
struct SM75_U16x8_LDSM_T : HostLdsm<4, true> {};

}  // namespace cute
