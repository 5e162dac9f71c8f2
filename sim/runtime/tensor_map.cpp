// The host TMA engine (sim/runtime/tensor_map.hpp): the encode rules of cuTensorMapEncodeTiled
// and the byte mapping of a tiled box.
#include "sim/runtime/tensor_map.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace mbcheck::sim::tma {

std::uint32_t element_bytes(DataType t) {
  switch (t) {
    case DataType::u8: return 1;
    case DataType::u16:
    case DataType::f16:
    case DataType::bf16: return 2;
    case DataType::u64:
    case DataType::s64:
    case DataType::f64: return 8;
    default: return 4;
  }
}

const char* type_name(DataType t) {
  static const char* const names[] = {"UINT8",       "UINT16",   "UINT32",      "INT32",   "UINT64",
                                      "INT64",       "FLOAT16",  "FLOAT32",     "FLOAT64", "BFLOAT16",
                                      "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ"};
  return names[static_cast<int>(t)];
}

namespace {

bool is_float(DataType t) {
  return t == DataType::f16 || t == DataType::f32 || t == DataType::f64 || t == DataType::bf16 ||
         t == DataType::f32_ftz || t == DataType::tf32 || t == DataType::tf32_ftz;
}

std::string check_enums(const TiledArgs& a) {
  if (a.dtype > static_cast<std::uint32_t>(DataType::tf32_ftz))
    return a.dtype <= 15 ? fmt::format("tensorDataType {}: the packed 4/6-bit types are not modelled", a.dtype)
                         : fmt::format("tensorDataType {} is not a CUtensorMapDataType", a.dtype);
  if (a.interleave > 2) return fmt::format("interleave {} is not a CUtensorMapInterleave", a.interleave);
  if (a.swizzle > 3)
    return a.swizzle <= 6 ? fmt::format("swizzle {}: the 128B atom sub-modes are not modelled", a.swizzle)
                          : fmt::format("swizzle {} is not a CUtensorMapSwizzle", a.swizzle);
  if (a.l2_promotion > 3) return fmt::format("l2Promotion {} is not a CUtensorMapL2promotion", a.l2_promotion);
  if (a.oob_fill > 1) return fmt::format("oobFill {} is not a CUtensorMapFloatOOBfill", a.oob_fill);
  return {};
}

// The driver API's requirements on cuTensorMapEncodeTiled's arguments, in the order it lists them.
std::string check_tiled(const TiledArgs& a) {
  if (std::string e = check_enums(a); !e.empty()) return e;
  const auto t = static_cast<DataType>(a.dtype);
  const std::uint32_t es = element_bytes(t);
  const auto il = static_cast<Interleave>(a.interleave);
  const auto sw = static_cast<Swizzle>(a.swizzle);
  const auto addr = reinterpret_cast<std::uintptr_t>(a.global);
  if (!a.map_address || reinterpret_cast<std::uintptr_t>(a.map_address) % 64 != 0)
    return "tensorMap address must be aligned to 64 bytes";
  if (a.rank == 0 || a.rank > kMaxRank) return fmt::format("tensorRank {} must be 1..5", a.rank);
  if (il != Interleave::none && a.rank < 3)
    return fmt::format("tensorRank {} with interleave must be at least 3", a.rank);
  if (!a.dims || !a.box || !a.elem_strides || (a.rank > 1 && !a.strides)) return "an array argument is null";
  if (addr % 16 != 0) return fmt::format("globalAddress {} must be 16-byte aligned", a.global);
  if (il == Interleave::b32 && addr % 32 != 0)
    return fmt::format("globalAddress {} must be 32-byte aligned with INTERLEAVE_32B", a.global);
  for (std::uint32_t i = 0; i < a.rank; ++i)
    if (a.dims[i] == 0 || a.dims[i] > (std::uint64_t{1} << 32))
      return fmt::format("globalDim[{}] = {} must be non-zero and at most 2^32", i, a.dims[i]);
  for (std::uint32_t i = 0; i + 1 < a.rank; ++i) {
    const std::uint64_t s = a.strides[i];
    if (s % 16 != 0 || s >= (std::uint64_t{1} << 40))
      return fmt::format("globalStrides[{}] = {} must be a multiple of 16 and less than 2^40", i, s);
    if (il == Interleave::b32 && s % 32 != 0)
      return fmt::format("globalStrides[{}] = {} must be a multiple of 32 with INTERLEAVE_32B", i, s);
  }
  for (std::uint32_t i = 0; i < a.rank; ++i)
    if (a.box[i] == 0 || a.box[i] > 256) return fmt::format("boxDim[{}] = {} must be 1..256", i, a.box[i]);
  if (il == Interleave::none && (a.box[0] * es) % 16 != 0)
    return fmt::format("boxDim[0] * element size = {} B must be a multiple of 16 bytes", a.box[0] * es);
  for (std::uint32_t i = 0; i < a.rank; ++i)
    if (a.elem_strides[i] == 0 || a.elem_strides[i] > 8)
      return fmt::format("elementStrides[{}] = {} must be 1..8", i, a.elem_strides[i]);
  if (il == Interleave::none && sw != Swizzle::none) {
    const std::uint32_t span = 16u << static_cast<int>(sw);
    if (a.box[0] * es > span)
      return fmt::format("boxDim[0] * element size = {} B exceeds the swizzle span of {} B", a.box[0] * es, span);
  }
  if (il == Interleave::b32 && sw != Swizzle::b32) return "INTERLEAVE_32B requires SWIZZLE_32B";
  if (static_cast<OobFill>(a.oob_fill) == OobFill::nan_request_zero_fma && !is_float(t))
    return fmt::format("oobFill NAN_REQUEST_ZERO_FMA needs a floating-point type, not {}", type_name(t));
  return {};
}

}  // namespace

std::string encode_tiled(const TiledArgs& a, TensorMap& out) {
  if (std::string e = check_tiled(a); !e.empty()) return e;
  TensorMap m;
  m.magic = kMagic;
  m.rank = static_cast<std::uint8_t>(a.rank);
  m.dtype = static_cast<DataType>(a.dtype);
  m.interleave = static_cast<Interleave>(a.interleave);
  m.swizzle = static_cast<Swizzle>(a.swizzle);
  m.oob = static_cast<OobFill>(a.oob_fill);
  m.elem_bytes = static_cast<std::uint8_t>(element_bytes(m.dtype));
  m.l2_promotion = static_cast<std::uint8_t>(a.l2_promotion);
  m.global = reinterpret_cast<std::uintptr_t>(a.global);
  for (std::uint32_t i = 0; i < a.rank; ++i) {
    m.dims[i] = a.dims[i];
    m.box[i] = static_cast<std::uint16_t>(a.box[i]);
    // "when interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, the first element of this array is ignored"
    m.elem_strides[i] = static_cast<std::uint8_t>(i == 0 && m.interleave == Interleave::none ? 1 : a.elem_strides[i]);
    if (i + 1 < a.rank) m.strides[i] = a.strides[i];
  }
  out = m;
  return {};
}

const TensorMap* as_map(const void* p) {
  if (!p || reinterpret_cast<std::uintptr_t>(p) % alignof(TensorMap) != 0) return nullptr;
  const auto* m = static_cast<const TensorMap*>(p);
  return m->magic == kMagic && m->rank >= 1 && m->rank <= kMaxRank ? m : nullptr;
}

std::uint32_t box_extent(const TensorMap& m, std::uint32_t i) {
  return (m.box[i] + m.elem_strides[i] - 1u) / m.elem_strides[i];
}

std::uint32_t box_bytes(const TensorMap& m) {
  std::uint64_t n = m.elem_bytes;
  for (std::uint32_t i = 0; i < m.rank; ++i) n *= box_extent(m, i);
  return static_cast<std::uint32_t>(n);
}

std::uint32_t swizzle_address(Swizzle s, std::uint32_t a) {
  if (s == Swizzle::none) return a;
  const std::uint32_t mask = (1u << static_cast<int>(s)) - 1u;  // 1, 3, 7
  return a ^ (((a >> 7) & mask) << 4);
}

std::string box_segments(const TensorMap& m, const std::int32_t* coords, std::uint32_t smem_offset,
                         std::vector<Segment>& out) {
  out.clear();
  if (smem_offset % 16 != 0)
    return fmt::format("the shared-memory box address (offset {:#x}) must be 16-byte aligned", smem_offset);
  const std::uint32_t total = box_bytes(m);
  if (total > (1u << 18)) return fmt::format("the box holds {} B, more than any CTA's shared memory", total);
  const std::uint32_t es = m.elem_bytes;
  std::uint32_t n[kMaxRank] = {1, 1, 1, 1, 1};
  for (std::uint32_t i = 0; i < m.rank; ++i) n[i] = box_extent(m, i);
  std::uint32_t k[kMaxRank] = {};  // the element's index in the box, dimension 0 fastest
  for (std::uint32_t off = 0; off < total; off += es) {
    bool in = true;
    std::int64_t g = 0;
    for (std::uint32_t i = 0; i < m.rank; ++i) {
      const std::int64_t c = std::int64_t{coords[i]} + std::int64_t{k[i]} * m.elem_strides[i];
      if (c < 0 || static_cast<std::uint64_t>(c) >= m.dims[i]) in = false;
      g += c * static_cast<std::int64_t>(i == 0 ? es : m.strides[i - 1]);
    }
    const std::uint32_t sa = swizzle_address(m.swizzle, smem_offset + off);
    // The swizzle moves 16-byte chunks within their 128-byte line: a box that covers part of a
    // line only could be sent outside its own bytes; such a box is refused, not modelled.
    if (sa < smem_offset || sa - smem_offset + es > total) {
      out.clear();
      return fmt::format(
          "the {}-byte swizzle sends the box's byte {} to shared offset {:#x}, outside the box's {} bytes at {:#x}: "
          "a swizzled box must cover the 128-byte lines it touches (not modelled otherwise)",
          16u << static_cast<int>(m.swizzle), off, sa, total, smem_offset);
    }
    const std::uint32_t s = sa - smem_offset;
    const std::int64_t gl = in ? g : -1;
    Segment* last = out.empty() ? nullptr : &out.back();
    if (last && last->smem + last->bytes == s &&
        ((gl < 0 && last->global < 0) || (gl >= 0 && last->global >= 0 && last->global + last->bytes == gl)))
      last->bytes += es;
    else
      out.push_back({gl, s, es});
    for (std::uint32_t i = 0; i < m.rank && ++k[i] == n[i]; ++i) k[i] = 0;
  }
  return {};
}

void oob_fill(const TensorMap& m, unsigned char* dst, std::uint32_t bytes) {
  if (m.oob == OobFill::zero) {
    std::memset(dst, 0, bytes);
    return;
  }
  for (std::uint32_t at = 0; at < bytes; at += m.elem_bytes) {
    switch (m.dtype) {
      case DataType::f16: std::memcpy(dst + at, "\x00\x7e", 2); break;   // 0x7e00
      case DataType::bf16: std::memcpy(dst + at, "\xc0\x7f", 2); break;  // 0x7fc0
      case DataType::f64: {
        const std::uint64_t q = 0x7ff8000000000000ull;
        std::memcpy(dst + at, &q, 8);
        break;
      }
      default: {  // the 32-bit float types
        const std::uint32_t q = 0x7fc00000u;
        std::memcpy(dst + at, &q, 4);
      }
    }
  }
}

namespace {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(man | 0x400u), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

std::uint16_t float_to_half(float f) {  // round to nearest even
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  if (std::isnan(f)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  const float a = std::fabs(f);
  if (a >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (a < std::ldexp(1.0f, -14)) {  // subnormal: units of 2^-24
    const float q = std::nearbyint(a * std::ldexp(1.0f, 24));
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(q));
  }
  int e;
  const float frac = std::frexp(a, &e);                  // a = frac * 2^e, frac in [0.5, 1)
  const float q = std::nearbyint(std::ldexp(frac, 11));  // 11 significant bits
  std::uint32_t man = static_cast<std::uint32_t>(q);
  if (man == 2048u) {
    man = 1024u;
    ++e;
  }
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(e + 14) << 10) | (man - 1024u));
}

float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t{b} << 16); }

std::uint16_t float_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

template <class T, class F>
void each(unsigned char* dst, const unsigned char* src, std::uint32_t bytes, F&& f) {
  for (std::uint32_t at = 0; at + sizeof(T) <= bytes; at += sizeof(T)) {
    T a, b;
    std::memcpy(&a, dst + at, sizeof(T));
    std::memcpy(&b, src + at, sizeof(T));
    const T r = f(a, b);
    std::memcpy(dst + at, &r, sizeof(T));
  }
}

}  // namespace

bool reduce_add_supported(DataType t) {
  return t == DataType::f16 || t == DataType::bf16 || t == DataType::f32 || t == DataType::s32 || t == DataType::u32 ||
         t == DataType::u64 || t == DataType::s64;
}

void reduce_add(DataType t, unsigned char* dst, const unsigned char* src, std::uint32_t bytes) {
  switch (t) {
    case DataType::f16:
      each<std::uint16_t>(dst, src, bytes, [](std::uint16_t a, std::uint16_t b) {
        return float_to_half(half_to_float(a) + half_to_float(b));
      });
      break;
    case DataType::bf16:
      each<std::uint16_t>(dst, src, bytes, [](std::uint16_t a, std::uint16_t b) {
        return float_to_bf16(bf16_to_float(a) + bf16_to_float(b));
      });
      break;
    case DataType::f32: each<float>(dst, src, bytes, [](float a, float b) { return a + b; }); break;
    case DataType::s32:
    case DataType::u32:
      each<std::uint32_t>(dst, src, bytes, [](std::uint32_t a, std::uint32_t b) { return a + b; });
      break;
    default: each<std::uint64_t>(dst, src, bytes, [](std::uint64_t a, std::uint64_t b) { return a + b; });
  }
}

}  // namespace mbcheck::sim::tma
