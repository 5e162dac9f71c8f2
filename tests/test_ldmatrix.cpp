// ldmatrix and stmatrix on the host: warp collectives whose lanes each name one 16-byte row;
// the fragments are those of the PTX ISA's figures (written out here from the figures, not from
// the engine), and each row is a load or store of the lane that named it for the race detector.
#include <catch2/catch.hpp>

#include <cstring>

#include "sim/check.hpp"
#include "sim/host_matrix.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {

constexpr std::uint32_t kRows = 1024;  // row r of matrix m at kRows + 32 * (8 * m + r): 16-byte gaps between rows

LaunchShape warps(std::uint32_t n) {
  LaunchShape shape;
  shape.threads_per_cta = 32 * n;
  shape.warp_size = 32;
  shape.smem_bytes = 4096;
  return shape;
}
unsigned char* row_address(std::uint32_t m, std::uint32_t r) { return P::shared_memory() + kRows + 32 * (8 * m + r); }
std::uint16_t element(std::uint32_t m, std::uint32_t r, std::uint32_t c) {
  return static_cast<std::uint16_t>(1000 * m + 10 * r + c);
}
// The figure: lane t holds in register m the pair at row t / 4, columns 2 * (t % 4) and + 1
// (low half first); with .trans the pair at rows 2 * (t % 4) and + 1 of column t / 4.
std::uint32_t fragment(std::uint32_t lane, std::uint32_t m, bool trans) {
  const std::uint32_t i = lane / 4, j = 2 * (lane % 4);
  return trans ? element(m, j, i) | static_cast<std::uint32_t>(element(m, j + 1, i)) << 16
               : element(m, i, j) | static_cast<std::uint32_t>(element(m, i, j + 1)) << 16;
}
void write_matrices() {  // by lane 0 of warp 0, then a __syncwarp orders them for the warp
  if (P::thread_idx() == 0)
    for (std::uint32_t m = 0; m < 4; ++m)
      for (std::uint32_t r = 0; r < 8; ++r)
        for (std::uint32_t c = 0; c < 8; c += 4) {
          std::uint64_t w = 0;
          for (std::uint32_t q = 0; q < 4; ++q) w |= static_cast<std::uint64_t>(element(m, r, c + q)) << (16 * q);
          P::store(reinterpret_cast<std::uint64_t*>(row_address(m, r) + 2 * c), w);
        }
}

}  // namespace

TEST_CASE("ldmatrix gives each lane the fragments of the PTX figure", "[matrix][collective]") {
  for (std::uint32_t count : {1u, 2u, 4u})
    for (bool trans : {false, true}) {
      FunctionProgram prog(warps(1), [count, trans] {
        write_matrices();
        P::syncwarp();
        const std::uint32_t lane = P::lane_idx();
        // Lanes past 8 * count give no address the instruction uses: a null one must not matter.
        const void* row = lane < 8 * count ? row_address(lane / 8, lane % 8) : nullptr;
        std::uint32_t out[4] = {};
        host_matrix::ldmatrix(row, count, trans, out);
        for (std::uint32_t m = 0; m < count; ++m) P::check(out[m] == fragment(lane, m, trans), "the figure's fragment");
      });
      INFO("x" << count << (trans ? ".trans" : ""));
      const ExploreResult r = explore_all(prog);
      CHECK_FALSE(r.bug);
      CHECK(r.stats.executions == 1);
    }
}

TEST_CASE("stmatrix writes each lane's fragments to the rows the lanes name", "[matrix][collective]") {
  for (std::uint32_t count : {1u, 2u, 4u})
    for (bool trans : {false, true}) {
      FunctionProgram prog(warps(1), [count, trans] {
        const std::uint32_t lane = P::lane_idx();
        std::uint32_t in[4];
        for (std::uint32_t m = 0; m < 4; ++m) in[m] = fragment(lane, m, trans);
        host_matrix::stmatrix(lane < 8 * count ? row_address(lane / 8, lane % 8) : nullptr, count, trans, in);
        P::syncwarp();
        if (lane != 0) return;
        for (std::uint32_t m = 0; m < count; ++m)
          for (std::uint32_t r = 0; r < 8; ++r)
            for (std::uint32_t c = 0; c < 8; ++c) {
              const auto* p = reinterpret_cast<const std::uint16_t*>(row_address(m, r)) + c;
              P::check(P::load(p) == element(m, r, c), "the element the figure puts there");
            }
        // The gaps between rows are not written.
        P::check(P::load(reinterpret_cast<const std::uint64_t*>(row_address(0, 0) + 16)) == 0, "a gap");
      });
      INFO("x" << count << (trans ? ".trans" : ""));
      const ExploreResult r = explore_all(prog);
      CHECK_FALSE(r.bug);
    }
}

TEST_CASE("stmatrix's rows race with an unordered store to the same row, not to another", "[matrix][race]") {
  // Warp 0 stores four matrices; thread 32 (warp 1) stores into row `target` with nothing
  // ordering it against the warp's stmatrix.
  auto program = [](std::uint32_t target_offset) {
    return FunctionProgram(warps(2), [target_offset] {
      if (P::thread_idx() == 32) {
        P::store(reinterpret_cast<std::uint64_t*>(P::shared_memory() + kRows + target_offset), std::uint64_t{7});
        return;
      }
      if (P::thread_idx() >= 32) return;
      const std::uint32_t lane = P::lane_idx();
      const std::uint32_t in[4] = {lane, lane, lane, lane};
      host_matrix::stmatrix(row_address(lane / 8, lane % 8), 4, false, in);
    });
  };
  SECTION("the same row: a race") {
    FunctionProgram prog = program(32 * 9 + 8);  // row 1 of matrix 1, its second half
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
  SECTION("the gap after a row: none") {
    FunctionProgram prog = program(32 * 9 + 16);
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
  }
}

TEST_CASE("ldmatrix reads race with an unordered store; a warp of fewer than 32 lanes is a misuse", "[matrix][race]") {
  SECTION("race") {
    FunctionProgram prog(warps(2), [] {
      if (P::thread_idx() == 32) P::store(reinterpret_cast<std::uint64_t*>(row_address(0, 3)), std::uint64_t{1});
      if (P::thread_idx() >= 32) return;
      std::uint32_t out[1];
      host_matrix::ldmatrix(row_address(0, P::lane_idx() % 8), 1, false, out);
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
  SECTION("misuse") {
    LaunchShape shape = warps(1);
    shape.warp_size = 4;
    shape.threads_per_cta = 4;
    FunctionProgram prog(shape, [] {
      std::uint32_t out[1];
      host_matrix::ldmatrix(row_address(0, 0), 1, false, out);
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::misuse);
  }
}
