// The warp-level matrix instructions on the host, outside the Platform contract (the
// contract's wgmma is the fixed bf16 form of spec/platform.hpp): wgmma.mma_async performed
// from its shared-memory descriptors, ldmatrix and stmatrix. For code that issues them as
// PTX writes them (the CUTLASS layer's GMMA and LDSM/STSM atoms). Shared-memory addresses in
// descriptors are offsets in the calling CTA's shared memory (HostPlatform::shared_memory()),
// as a 32-bit shared address is on the GPU; row pointers point into that memory.
#pragma once

#include <cstdint>

#include "sim/host_platform.hpp"

namespace mbcheck::sim::host_matrix {

using matrix::ElementType;
using matrix::Major;
using matrix::WgmmaShape;

// wgmma.mma_async.sync.aligned.m64n{N}k{K}.f32.{atype}.{btype} d, a-desc | a-regs, b-desc,
// scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b: every thread of the warp group
// calls it with the same shape and descriptors; `d` is the thread's shape.n / 2 accumulator
// values (the D fragment), `a_registers` its four A registers (nullptr: A in shared memory
// through desc_a). The operands are read until the wgmma.wait_group that retires the group.
inline void wgmma_mma_async(const WgmmaShape& shape, std::uint64_t desc_a, const std::uint32_t* a_registers,
                            std::uint64_t desc_b, float* d, const CallSite& site = CallSite::current()) {
  HostPlatform::rt().at(site);
  HostPlatform::rt().wgmma_mma(shape, desc_a, a_registers, desc_b, d);
}

// ldmatrix.sync.aligned.m8n8.x{count}{.trans}.shared.b16: every lane of the warp calls it;
// `row` is the lane's row address (used for lanes 0 .. 8 * count - 1); fills out[0, count).
inline void ldmatrix(const void* row, std::uint32_t count, bool trans, std::uint32_t* out,
                     const CallSite& site = CallSite::current()) {
  HostPlatform::rt().at(site);
  HostPlatform::rt().ldmatrix(row, count, trans, out, site);
}

// stmatrix.sync.aligned.m8n8.x{count}{.trans}.shared.b16: the inverse of ldmatrix.
inline void stmatrix(void* row, std::uint32_t count, bool trans, const std::uint32_t* in,
                     const CallSite& site = CallSite::current()) {
  HostPlatform::rt().at(site);
  HostPlatform::rt().stmatrix(row, count, trans, in, site);
}

}  // namespace mbcheck::sim::host_matrix
