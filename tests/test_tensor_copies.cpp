// Tensor copies with tensor maps (cp.async.bulk.tensor, tiled): the encode rules of
// cuTensorMapEncodeTiled, the bytes a box moves (the swizzle tables of PTX ISA 5.5.7, out-of-bounds
// fill, element strides), and the runtime's loads, multicasts, stores and reduce-adds with the race
// detector judging the rows a box really touches.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "sim/runtime/host_tma.hpp"
#include "sim/runtime/tensor_map.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;
namespace tma = mbcheck::sim::tma;

namespace {

// A map as the driver API takes its arguments (dims and box dimension 0 first).
struct Map {
  alignas(64) unsigned char storage[128] = {};
  std::string error;
  Map(tma::DataType t, std::vector<std::uint64_t> dims, std::vector<std::uint64_t> strides,
      std::vector<std::uint32_t> box, std::vector<std::uint32_t> es, tma::Swizzle sw, const void* global,
      tma::OobFill fill = tma::OobFill::zero, tma::Interleave il = tma::Interleave::none) {
    tma::TiledArgs a;
    a.map_address = storage;
    a.dtype = static_cast<std::uint32_t>(t);
    a.rank = static_cast<std::uint32_t>(dims.size());
    a.global = global;
    a.dims = dims.data();
    a.strides = strides.data();
    a.box = box.data();
    a.elem_strides = es.data();
    a.interleave = static_cast<std::uint32_t>(il);
    a.swizzle = static_cast<std::uint32_t>(sw);
    a.oob_fill = static_cast<std::uint32_t>(fill);
    tma::TensorMap m;
    error = tma::encode_tiled(a, m);
    if (error.empty()) std::memcpy(storage, &m, sizeof m);
  }
  const tma::TensorMap& map() const { return *tma::as_map(storage); }
};

// For every shared-memory byte of the box (offset from its start): the global byte it holds
// (offset from the tensor's start), -1 where it is filled.
std::map<std::uint32_t, std::int64_t> byte_map(const tma::TensorMap& m, std::vector<std::int32_t> coords,
                                               std::uint32_t smem_offset) {
  std::vector<tma::Segment> segs;
  REQUIRE(tma::box_segments(m, coords.data(), smem_offset, segs).empty());
  std::map<std::uint32_t, std::int64_t> out;
  for (const auto& s : segs)
    for (std::uint32_t i = 0; i < s.bytes; ++i) out[s.smem + i] = s.global < 0 ? -1 : s.global + i;
  return out;
}

// PTX ISA 5.5.7's tables: row r (a 128-byte line of shared memory) lists the 16-byte chunk held at
// each position 0..7 of the line.
constexpr int kSwizzle32[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};
constexpr int kSwizzle64[4][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4}};
constexpr int kSwizzle128[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5},
                                   {3, 2, 1, 0, 7, 6, 5, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
                                   {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};

int table_chunk(tma::Swizzle sw, int line, int position) {
  switch (sw) {
    case tma::Swizzle::b32: return kSwizzle32[line % 2][position];
    case tma::Swizzle::b64: return kSwizzle64[line % 4][position];
    case tma::Swizzle::b128: return kSwizzle128[line % 8][position];
    default: return position;
  }
}

alignas(1024) unsigned char g_tensor[64 * 1024];

}  // namespace

TEST_CASE("each swizzle mode places 16-byte chunks as PTX's tables do", "[tma][swizzle]") {
  // A 2D byte tensor of 16 rows of 128 bytes; a box of 8 rows of span bytes (the swizzle's own
  // width) at the shared-memory offsets 0 and 384 (a base offset of 3 lines).
  for (auto [sw, span] : {std::pair{tma::Swizzle::none, 128u}, std::pair{tma::Swizzle::b32, 32u},
                          std::pair{tma::Swizzle::b64, 64u}, std::pair{tma::Swizzle::b128, 128u}}) {
    for (std::uint32_t base : {0u, 384u}) {
      Map m(tma::DataType::u8, {128, 16}, {128}, {span, 8}, {1, 1}, sw, g_tensor);
      REQUIRE(m.error.empty());
      const auto bytes = byte_map(m.map(), {0, 0}, base);
      REQUIRE(bytes.size() == 8 * span);
      // Unswizzled, box byte (row y, column x) sits at base + y * span + x; the table says which
      // chunk of that address's 128-byte line holds it.
      for (std::uint32_t y = 0; y < 8; ++y)
        for (std::uint32_t x = 0; x < span; ++x) {
          const std::uint32_t linear = base + y * span + x;
          const int line = static_cast<int>(linear / 128), position = static_cast<int>(linear % 128 / 16);
          int at = 0;  // the position in the line whose table entry is this chunk
          while (table_chunk(sw, line, at) != position) ++at;
          const std::uint32_t smem =
              static_cast<std::uint32_t>(line) * 128 + static_cast<std::uint32_t>(at) * 16 + linear % 16 - base;
          INFO("swizzle " << static_cast<int>(sw) << " base " << base << " row " << y << " byte " << x);
          CHECK(bytes.at(smem) == static_cast<std::int64_t>(y * 128 + x));
        }
    }
  }
}

TEST_CASE("a swizzled box that covers part of a 128-byte line is refused, not sent outside itself", "[tma][swizzle]") {
  // 2 rows of 16 bytes under the 128-byte swizzle at offset 256 (line 2): chunk 0 of line 2
  // would go to position 2, past the box's 32 bytes.
  Map m(tma::DataType::u8, {16, 2}, {16}, {16, 2}, {1, 1}, tma::Swizzle::b128, g_tensor);
  REQUIRE(m.error.empty());
  std::vector<tma::Segment> segs;
  const std::int32_t crd[] = {0, 0};
  CHECK_THAT(tma::box_segments(m.map(), crd, 256, segs), Catch::Contains("outside the box's 32 bytes"));
  CHECK(tma::box_segments(m.map(), crd, 128, segs).empty());  // line 1: chunks 0 and 1 swap, inside
}

TEST_CASE("CUTLASS's 128B layout atom Swizzle<3,4,3> is the 128-byte mode", "[tma][swizzle]") {
  // cute/swizzle.hpp: Swizzle<B=3, M=4, S=3>(offset) = offset ^ ((offset & (0b111 << 7)) >> 3),
  // written out; it must agree with the engine's 128B mode on every offset of a 4 KiB buffer.
  for (std::uint32_t a = 0; a < 4096; ++a) {
    const std::uint32_t cute = a ^ ((a & (0x7u << 7)) >> 3);
    REQUIRE(tma::swizzle_address(tma::Swizzle::b128, a) == cute);
  }
}

TEST_CASE("out-of-bounds elements of a box are filled; zeros or a NaN", "[tma][oob]") {
  // A 3 x 4 float tensor (3 columns, 4 rows, rows 16 bytes apart); a 4 x 4 box at (-1, 2): its
  // element (i, j) is the tensor's (i - 1, j + 2), in bounds when 0 <= i-1 < 3 and j + 2 < 4.
  Map m(tma::DataType::f32, {3, 4}, {16}, {4, 4}, {1, 1}, tma::Swizzle::none, g_tensor);
  REQUIRE(m.error.empty());
  const auto bytes = byte_map(m.map(), {-1, 2}, 0);
  REQUIRE(bytes.size() == 64);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) {
      const bool in = i - 1 >= 0 && i - 1 < 3 && j + 2 < 4;
      const auto at = static_cast<std::uint32_t>((j * 4 + i) * 4);
      CHECK(bytes.at(at) == (in ? (j + 2) * 16 + (i - 1) * 4 : -1));
    }
  SECTION("the fills") {
    unsigned char out[8];
    tma::oob_fill(m.map(), out, 8);
    for (unsigned char b : out) CHECK(b == 0);
    Map nan(tma::DataType::f32, {3, 4}, {16}, {4, 4}, {1, 1}, tma::Swizzle::none, g_tensor,
            tma::OobFill::nan_request_zero_fma);
    float f[2];
    tma::oob_fill(nan.map(), reinterpret_cast<unsigned char*>(f), 8);
    CHECK(std::isnan(f[0]));
    CHECK(std::isnan(f[1]));
  }
}

TEST_CASE("element strides take every k-th element; dimension 0's is ignored without interleave", "[tma][stride]") {
  // 8 x 8 u32 tensor (rows 32 bytes apart); box {4, 6} with strides {3, 2}: 4 columns, rows
  // c1, c1 + 2, c1 + 4 (ceil(6 / 2) = 3 of them); the 3 in dimension 0 is ignored.
  Map m(tma::DataType::u32, {8, 8}, {32}, {4, 6}, {3, 2}, tma::Swizzle::none, g_tensor);
  REQUIRE(m.error.empty());
  CHECK(tma::box_bytes(m.map()) == 4 * 3 * 4);
  const auto bytes = byte_map(m.map(), {2, 1}, 0);
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 4; ++i)
      CHECK(bytes.at(static_cast<std::uint32_t>((k * 4 + i) * 4)) == (1 + 2 * k) * 32 + (2 + i) * 4);
}

TEST_CASE("a 3D box walks dimension 0 fastest, then 1, then 2", "[tma][box]") {
  // 4 x 3 x 5 u64 tensor: rows of 4 elements padded to 48 bytes, planes 160 bytes apart.
  Map m(tma::DataType::u64, {4, 3, 5}, {48, 160}, {2, 2, 3}, {1, 1, 1}, tma::Swizzle::none, g_tensor);
  REQUIRE(m.error.empty());
  const auto bytes = byte_map(m.map(), {1, 1, 2}, 0);
  REQUIRE(bytes.size() == 2 * 2 * 3 * 8);
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) {
        const auto at = static_cast<std::uint32_t>(((z * 2 + y) * 2 + x) * 8);
        const bool in = 2 + z < 5 && 1 + y < 3;
        CHECK(bytes.at(at) == (in ? (2 + z) * 160 + (1 + y) * 48 + (1 + x) * 8 : -1));
      }
}

TEST_CASE("cuTensorMapEncodeTiled's requirements: a map breaking one is refused with the rule", "[tma][encode]") {
  using T = tma::DataType;
  using S = tma::Swizzle;
  auto err = [](Map m) { return m.error; };
  CHECK(err(Map(T::f16, {64, 64}, {128}, {64, 8}, {1, 1}, S::b128, g_tensor)).empty());
  CHECK_THAT(err(Map(T::f16, {}, {}, {}, {}, S::none, g_tensor)), Catch::Contains("tensorRank 0 must be 1..5"));
  CHECK_THAT(err(Map(T::u8, {2, 2, 2, 2, 2, 2}, {16, 32, 64, 128, 256}, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, S::none,
                     g_tensor)),
             Catch::Contains("tensorRank 6"));
  CHECK_THAT(err(Map(T::f16, {64, 64}, {128}, {64, 8}, {1, 1}, S::none, g_tensor + 8)),
             Catch::Contains("must be 16-byte aligned"));
  CHECK_THAT(err(Map(T::f16, {64, 64}, {120}, {64, 8}, {1, 1}, S::none, g_tensor)),
             Catch::Contains("globalStrides[0] = 120 must be a multiple of 16"));
  CHECK_THAT(err(Map(T::f16, {64, 64}, {128}, {64, 257}, {1, 1}, S::none, g_tensor)),
             Catch::Contains("boxDim[1] = 257 must be 1..256"));
  CHECK_THAT(err(Map(T::f16, {64, 64}, {128}, {4, 8}, {1, 1}, S::none, g_tensor)),
             Catch::Contains("multiple of 16 bytes"));
  CHECK_THAT(err(Map(T::f16, {64, 64}, {128}, {64, 8}, {1, 9}, S::none, g_tensor)),
             Catch::Contains("elementStrides[1] = 9 must be 1..8"));
  CHECK_THAT(err(Map(T::f16, {64, 64}, {128}, {64, 8}, {1, 1}, S::b64, g_tensor)),
             Catch::Contains("exceeds the swizzle span of 64 B"));
  CHECK_THAT(err(Map(T::s32, {64, 64}, {256}, {16, 8}, {1, 1}, S::none, g_tensor, tma::OobFill::nan_request_zero_fma)),
             Catch::Contains("needs a floating-point type"));
  CHECK_THAT(err(Map(T::f16, {16, 4, 4}, {32, 128}, {16, 4, 4}, {1, 1, 1}, S::none, g_tensor, tma::OobFill::zero,
                     tma::Interleave::b32)),
             Catch::Contains("INTERLEAVE_32B requires SWIZZLE_32B"));
  CHECK_THAT(err(Map(T::f16, {64, 0}, {128}, {64, 8}, {1, 1}, S::none, g_tensor)), Catch::Contains("globalDim[1] = 0"));
}

namespace {

// Shared memory: barriers from byte 0, the box at byte 1024 (1024-aligned: swizzle base 0).
unsigned char* box_smem() { return P::shared_memory() + 1024; }
LaunchShape tma_shape(std::uint32_t threads_per_cta) {
  LaunchShape s = threads(threads_per_cta);
  s.smem_bytes = 4096;
  return s;
}

}  // namespace

TEST_CASE("a tensor load completes its box's bytes on the barrier; the waiter reads the swizzled tile", "[tma][load]") {
  // A 32 x 16 fp16-sized (u16) tensor; an 8 x 8 box at (8, 4), 128B swizzle not allowed for a
  // 16-byte row, so 32B swizzle on 16-element rows (32 bytes). Thread 0 arms and issues, thread 1
  // waits and reads every element through the independent layout.
  struct Load : Program {
    alignas(64) Map map{tma::DataType::u16, {32, 16}, {64}, {16, 8}, {1, 1}, tma::Swizzle::b32, g_tensor};
    LaunchShape shape() const override { return tma_shape(2); }
    void reset() override {
      auto* t = reinterpret_cast<std::uint16_t*>(g_tensor);
      for (int i = 0; i < 32 * 16; ++i) t[i] = static_cast<std::uint16_t>(i);
    }
    void thread_main() override {
      if (P::thread_idx() == 0) smem_bar(0).init(1);
      P::sync_threads();
      if (P::thread_idx() == 0) {
        smem_bar(0).arrive_expect_tx(16 * 8 * 2);
        const std::int32_t crd[] = {8, 4};
        HostTma::load(map.storage, crd, box_smem(), smem_bar(0).raw());
      } else {
        smem_bar(0).wait(0);
        bool ok = true;
        for (std::uint32_t y = 0; y < 8; ++y)
          for (std::uint32_t x = 0; x < 16; x += 4) {
            // Byte address of (y, x) unswizzled: 1024 + y * 32 + x * 2; 32B mode: odd 128-byte
            // lines swap the 16-byte chunks of each pair.
            std::uint32_t a = 1024 + y * 32 + x * 2;
            if ((a / 128) % 2 == 1) a ^= 16;
            std::int64_t word;
            word = P::load(reinterpret_cast<std::int64_t*>(P::shared_memory() + a));
            std::uint16_t e[4];
            std::memcpy(e, &word, 8);
            for (std::uint32_t k = 0; k < 4; ++k) ok = ok && e[k] == (4 + y) * 32 + 8 + x + k;
          }
        P::check(ok, "the box's elements where the swizzle puts them");
      }
    }
  } prog;
  REQUIRE(prog.map.error.empty());
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("a tensor load multicast lands in each CTA of the mask on its own barrier", "[tma][multicast][cluster]") {
  struct Multicast : Program {
    alignas(64) Map map{tma::DataType::u32, {16, 4}, {64}, {16, 4}, {1, 1}, tma::Swizzle::none, g_tensor};
    LaunchShape shape() const override {
      LaunchShape s = tma_shape(1);
      s.cluster_x = 2;
      s.ctas = 2;
      return s;
    }
    void reset() override {
      auto* t = reinterpret_cast<std::uint32_t*>(g_tensor);
      for (int i = 0; i < 64; ++i) t[i] = 1000u + static_cast<std::uint32_t>(i);
    }
    void thread_main() override {
      smem_bar(0).init(1);
      P::fence_mbarrier_init_release_cluster();
      P::barrier_cluster_arrive_relaxed();
      P::barrier_cluster_wait();
      smem_bar(0).arrive_expect_tx(256);
      const std::int32_t crd[] = {0, 0};
      if (P::cluster_ctarank() == 0) HostTma::load_multicast(map.storage, crd, box_smem(), smem_bar(0).raw(), 0x3);
      smem_bar(0).wait(0);
      const std::int64_t last = P::load(reinterpret_cast<std::int64_t*>(box_smem() + 248));
      P::check(last == ((std::int64_t{1063} << 32) | 1062), "the multicast's last elements");
      P::barrier_cluster_arrive();
      P::barrier_cluster_wait();
    }
  } prog;
  REQUIRE(prog.map.error.empty());
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

namespace {

// One thread fills a 4-row box of 16-byte rows (u32) in shared memory and stores it (or
// reduce-adds it) into a tensor whose rows are 64 bytes apart; `rewrite`: it rewrites the box
// after wait_group.read (or, with `early`, before it).
struct Store : Program {
  alignas(64) Map map{tma::DataType::u32, {16, 8}, {64}, {4, 4}, {1, 1}, tma::Swizzle::none, g_tensor};
  bool reduce = false, early = false;
  int other = -1;  // thread 1 writes this global word (u32 index) concurrently, unless -1
  LaunchShape shape() const override { return tma_shape(other >= 0 ? 2 : 1); }
  void reset() override {
    auto* t = reinterpret_cast<std::uint32_t*>(g_tensor);
    for (int i = 0; i < 16 * 8; ++i) t[i] = 1;
  }
  void thread_main() override {
    if (P::thread_idx() == 1) {
      P::store(reinterpret_cast<std::int64_t*>(g_tensor) + other / 2, std::int64_t{0x0000000100000001});
      return;
    }
    for (int i = 0; i < 8; ++i) {
      const std::int64_t v = (std::int64_t{2 * i + 1} << 32) | (2 * i);
      P::store(reinterpret_cast<std::int64_t*>(box_smem()) + i, v);
    }
    P::fence_proxy_async_shared_cta();
    const std::int32_t crd[] = {4, 2};  // columns 4..7 of rows 2..5
    if (reduce)
      HostTma::reduce_add(map.storage, crd, box_smem());
    else
      HostTma::store(map.storage, crd, box_smem());
    P::cp_async_bulk_commit_group();
    if (early) P::store(reinterpret_cast<std::int64_t*>(box_smem()), std::int64_t{7});
    P::cp_async_bulk_wait_group_read(0);
    P::store(reinterpret_cast<std::int64_t*>(box_smem()), std::int64_t{7});
    P::cp_async_bulk_wait_group(0);
  }
  std::optional<std::string> check_result() override {
    const auto* t = reinterpret_cast<const std::uint32_t*>(g_tensor);
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 16; ++x) {
        const bool in = y >= 2 && y < 6 && x >= 4 && x < 8;
        const std::uint32_t box = static_cast<std::uint32_t>((y - 2) * 4 + (x - 4));
        const std::uint32_t want = in ? (reduce ? 1 + box : box) : 1;
        if (other < 0 && t[y * 16 + x] != want) return "element (" + std::to_string(x) + ", " + std::to_string(y) + ")";
      }
    return std::nullopt;
  }
};

}  // namespace

TEST_CASE("a tensor store writes the box's rows once its group completes; wait_group.read frees the source",
          "[tma][store]") {
  SECTION("rewrite after wait_group.read: no race, the rows written") {
    Store prog;
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("rewrite before wait_group.read: a race with the store's read") {
    Store prog;
    prog.early = true;
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
  SECTION("reduce-add: each element of the box added to the tensor's") {
    Store prog;
    prog.reduce = true;
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
}

TEST_CASE("the race detector sees a box's rows, not the gaps between them", "[tma][race]") {
  // The stored box covers u32 columns 4..7 of rows 2..5 (rows 64 bytes apart). Thread 1 writes
  // the 8-byte word at u32 index `other`, unordered with the store.
  SECTION("a word in the gap between rows 2 and 3 (columns 8..9 of row 2): no race") {
    Store prog;
    prog.other = 2 * 16 + 8;
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
  }
  SECTION("a word inside the box (columns 4..5 of row 3): a race with the store's write") {
    Store prog;
    prog.other = 3 * 16 + 4;
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("a tensor copy with something that is not a tensor map is a misuse", "[tma][misuse]") {
  struct Bad : Program {
    alignas(64) unsigned char junk[128] = {};
    LaunchShape shape() const override { return tma_shape(1); }
    void reset() override {}
    void thread_main() override {
      const std::int32_t crd[] = {0, 0};
      HostTma::store(junk, crd, box_smem());
    }
  } prog;
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->misuse == MisuseKind::operand_range);
  CHECK_THAT(r.bug->message, Catch::Contains("not a tensor map"));
}

TEST_CASE("a tensor store that every lane of a warp issues alike is one store; two warps' are two",
          "[tma][store][warp-uniform]") {
  // Thread 0 fills the box; after a sync every thread issues the same store of it, commits and
  // waits, as CUTLASS's sm90 epilogue does from all 32 lanes of its warp 0.
  struct Uniform : Program {
    alignas(64) Map map{tma::DataType::u32, {16, 8}, {64}, {4, 4}, {1, 1}, tma::Swizzle::none, g_tensor};
    std::uint32_t warp_size = 4;
    LaunchShape shape() const override {
      LaunchShape s = tma_shape(4);
      s.warp_size = warp_size;
      return s;
    }
    void reset() override { std::memset(g_tensor, 0, 16 * 8 * 4); }
    void thread_main() override {
      if (P::thread_idx() == 0) {
        for (int i = 0; i < 8; ++i) P::store(reinterpret_cast<std::int64_t*>(box_smem()) + i, std::int64_t{i + 1});
        P::fence_proxy_async_shared_cta();
      }
      P::sync_threads();
      const std::int32_t crd[] = {0, 0};
      HostTma::store(map.storage, crd, box_smem());
      P::cp_async_bulk_commit_group();
      P::cp_async_bulk_wait_group(0);
    }
    std::optional<std::string> check_result() override {
      const auto* t = reinterpret_cast<const std::int64_t*>(g_tensor);
      return t[0] == 1 && t[1] == 2 && t[8] == 3 ? std::nullopt : std::optional<std::string>("the stored box");
    }
  };
  SECTION("four lanes of one warp: one store, each lane's group tracking its copy") {
    Uniform prog;
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("two warps of two lanes: two stores of the same bytes, unordered: a race") {
    Uniform prog;
    prog.warp_size = 2;
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("a load of a box partly out of bounds completes the box's full bytes; the waiter reads zeros there",
          "[tma][load][oob]") {
  // A 4 x 2 u32 tensor (rows 16 bytes apart) and a 4 x 4 box at (0, 1): row 1 is in bounds, rows
  // 2..4 are not. The barrier expects all 64 bytes.
  struct Partial : Program {
    alignas(64) Map map{tma::DataType::u32, {4, 2}, {16}, {4, 4}, {1, 1}, tma::Swizzle::none, g_tensor};
    LaunchShape shape() const override { return tma_shape(1); }
    void reset() override {
      auto* t = reinterpret_cast<std::uint32_t*>(g_tensor);
      for (std::uint32_t i = 0; i < 8; ++i) t[i] = 10 + i;
    }
    void thread_main() override {
      auto* w = reinterpret_cast<std::int64_t*>(box_smem());
      for (int i = 0; i < 8; ++i) P::store(w + i, std::int64_t{-1});  // not zeros before the load
      P::fence_proxy_async_shared_cta();
      smem_bar(0).init(1);
      smem_bar(0).arrive_expect_tx(64);
      const std::int32_t crd[] = {0, 1};
      HostTma::load(map.storage, crd, box_smem(), smem_bar(0).raw());
      smem_bar(0).wait(0);
      P::check(P::load(w) == ((std::int64_t{15} << 32) | 14) && P::load(w + 2) == 0 && P::load(w + 7) == 0,
               "row 1 of the tensor, then zeros");
    }
  } prog;
  REQUIRE(prog.map.error.empty());
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("with interleave, dimension 0's element stride applies", "[tma][stride][interleave]") {
  // NC/8HWC8-style: u16, dimension 0 the 8 interleaved channels (16 bytes), then 4 x 4 pixels.
  // Box {8, 2, 2} with strides {2, 1, 1}: channels 0, 2, 4, 6 of each pixel (ceil(8 / 2) = 4).
  Map m(tma::DataType::u16, {8, 4, 4}, {16, 64}, {8, 2, 2}, {2, 1, 1}, tma::Swizzle::none, g_tensor, tma::OobFill::zero,
        tma::Interleave::b16);
  REQUIRE(m.error.empty());
  CHECK(tma::box_bytes(m.map()) == 4 * 2 * 2 * 2);
  const auto bytes = byte_map(m.map(), {0, 1, 2}, 0);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 2; ++y)
      for (int c = 0; c < 4; ++c)
        CHECK(bytes.at(static_cast<std::uint32_t>(((z * 2 + y) * 4 + c) * 2)) ==
              (2 + z) * 64 + (1 + y) * 16 + 2 * c * 2);
}
