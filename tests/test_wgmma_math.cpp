// wgmma.mma_async performed on the host: D against a plain reference GEMM for every input type,
// swizzle mode and major-ness, scale-d, negated inputs, A in registers, N = 8 and 256; and
// its shared-memory reads judged over their exact footprint. Inputs are small integers, so every
// product and sum is exact and the result is the GPU's bit for bit.
//
// The operand images are placed by the test's own reading of the canonical layouts: tiles of
// CUTLASS-style swizzle atoms (8 rows of W bytes, the 16-byte chunk index of row r XORed with
// ((r * W) >> 7) within its atom, atoms 1,024-byte aligned), not by the engine's address
// function.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "sim/check.hpp"
#include "sim/host_matrix.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;
using matrix::ElementType;
using matrix::Major;

namespace {

// An integer in [-8, 8] in the type's bits (little-endian, element_bytes of them).
std::uint32_t encode(ElementType t, int v) {
  if (t == ElementType::tf32) return std::bit_cast<std::uint32_t>(static_cast<float>(v));
  if (t == ElementType::bf16) return std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16;
  const int exp_bits = t == ElementType::f16 ? 5 : t == ElementType::e4m3 ? 4 : 5;
  const int man_bits = t == ElementType::f16 ? 10 : t == ElementType::e4m3 ? 3 : 2;
  if (v == 0) return 0;
  const std::uint32_t sign = v < 0 ? 1u << (exp_bits + man_bits) : 0;
  const int a = std::abs(v), e = std::bit_width(static_cast<unsigned>(a)) - 1;
  const auto mantissa = static_cast<std::uint32_t>((a - (1 << e)) << man_bits >> e);
  return sign | static_cast<std::uint32_t>(e + (1 << (exp_bits - 1)) - 1) << man_bits | mantissa;
}

int a_value(std::uint32_t m, std::uint32_t k) { return static_cast<int>((m * 3 + k * 5) % 7) - 3; }
int b_value(std::uint32_t n, std::uint32_t k) { return static_cast<int>((n * 2 + k * 3 + 1) % 5) - 2; }

// An operand tile of `rows` (M or N) x `k_elems` in a layout of the test's own, and the
// descriptor bits of each of its wgmma K slices.
struct Placement {
  Major major = Major::k;
  std::uint32_t swizzle = 0;  // 0, 32, 64, 128 bytes
};
struct Tile {
  std::vector<unsigned char> image;  // from the tile's base (1,024-byte aligned)
  std::vector<std::uint64_t> slice_desc;
};
std::uint32_t xor_row(std::uint32_t r, std::uint32_t w) { return (r * w) >> 7 & (w / 16 - 1); }
std::uint64_t descriptor(std::uint32_t start, std::uint32_t lbo, std::uint32_t sbo, std::uint32_t swizzle) {
  const std::uint64_t mode = swizzle == 128 ? 1 : swizzle == 64 ? 2 : swizzle == 32 ? 3 : 0;
  return (start >> 4 & 0x3FFF) | std::uint64_t(lbo >> 4 & 0x3FFF) << 16 | std::uint64_t(sbo >> 4 & 0x3FFF) << 32 |
         mode << 62;
}

// K-major: row mn of the tile holds its K elements; MN-major: "row" k holds MN elements.
Tile place(const Placement& p, ElementType t, std::uint32_t rows, std::uint32_t k_elems, std::uint32_t base,
           int (*value)(std::uint32_t, std::uint32_t)) {
  const std::uint32_t e = matrix::element_bytes(t), w = p.swizzle, slice_k = 32 / e;
  Tile tile;
  std::uint32_t lbo = 0, sbo = 0;
  auto byte_of = [&](std::uint32_t mn, std::uint32_t k) -> std::uint32_t {
    if (p.major == Major::k) {
      const std::uint32_t kb = k * e;
      if (w == 0) {  // 8x16-byte core matrices: along K at LBO = 128, along M at SBO
        lbo = 128;
        sbo = 128 * (k_elems * e / 16);
        return mn / 8 * sbo + kb / 16 * lbo + mn % 8 * 16 + kb % 16;
      }
      sbo = 8 * w;  // atoms of 8 rows x W bytes, stacked along M; K fits one atom row
      return mn / 8 * sbo + mn % 8 * w + ((kb / 16) ^ xor_row(mn % 8, w)) * 16 + kb % 16;
    }
    const std::uint32_t mb = mn * e;
    if (w == 0) {  // core matrices of 8 K rows x 16 bytes of MN: MN chunks at SBO, 8 K at LBO
      sbo = 128;
      lbo = 128 * (rows * e / 16);
      return mb / 16 * sbo + k / 8 * lbo + k % 8 * 16 + mb % 16;
    }
    lbo = 8 * w;                   // atoms of 8 K rows x W bytes of MN, along MN at LBO
    sbo = 8 * w * (rows * e / w);  // groups of 8 K after all of MN
    return mb / w * lbo + k / 8 * sbo + k % 8 * w + ((mb % w / 16) ^ xor_row(k % 8, w)) * 16 + mb % 16;
  };
  std::uint32_t size = 0;
  for (std::uint32_t mn = 0; mn < rows; ++mn)
    for (std::uint32_t k = 0; k < k_elems; ++k) size = std::max(size, byte_of(mn, k) + e);
  tile.image.assign((size + 1023) / 1024 * 1024, 0);
  for (std::uint32_t mn = 0; mn < rows; ++mn)
    for (std::uint32_t k = 0; k < k_elems; ++k) {
      const std::uint32_t bits = encode(t, value(mn, k));
      std::memcpy(&tile.image[byte_of(mn, k)], &bits, e);
    }
  for (std::uint32_t s = 0; s < k_elems / slice_k; ++s) {
    // A K slice starts 32 bytes further along a swizzled K-major row (the hardware swizzles
    // the address), at the next 8-K group (SBO / LBO) otherwise.
    std::uint32_t start = base;
    if (p.major == Major::k) start += w ? 32 * s : 2 * lbo * s;
    if (p.major == Major::mn) start += (w ? sbo : lbo) * 2 * s;
    tile.slice_desc.push_back(descriptor(start, lbo, sbo, w));
  }
  return tile;
}

struct Case {
  ElementType a_type = ElementType::f16, b_type = ElementType::f16;
  Placement a, b;
  std::uint32_t n = 64, k_elems = 16;
  bool accumulate = true, negate_a = false, negate_b = false, a_in_registers = false;
};

constexpr std::uint32_t kBBase = 32 * 1024;  // A's tile at 0, B's from 32 KiB

// The thread's four A registers for K slice `s` (the PTX A fragment figure: a0/a1 rows r and
// r + 8 at K c.., a2/a3 the same 8 further along K; c = 2 * (lane % 4) for 16-bit types).
void a_registers(const Case& c, std::uint32_t s, std::uint32_t regs[4]) {
  const std::uint32_t t = P::thread_idx() % 128, lane = t % 32, r = 16 * (t / 32) + lane / 4;
  const std::uint32_t e = matrix::element_bytes(c.a_type), per_reg = 4 / e, k0 = 32 / e * s;
  for (std::uint32_t j = 0; j < 4; ++j) {
    regs[j] = 0;
    for (std::uint32_t i = 0; i < per_reg; ++i) {
      std::uint32_t row, k;
      if (e == 4) {  // tf32: a0 (r, c) a1 (r+8, c) a2 (r, c+4) a3 (r+8, c+4), c = lane % 4
        row = r + 8 * (j % 2), k = lane % 4 + 4 * (j / 2);
      } else {  // a0 (r, c..) a1 (r+8, c..) a2 (r, c+K/2..) a3 (r+8, c+K/2..)
        row = r + 8 * (j % 2), k = per_reg * (lane % 4) + i + 16 / e * (j / 2);
      }
      regs[j] |= encode(c.a_type, a_value(row, k0 + k)) << (8 * e * i);
    }
  }
}

// Runs the case on one warp group; returns the first wrong element, or "".
std::string run_case(const Case& c) {
  const Tile a = place(c.a, c.a_type, 64, c.k_elems, 0, a_value);
  const Tile b = place(c.b, c.b_type, c.n, c.k_elems, kBBase, b_value);
  std::vector<float> d(64 * c.n, 0);
  LaunchShape shape;
  shape.threads_per_cta = 128;
  shape.warp_size = 32;
  shape.smem_bytes = kBBase + static_cast<std::uint32_t>(b.image.size());
  FunctionProgram prog(shape, [&] {
    const std::uint32_t t = P::thread_idx();
    if (t == 0) {
      auto copy = [](const std::vector<unsigned char>& img, std::uint32_t at) {
        for (std::size_t i = 0; i < img.size(); i += 8) {
          std::uint64_t w;
          std::memcpy(&w, &img[i], 8);
          P::store(reinterpret_cast<std::uint64_t*>(P::shared_memory() + at + i), w);
        }
      };
      copy(a.image, 0);
      copy(b.image, kBBase);
      P::fence_proxy_async_shared_cta();  // generic writes, read by the async proxy
    }
    P::sync_threads();
    std::vector<float> acc(c.n / 2);
    for (std::uint32_t v = 0; v < c.n / 2; ++v) {  // D's initial value: row - col
      const auto [row, col] = matrix::accumulator_element(t, v);
      acc[v] = static_cast<float>(static_cast<int>(row) - static_cast<int>(col));
    }
    host_matrix::WgmmaShape s;
    s.n = c.n;
    s.a_type = c.a_type, s.b_type = c.b_type, s.a_major = c.a.major, s.b_major = c.b.major;
    s.negate_a = c.negate_a, s.negate_b = c.negate_b;
    P::wgmma_fence();
    for (std::size_t slice = 0; slice < b.slice_desc.size(); ++slice) {
      s.accumulate = slice > 0 || c.accumulate;
      std::uint32_t regs[4];
      if (c.a_in_registers) a_registers(c, static_cast<std::uint32_t>(slice), regs);
      host_matrix::wgmma_mma_async(s, a.slice_desc[slice], c.a_in_registers ? regs : nullptr, b.slice_desc[slice],
                                   acc.data());
    }
    P::wgmma_commit_group();
    P::wgmma_wait_group(0);
    for (std::uint32_t v = 0; v < c.n / 2; ++v) {
      const auto [row, col] = matrix::accumulator_element(t, v);
      d[row * c.n + col] = acc[v];
    }
  });
  const ExploreResult r = explore_all(prog);
  if (r.bug) return "bug: " + r.bug->message;
  const int sign = (c.negate_a ? -1 : 1) * (c.negate_b ? -1 : 1);
  for (std::uint32_t m = 0; m < 64; ++m)
    for (std::uint32_t n = 0; n < c.n; ++n) {
      int want = c.accumulate ? static_cast<int>(m) - static_cast<int>(n) : 0;
      for (std::uint32_t k = 0; k < c.k_elems; ++k) want += sign * a_value(m, k) * b_value(n, k);
      if (d[m * c.n + n] != static_cast<float>(want))
        return "D[" + std::to_string(m) + "][" + std::to_string(n) + "] = " + std::to_string(d[m * c.n + n]) +
               ", want " + std::to_string(want);
    }
  return "";
}

}  // namespace

TEST_CASE("wgmma computes D = A*B + D for every input type (K-major, 128-byte swizzle)", "[wgmma][matrix]") {
  for (ElementType t : {ElementType::f16, ElementType::bf16, ElementType::tf32, ElementType::e4m3, ElementType::e5m2}) {
    Case c;
    c.a_type = c.b_type = t;
    c.a = c.b = {Major::k, 128};
    c.k_elems = 128 / matrix::element_bytes(t);  // one swizzle atom row: 4 K slices
    INFO(matrix::element_name(t));
    CHECK(run_case(c) == "");
  }
  SECTION("fp8 operands of the two kinds together") {
    Case c;
    c.a_type = ElementType::e4m3, c.b_type = ElementType::e5m2;
    c.a = c.b = {Major::k, 64};
    c.k_elems = 64;
    CHECK(run_case(c) == "");
  }
}

TEST_CASE("wgmma reads each swizzle mode and major-ness as laid out", "[wgmma][matrix]") {
  for (Major major : {Major::k, Major::mn})
    for (std::uint32_t swizzle : {0u, 32u, 64u, 128u})
      for (bool on_a : {true, false}) {
        Case c;
        (on_a ? c.a : c.b) = {major, swizzle};
        c.k_elems = major == Major::k && swizzle ? swizzle / 2 : 16;
        INFO((major == Major::k ? "K-major" : "MN-major") << ", swizzle " << swizzle << " on " << (on_a ? "A" : "B"));
        CHECK(run_case(c) == "");
      }
}

TEST_CASE("wgmma's scale-d, negated inputs, N = 8 and N = 256", "[wgmma][matrix]") {
  Case c;
  c.a = c.b = {Major::k, 32};
  SECTION("scale-d 0: D = A*B") {
    c.accumulate = false;
    CHECK(run_case(c) == "");
  }
  SECTION("imm-scale-a = -1") {
    c.negate_a = true;
    CHECK(run_case(c) == "");
  }
  SECTION("imm-scale-a = imm-scale-b = -1") {
    c.negate_a = c.negate_b = true;
    CHECK(run_case(c) == "");
  }
  SECTION("N = 8") {
    c.n = 8;
    CHECK(run_case(c) == "");
  }
  SECTION("N = 256, B MN-major with 128-byte swizzle") {
    c.n = 256;
    c.b = {Major::mn, 128};
    CHECK(run_case(c) == "");
  }
}

TEST_CASE("wgmma with A in registers gathers the rows from the lanes' fragments", "[wgmma][matrix]") {
  for (ElementType t : {ElementType::f16, ElementType::bf16, ElementType::tf32, ElementType::e4m3}) {
    Case c;
    c.a_type = c.b_type = t;
    c.a_in_registers = true;
    c.b = {Major::k, 64};
    c.k_elems = 64 / matrix::element_bytes(t);
    INFO(matrix::element_name(t));
    CHECK(run_case(c) == "");
  }
}

TEST_CASE("wgmma's reads cover its exact footprint: a store into a swizzled row's other K slice is no race",
          "[wgmma][matrix][race]") {
  // A: K-major, 128-byte swizzle, 64 rows x 64 f16; the wgmma reads its first K slice (32 of
  // each row's 128 bytes). Thread 128 (outside the warp group) stores 8 bytes of row 0 after
  // the block sync, ordered against nothing of the wgmma. Row 0's 16-byte chunks are not
  // permuted (0 XOR 0): the slice reads chunks 0 and 1.
  auto program = [](std::uint32_t offset) {
    const Tile a = place({Major::k, 128}, ElementType::f16, 64, 64, 0, a_value);
    const Tile b = place({Major::k, 128}, ElementType::f16, 8, 64, kBBase, b_value);
    LaunchShape shape;
    shape.threads_per_cta = 160;
    shape.warp_size = 32;
    shape.smem_bytes = kBBase + 8 * 1024;
    return FunctionProgram(shape, [a, b, offset] {
      P::sync_threads();
      if (P::thread_idx() == 128) {
        P::store(reinterpret_cast<std::uint64_t*>(P::shared_memory() + offset), std::uint64_t{1});
        return;
      }
      if (P::thread_idx() > 128) return;
      float acc[4] = {};
      host_matrix::WgmmaShape s;
      s.n = 8;
      P::wgmma_fence();
      host_matrix::wgmma_mma_async(s, a.slice_desc[0], nullptr, b.slice_desc[0], acc);
      P::wgmma_commit_group();
      P::wgmma_wait_group(0);
    });
  };
  SECTION("into chunk 5 of row 0, which the slice does not read: no race") {
    FunctionProgram prog = program(5 * 16);
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
  }
  SECTION("into chunk 1 of row 0, which it reads: a race") {
    FunctionProgram prog = program(16);
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
  SECTION("past its operands, between A and B: no race") {
    FunctionProgram prog = program(16 * 1024);
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
  }
}

TEST_CASE("a wgmma PTX has not, or one reading past the CTA's shared memory, is a misuse", "[wgmma][matrix]") {
  auto program = [](host_matrix::WgmmaShape s, std::uint64_t desc_b) {
    LaunchShape shape;
    shape.threads_per_cta = 128;
    shape.warp_size = 32;
    shape.smem_bytes = 4096;
    return FunctionProgram(shape, [s, desc_b] {
      float acc[128] = {};
      host_matrix::wgmma_mma_async(s, descriptor(0, 128, 256, 0), nullptr, desc_b, acc);
    });
  };
  host_matrix::WgmmaShape s;
  SECTION("B's footprint past the 4 KiB of shared memory") {  // n8: its second K chunk at 3,968 + 128
    FunctionProgram prog = program(s, descriptor(3968, 128, 256, 0));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::operand_range);
  }
  SECTION("an MN-major tf32 operand (imm-trans is for .f16 / .bf16)") {
    s.a_type = s.b_type = ElementType::tf32;
    s.b_major = Major::mn;
    FunctionProgram prog = program(s, descriptor(1024, 128, 256, 0));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::operand_range);
  }
  SECTION("N = 12") {
    s.n = 12;
    FunctionProgram prog = program(s, descriptor(1024, 128, 256, 0));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::operand_range);
  }
}
