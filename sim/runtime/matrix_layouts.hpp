// Where the warp-level matrix instructions find their elements: wgmma's shared-memory matrix
// descriptors and canonical layouts, the register fragments of wgmma's A and D, ldmatrix's and
// stmatrix's 8x8 fragments, and the input element types. Pure functions of the PTX ISA's
// figures (docs/semantics.md, "Warp-level matrix instructions"); the runtime
// (sim/runtime/warp_matrix.cpp) moves the bytes and tells the race detector.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace mbcheck::sim::matrix {

// wgmma's input element types (.atype / .btype); the accumulator is f32 (or f16: the caller
// converts).
enum class ElementType : std::uint8_t { f16, bf16, tf32, e4m3, e5m2 };
std::uint32_t element_bytes(ElementType t);  // 2, 2, 4, 1, 1
float element_value(ElementType t, const unsigned char* bytes);
const char* element_name(ElementType t);

// The operand's major-ness: K-major (elements along K adjacent; the default) or MN-major
// (imm-trans-a / imm-trans-b = 1: a transposed operand, .f16 / .bf16 only).
enum class Major : std::uint8_t { k, mn };

// PTX ISA, wgmma "Matrix Descriptor Format": a 64-bit value in a register. Bits 13-0
// matrix start address, 29-16 leading dimension byte offset, 45-32 stride dimension byte
// offset, each encoded as (x & 0x3FFFF) >> 4; 51-49 matrix base offset; 63-62 swizzle mode
// (0 none, 1 128-byte, 2 64-byte, 3 32-byte).
struct MatrixDescriptor {
  std::uint32_t start = 0;    // a shared-memory address (bytes)
  std::uint32_t leading = 0;  // LBO, bytes
  std::uint32_t stride = 0;   // SBO, bytes
  std::uint32_t base_offset = 0;
  std::uint32_t swizzle_bytes = 0;  // 0 (none), 32, 64 or 128: the swizzle pattern's row
  static MatrixDescriptor decode(std::uint64_t bits);
};

// The shared-memory address of element (mn, k) of an operand (A: mn = m in 0..63; B: mn = n)
// of one wgmma (its K is 32 bytes of elements), in the canonical layouts of the PTX ISA's wgmma
// "Shared Memory Matrix Layout" (in 16-byte units T, with LBO and SBO from the descriptor):
//   K-major,  no swizzle:  ((8,m),(T,2k)):((1T,SBO),(1,LBO))
//   K-major,  W-byte:      ((8,m),(T,2k)):((W/16 T,SBO),(1,T))
//   MN-major, no swizzle:  ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
//   MN-major, W-byte:      ((T,W/16,m),(8,k)):((1,T,LBO),(W/16 T,SBO))
// then the swizzle on the address: bits [4, 4+b) ^= bits [7, 7+b), b = log2(W / 16).
std::uint32_t element_address(const MatrixDescriptor& d, Major major, std::uint32_t mn, std::uint32_t k,
                              std::uint32_t elem_bytes);
std::uint32_t swizzle(std::uint32_t address, std::uint32_t swizzle_bytes);

// The 16-byte pieces an operand of `rows` x 32 bytes reads, coalesced into (address, bytes)
// ranges in address order: its exact footprint (gaps between rows or stages are not read).
std::vector<std::pair<std::uint32_t, std::uint32_t>> footprint(const MatrixDescriptor& d, Major major,
                                                               std::uint32_t rows, std::uint32_t elem_bytes);

// One wgmma.mma_async.sync.aligned.m64nNkK: K is 32 bytes of the input type.
struct WgmmaShape {
  std::uint32_t n = 8;  // 8..256, a multiple of 8
  ElementType a_type = ElementType::f16, b_type = ElementType::f16;
  Major a_major = Major::k, b_major = Major::k;
  bool negate_a = false, negate_b = false;  // imm-scale-a / imm-scale-b = -1
  bool accumulate = true;                   // scale-d: false gives D = A*B
  std::uint32_t k() const { return 32 / element_bytes(a_type); }
};

// The accumulator fragment (PTX ISA, wgmma "Register Fragments", the m64nNk* D figure):
// value v of thread t (0..127 in the warp group) is D[row][col] with
// row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((v / 2) % 2), col = 2 * (t % 4) + v % 2 + 8 * (v / 4).
std::pair<std::uint32_t, std::uint32_t> accumulator_element(std::uint32_t thread, std::uint32_t value);
// A in registers (the A figures for .f16/.bf16 (k16), .tf32 (k8) and .e4m3/.e5m2 (k32)): byte
// `byte` of the 16 register bytes of thread t holds part of A[row][k]; returns {row, k, byte
// offset within the element}.
struct FragmentPlace {
  std::uint32_t row, k, byte;
};
FragmentPlace a_register_element(std::uint32_t thread, std::uint32_t byte, std::uint32_t elem_bytes);

// ldmatrix / stmatrix .m8n8 .b16 (PTX ISA, the ldmatrix and stmatrix fragment figures): 32-bit
// register `reg` of lane t holds two 16-bit elements of matrix `reg`; element h (0: low half)
// is row r, column c of it with (r, c) = (t / 4, 2 * (t % 4) + h), or with .trans
// (2 * (t % 4) + h, t / 4). Row r of matrix i is at the address lane 8 * i + r gave.
std::pair<std::uint32_t, std::uint32_t> ldmatrix_element(std::uint32_t lane, std::uint32_t half, bool trans);

}  // namespace mbcheck::sim::matrix
