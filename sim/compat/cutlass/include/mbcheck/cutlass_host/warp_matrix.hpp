// ldmatrix / stmatrix for the layer's LDSM and STSM atoms (cute/arch/copy_sm75.hpp,
// cute/arch/copy_sm90.hpp): each lane's row reference is an address in the shared-memory window
// (prelude.hpp), mapped to its CTA's shared memory; lanes whose address the instruction does
// not use (8 * count and up) may give any address.
#pragma once

#include <cstdint>

#include "mbcheck/cutlass_host/thread_identity.hpp"
#include "sim/host_matrix.hpp"

namespace mbcheck::cutlass_host {

inline void* matrix_row(const void* window_row, std::uint32_t count) {
  if (sim::HostPlatform::lane_idx() >= 8 * count) return nullptr;
  return shared_address(window_row, 16, "ldmatrix/stmatrix row address");
}
// ldmatrix.sync.aligned.m8n8.x{Count}{.trans}.shared.b16
template <std::uint32_t Count, bool Trans, class... Dst>
void ldmatrix(const void* window_row, CallSite site, Dst&... dst) {
  std::uint32_t out[Count];
  sim::host_matrix::ldmatrix(matrix_row(window_row, Count), Count, Trans, out, site);
  std::uint32_t i = 0;
  ((dst = out[i++]), ...);
}
// stmatrix.sync.aligned.m8n8.x{Count}{.trans}.shared.b16
template <std::uint32_t Count, bool Trans, class... Src>
void stmatrix(void* window_row, CallSite site, const Src&... src) {
  const std::uint32_t in[Count] = {src...};
  sim::host_matrix::stmatrix(matrix_row(window_row, Count), Count, Trans, in, site);
}

}  // namespace mbcheck::cutlass_host
