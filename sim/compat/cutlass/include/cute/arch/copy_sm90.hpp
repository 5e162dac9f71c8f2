// cute/arch/copy_sm90.hpp on the host: CUTLASS's own header, with its stmatrix atoms
// (SM90_U32x{1,2,4}_STSM_N, SM90_U16x{2,4,8}_STSM_T) under their names as the host's stmatrix,
// a warp collective (mbcheck/cutlass_host/warp_matrix.hpp).
#pragma once

#include <cute/config.hpp>
#include <cute/arch/config.hpp>
#include <cute/arch/copy.hpp>

#include "mbcheck/cutlass_host/faults.hpp"  // for the layer's copy_sm90_tma.hpp, which CUTLASS's includes last
#include "mbcheck/cutlass_host/warp_matrix.hpp"

#define SM90_U32x1_STSM_N cutlass_original_SM90_U32x1_STSM_N
#define SM90_U32x2_STSM_N cutlass_original_SM90_U32x2_STSM_N
#define SM90_U32x4_STSM_N cutlass_original_SM90_U32x4_STSM_N
#define SM90_U16x2_STSM_T cutlass_original_SM90_U16x2_STSM_T
#define SM90_U16x4_STSM_T cutlass_original_SM90_U16x4_STSM_T
#define SM90_U16x8_STSM_T cutlass_original_SM90_U16x8_STSM_T
#include_next <cute/arch/copy_sm90.hpp>
#undef SM90_U32x1_STSM_N
#undef SM90_U32x2_STSM_N
#undef SM90_U32x4_STSM_N
#undef SM90_U16x2_STSM_T
#undef SM90_U16x4_STSM_T
#undef SM90_U16x8_STSM_T

namespace cute {

// Count matrices, .trans or not; the U16 atoms are the .trans forms (CUTLASS's naming).
template <std::uint32_t Count, bool Trans>
struct HostStsm {
  using SRegisters = uint32_t[Count];
  using DRegisters = uint128_t[1];
};
struct SM90_U32x1_STSM_N : HostStsm<1, false> {
  static void copy(uint32_t const& src, uint128_t& smem_dst) {
    ::mbcheck::cutlass_host::stmatrix<1, false>(&smem_dst, ::mbcheck::CallSite::current(), src);
  }
};
struct SM90_U32x2_STSM_N : HostStsm<2, false> {
  static void copy(uint32_t const& src0, uint32_t const& src1, uint128_t& smem_dst) {
    ::mbcheck::cutlass_host::stmatrix<2, false>(&smem_dst, ::mbcheck::CallSite::current(), src0, src1);
  }
};
struct SM90_U32x4_STSM_N : HostStsm<4, false> {
  static void copy(uint32_t const& src0, uint32_t const& src1, uint32_t const& src2, uint32_t const& src3,
                   uint128_t& smem_dst) {
    ::mbcheck::cutlass_host::stmatrix<4, false>(&smem_dst, ::mbcheck::CallSite::current(), src0, src1, src2, src3);
  }
};
struct SM90_U16x2_STSM_T : HostStsm<1, true> {
  static void copy(uint32_t const& src, uint128_t& smem_dst) {
    ::mbcheck::cutlass_host::stmatrix<1, true>(&smem_dst, ::mbcheck::CallSite::current(), src);
  }
};
struct SM90_U16x4_STSM_T : HostStsm<2, true> {
  static void copy(uint32_t const& src0, uint32_t const& src1, uint128_t& smem_dst) {
    ::mbcheck::cutlass_host::stmatrix<2, true>(&smem_dst, ::mbcheck::CallSite::current(), src0, src1);
  }
};
struct SM90_U16x8_STSM_T : HostStsm<4, true> {
  static void copy(uint32_t const& src0, uint32_t const& src1, uint32_t const& src2, uint32_t const& src3,
                   uint128_t& smem_dst) {
    ::mbcheck::cutlass_host::stmatrix<4, true>(&smem_dst, ::mbcheck::CallSite::current(), src0, src1, src2, src3);
  }
};

}  // namespace cute
