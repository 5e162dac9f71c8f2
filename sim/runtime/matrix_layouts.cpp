// The layouts of sim/runtime/matrix_layouts.hpp.
#include "sim/runtime/matrix_layouts.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace mbcheck::sim::matrix {

std::uint32_t element_bytes(ElementType t) {
  switch (t) {
    case ElementType::f16:
    case ElementType::bf16: return 2;
    case ElementType::tf32: return 4;
    case ElementType::e4m3:
    case ElementType::e5m2: return 1;
  }
  return 2;
}

const char* element_name(ElementType t) {
  static constexpr const char* kNames[] = {"f16", "bf16", "tf32", "e4m3", "e5m2"};
  return kNames[static_cast<int>(t)];
}

namespace {
// A binary floating-point value of `exp_bits` exponent and `man_bits` mantissa bits (bias
// 2^(exp_bits-1) - 1, subnormals at exponent 0). `ieee_specials`: the all-ones exponent is
// infinity / NaN (f16, e5m2); e4m3 has no infinity and only S.1111.111 as NaN.
float small_float(std::uint32_t bits, int exp_bits, int man_bits, bool ieee_specials) {
  const bool negative = bits >> (exp_bits + man_bits) & 1u;
  const std::uint32_t e = bits >> man_bits & ((1u << exp_bits) - 1);
  const std::uint32_t m = bits & ((1u << man_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  float v;
  if (e == (1u << exp_bits) - 1 && (ieee_specials || m == (1u << man_bits) - 1)) {
    v = ieee_specials && m == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<float>(m), 1 - bias - man_bits);
  } else {
    v = std::ldexp(static_cast<float>(m | 1u << man_bits), static_cast<int>(e) - bias - man_bits);
  }
  return negative ? -v : v;
}
}  // namespace

float element_value(ElementType t, const unsigned char* bytes) {
  switch (t) {
    case ElementType::f16: {
      std::uint16_t h;
      std::memcpy(&h, bytes, 2);
      return small_float(h, 5, 10, true);
    }
    case ElementType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, bytes, 2);
      return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
    }
    case ElementType::tf32: {  // a 32-bit container; the low 13 mantissa bits are not read
      std::uint32_t w;
      std::memcpy(&w, bytes, 4);
      return std::bit_cast<float>(w & 0xFFFFE000u);
    }
    case ElementType::e4m3: return small_float(bytes[0], 4, 3, false);
    case ElementType::e5m2: return small_float(bytes[0], 5, 2, true);
  }
  return 0;
}

MatrixDescriptor MatrixDescriptor::decode(std::uint64_t bits) {
  MatrixDescriptor d;
  d.start = static_cast<std::uint32_t>(bits & 0x3FFF) << 4;
  d.leading = static_cast<std::uint32_t>(bits >> 16 & 0x3FFF) << 4;
  d.stride = static_cast<std::uint32_t>(bits >> 32 & 0x3FFF) << 4;
  d.base_offset = static_cast<std::uint32_t>(bits >> 49 & 0x7);
  static constexpr std::uint32_t kSwizzle[] = {0, 128, 64, 32};
  d.swizzle_bytes = kSwizzle[bits >> 62 & 0x3];
  return d;
}

// The swizzle modes permute the 16-byte chunks of each W-byte row by the address's row bits
// within the pattern's repeat (8 rows of 128 bytes: 1,024 bytes for 128-byte swizzle), as
// CUTLASS's Swizzle<b,4,3> does over the same address.
std::uint32_t swizzle(std::uint32_t address, std::uint32_t swizzle_bytes) {
  if (swizzle_bytes == 0) return address;
  const std::uint32_t mask = swizzle_bytes / 16 - 1;  // b bits: 1, 3 or 7
  return address ^ ((address >> 7 & mask) << 4);
}

std::uint32_t element_address(const MatrixDescriptor& d, Major major, std::uint32_t mn, std::uint32_t k,
                              std::uint32_t elem_bytes) {
  const std::uint32_t w = d.swizzle_bytes;
  std::uint32_t offset;
  if (major == Major::k) {
    const std::uint32_t kb = k * elem_bytes;  // 0..31
    offset =
        w == 0 ? mn % 8 * 16 + mn / 8 * d.stride + kb / 16 * d.leading + kb % 16 : mn % 8 * w + mn / 8 * d.stride + kb;
  } else {
    const std::uint32_t mnb = mn * elem_bytes;
    offset = w == 0 ? mnb % 16 + mnb / 16 * d.stride + k % 8 * 16 + k / 8 * d.leading
                    : mnb % w + mnb / w * d.leading + k % 8 * w + k / 8 * d.stride;
  }
  return swizzle(d.start + offset, w);
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> footprint(const MatrixDescriptor& d, Major major,
                                                               std::uint32_t rows, std::uint32_t elem_bytes) {
  // Every 16-byte chunk holds 16 / elem_bytes elements adjacent along K (K-major) or MN.
  const std::uint32_t per_chunk = 16 / elem_bytes, k_elems = 32 / elem_bytes;
  std::vector<std::uint32_t> chunks;
  for (std::uint32_t mn = 0; mn < rows; mn += major == Major::mn ? per_chunk : 1)
    for (std::uint32_t k = 0; k < k_elems; k += major == Major::k ? per_chunk : 1)
      chunks.push_back(element_address(d, major, mn, k, elem_bytes) & ~15u);
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  for (std::uint32_t c : chunks) {
    if (!ranges.empty() && ranges.back().first + ranges.back().second == c)
      ranges.back().second += 16;
    else
      ranges.emplace_back(c, 16);
  }
  return ranges;
}

std::pair<std::uint32_t, std::uint32_t> accumulator_element(std::uint32_t thread, std::uint32_t value) {
  const std::uint32_t lane = thread % 32;
  return {16 * (thread / 32) + lane / 4 + 8 * (value / 2 % 2), 2 * (lane % 4) + value % 2 + 8 * (value / 4)};
}

FragmentPlace a_register_element(std::uint32_t thread, std::uint32_t byte, std::uint32_t elem_bytes) {
  const std::uint32_t lane = thread % 32, row0 = 16 * (thread / 32) + lane / 4;
  const std::uint32_t v = byte / elem_bytes, within = byte % elem_bytes;
  switch (elem_bytes) {
    case 4:  // .tf32, k8: a0..a3 = (r, c), (r + 8, c), (r, c + 4), (r + 8, c + 4) with c = lane % 4
      return {row0 + 8 * (v % 2), lane % 4 + 4 * (v / 2), within};
    case 1:  // .e4m3/.e5m2, k32: four elements a register, 4 * (lane % 4) + 0..3, +16 in a2/a3
      return {row0 + 8 * (v / 4 % 2), 4 * (lane % 4) + v % 4 + 16 * (v / 8), within};
    default:  // .f16/.bf16, k16: two a register, 2 * (lane % 4) + 0..1, +8 in a2/a3
      return {row0 + 8 * (v / 2 % 2), 2 * (lane % 4) + v % 2 + 8 * (v / 4), within};
  }
}

std::pair<std::uint32_t, std::uint32_t> ldmatrix_element(std::uint32_t lane, std::uint32_t half, bool trans) {
  const std::uint32_t r = lane / 4, c = 2 * (lane % 4) + half;
  return trans ? std::pair{c, r} : std::pair{r, c};
}

}  // namespace mbcheck::sim::matrix
