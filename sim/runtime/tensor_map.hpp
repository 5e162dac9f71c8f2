// Tensor maps and the host TMA engine: what cuTensorMapEncodeTiled records (TensorMap, in the
// 128 bytes of a CUtensorMap) and, for a box at given tensor coordinates, exactly which bytes of
// global memory a tiled cp.async.bulk.tensor moves to which bytes of shared memory. Pure: no
// runtime, no CUDA headers (the enums are numbered as the driver API's, cuda.h, so a caller
// passes the driver's values). The runtime's tensor copies (sim/runtime/tensor_copies.cpp) and
// the CUTLASS layer's cuTensorMapEncodeTiled (sim/compat/cutlass/src/tensor_map.cpp) use it.
//
// The rules, with their sources (docs/semantics.md, "Tensor copies"):
// * The box: boxDim[i] elements are traversed along dimension i from the coordinate given; with
//   elementStrides[i] != 1 every elementStrides[i]-th is taken, ceil(boxDim[i] / elementStrides[i])
//   of them (driver API, cuTensorMapEncodeTiled); with interleave NONE elementStrides[0] is ignored
//   ("TMA doesn't support the stride for dimension zero"). Shared memory holds the taken elements
//   densely, dimension 0 fastest.
// * Out of bounds: an element whose coordinate in some dimension is < 0 or >= globalDim is not
//   read; a load fills it with zero, or with a NaN under FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA (the
//   hardware's NaN bits are not documented: the canonical quiet NaN of the type here); a store
//   does not write it.
// * Swizzles (PTX ISA 5.5.7, "Swizzling Modes"): the tables there give, per 128-byte line of
//   shared memory, where each 16-byte chunk goes: "32 byte swizzle mode ... 0 1 2 3 4 5 6 7 /
//   1 0 3 2 5 4 7 6 / ... Pattern repeats", 64 byte: rows r = 0..3 hold chunk c at c ^ r, 128
//   byte: rows 0..7 hold chunk c at c ^ r; "The value of swizzle base offset is 0 when the dstMem
//   shared memory address is located at the following boundary: 128-Byte swizzle 1024-Byte
//   boundary ... 64-Byte swizzle 512-Byte ... 32-Byte swizzle 256-Byte ... Otherwise ... base
//   offset = (dstMem / 128) % 8" (% 4, % 2). So the pattern is a function of the shared-memory
//   address itself: byte address a lands at a ^ (((a >> 7) & m) << 4), m = 1, 3, 7 for 32, 64,
//   128 B, which is CuTe's Swizzle<1,4,3>, <2,4,3>, <3,4,3> on byte offsets. The swizzle applies
//   to the shared-memory address, here the offset in the CTA's shared-memory window (the GPU's
//   shared address of the byte).
// * Interleave 16B/32B: the same traversal (the interleaved channel group is dimension 0, whose
//   element stride then applies); only the encode rules differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mbcheck::sim::tma {

// Numbered as CUtensorMapDataType (cuda.h). The packed 4/6-bit types are refused at encode.
enum class DataType : std::uint8_t { u8, u16, u32, s32, u64, s64, f16, f32, f64, bf16, f32_ftz, tf32, tf32_ftz };
enum class Interleave : std::uint8_t { none, b16, b32 };           // CUtensorMapInterleave
enum class Swizzle : std::uint8_t { none, b32, b64, b128 };        // CUtensorMapSwizzle (the 128B atom modes refused)
enum class OobFill : std::uint8_t { zero, nan_request_zero_fma };  // CUtensorMapFloatOOBfill

constexpr std::uint32_t kMaxRank = 5;
constexpr std::uint32_t kMagic = 0x4d424d54;  // "TMBM": a map this encoder wrote

// The recorded map, laid out in the 128 bytes of a CUtensorMap (an opaque object). Byte 10 is
// unused: CUTLASS clears bit 21 of the map's second 64-bit word after encoding when the driver is
// 13.1 or older (cute/atom/copy_traits_sm90_tma.hpp), a driver field this layout leaves empty.
struct TensorMap {
  std::uint32_t magic = 0;
  std::uint8_t rank = 0;
  DataType dtype = DataType::u8;
  Interleave interleave = Interleave::none;
  Swizzle swizzle = Swizzle::none;
  OobFill oob = OobFill::zero;
  std::uint8_t elem_bytes = 0;
  std::uint8_t unused_byte10 = 0;  // see above
  std::uint8_t l2_promotion = 0;
  std::uint8_t elem_strides[kMaxRank] = {};
  std::uint8_t pad17 = 0;
  std::uint16_t box[kMaxRank] = {};
  std::uint8_t pad28[4] = {};
  std::uint64_t global = 0;                  // the tensor's address
  std::uint64_t dims[kMaxRank] = {};         // elements per dimension
  std::uint64_t strides[kMaxRank - 1] = {};  // bytes between consecutive indices of dimensions 1..rank-1
};
static_assert(sizeof(TensorMap) <= 128, "a TensorMap lives in a CUtensorMap's 128 bytes");
static_assert(offsetof(TensorMap, unused_byte10) == 10);

// cuTensorMapEncodeTiled's arguments, as the driver API takes them (enums as their raw values).
struct TiledArgs {
  const void* map_address = nullptr;  // where the CUtensorMap is (must be 64-byte aligned)
  std::uint32_t dtype = 0;
  std::uint32_t rank = 0;
  const void* global = nullptr;
  const std::uint64_t* dims = nullptr;
  const std::uint64_t* strides = nullptr;  // rank - 1 of them
  const std::uint32_t* box = nullptr;
  const std::uint32_t* elem_strides = nullptr;
  std::uint32_t interleave = 0, swizzle = 0, l2_promotion = 0, oob_fill = 0;
};

// Validates `args` as the driver API documents cuTensorMapEncodeTiled's requirements and, when
// they hold, fills `out`. Returns the first requirement broken ("" on success).
std::string encode_tiled(const TiledArgs& args, TensorMap& out);

// The map at `p` if it is one encode_tiled wrote, else null.
const TensorMap* as_map(const void* p);

std::uint32_t element_bytes(DataType t);
const char* type_name(DataType t);
// Elements the box holds in shared memory along dimension i (ceil(box / stride)), and in all.
std::uint32_t box_extent(const TensorMap& m, std::uint32_t i);
std::uint32_t box_bytes(const TensorMap& m);

// One run of bytes the copy moves: `bytes` bytes at `smem` (an offset from the box's first byte
// in shared memory, swizzle applied) and at `global` (an offset from the tensor's address; -1 for
// out-of-bounds elements, which a load fills and a store skips). Runs are split where either
// side stops being contiguous.
struct Segment {
  std::int64_t global = 0;
  std::uint32_t smem = 0;
  std::uint32_t bytes = 0;
};

// The segments of the box at `coords` (rank of them) whose first byte is at offset `smem_offset`
// of its CTA's shared-memory window, in shared-memory order before swizzling. Returns "" or why the
// box cannot be moved (misaligned shared address, a box too large).
std::string box_segments(const TensorMap& m, const std::int32_t* coords, std::uint32_t smem_offset,
                         std::vector<Segment>& out);

// The swizzled offset of shared-memory byte address `a` (window offset) under `s`.
std::uint32_t swizzle_address(Swizzle s, std::uint32_t a);

// Writes the out-of-bounds fill of `bytes` bytes (whole elements) of type `t` at `dst`.
void oob_fill(const TensorMap& m, unsigned char* dst, std::uint32_t bytes);

// cp.reduce.async.bulk.tensor .add: dst[i] += src[i] for each element of type `t` in `bytes`.
// Supported types (PTX ISA cp.reduce.async.bulk.tensor, .add): f16, bf16 (round to nearest even),
// f32, s32, u32, u64, s64 (as u64: the same bits); returns false for others.
bool reduce_add_supported(DataType t);
void reduce_add(DataType t, unsigned char* dst, const unsigned char* src, std::uint32_t bytes);

}  // namespace mbcheck::sim::tma
