// Warp and warp-group collectives as rendezvous: __syncwarp, elect.sync, shfl.sync and the
// wgmma fence / commit_group / wait_group of a warp group.
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {
LaunchShape warps(std::uint32_t n, std::uint32_t warp_size = 4) {
  LaunchShape shape;
  shape.warp_size = warp_size;
  shape.threads_per_cta = warp_size * n;
  shape.smem_bytes = 2048;
  return shape;
}

// Lane 0 of a warp of 4 is the only one that arrives on barrier 0 (count 1) after each of two
// rounds; every lane waits for round r's phase of barrier 1, which thread 4 (another warp)
// completes once it saw lane 0's arrival. Without something that keeps the other lanes with
// lane 0, lane 1 may still wait for phase 0 of barrier 1 when it completed phase 1 and 2:
// phase aliasing. With a __syncwarp per round they cannot fall two rounds behind.
void lane_zero_signals(bool converge) {
  const std::uint32_t me = P::thread_idx();
  if (me == 0) {
    smem_bar(0).init(1);
    smem_bar(1).init(1);
  }
  P::sync_threads();
  if (me < 4) {
    for (int round = 0; round < 3; ++round) {
      smem_bar(1).wait(round - 1);  // round 0 waits for the phase before init
      if (converge) P::syncwarp();
      if (me == 0) smem_bar(0).arrive();
    }
  } else if (me == 4) {
    for (int round = 0; round < 3; ++round) {
      smem_bar(0).wait(round);
      smem_bar(1).arrive();
    }
  }
}
}  // namespace

TEST_CASE("__syncwarp keeps every lane with the lane that signals for the warp", "[collective][explore]") {
  SECTION("without it, a lane falls two phases behind: aliasing") {
    FunctionProgram prog(warps(2), [] { lane_zero_signals(false); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::aliasing);
  }
  SECTION("with it: no alarm") {
    FunctionProgram prog(warps(2), [] { lane_zero_signals(true); });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
}

TEST_CASE("a __syncwarp round orders the warp's stores before its loads", "[collective][explore]") {
  FunctionProgram prog(warps(1), [] {
    const auto lane = static_cast<int>(P::lane_idx());
    P::store(smem_word(lane), std::int64_t{lane});
    P::syncwarp(0xF);
    P::check(P::load(smem_word((lane + 1) % 4)) == (lane + 1) % 4, "the neighbour's store");
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("elect.sync elects the lowest lane of the mask, once", "[collective]") {
  FunctionProgram prog(warps(1),
                       [] {
                         if (P::elect_sync(0xE)) {
                           P::check(P::lane_idx() == 1, "the lowest lane of 0xE");
                           P::store(smem_word(0), std::int64_t{1});
                         }
                       },
                       {}, {});
  SECTION("lane 0 outside the mask: a misuse for it") {
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::collective);
  }
  SECTION("the lanes of the mask") {
    FunctionProgram lanes(warps(1), [] {
      if (P::lane_idx() == 0) return;
      if (P::elect_sync(0xE)) {
        P::check(P::lane_idx() == 1, "the lowest lane of 0xE");
        P::store(smem_word(0), std::int64_t{1});
      }
    });
    const ExploreResult r = explore_all(lanes);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.executions == 1);
  }
}

TEST_CASE("shfl.sync gives each lane the source lane's operand of the same round", "[collective]") {
  FunctionProgram prog(warps(1), [] {
    const std::uint32_t lane = P::lane_idx();
    for (std::uint32_t round = 0; round < 3; ++round) {
      const std::uint32_t got = P::shfl_sync_idx(0xF, 10 * round + lane, (lane + 1) % 4);
      P::check(got == 10 * round + (lane + 1) % 4, "the source lane's value of this round");
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("the wgmma fence, commit_group and wait_group converge a warp and order no memory", "[collective][explore]") {
  // 128 threads: thread 0 stores, then the warp group runs wgmma.fence / commit_group /
  // wait_group; .sync waits for the warp, and none of them orders generic memory (PTX ISA
  // 9.1, 9.7.15.7: wgmma.fence orders register accesses; shared memory needs a proxy fence).
  auto body = [](bool syncwarp_too) {
    return [syncwarp_too] {
      const std::uint32_t me = P::thread_idx();
      if (me == 0) P::store(smem_word(0), std::int64_t{5});
      P::wgmma_fence();
      P::wgmma_commit_group();
      P::wgmma_wait_group(0);
      if (syncwarp_too) P::syncwarp();
      if (me < 32) P::check(P::load(smem_word(0)) == 5, "thread 0's store");
    };
  };
  SECTION("lane 1 reading thread 0's store after them: a race") {
    FunctionProgram prog(warps(4, 32), body(false));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
  SECTION("with a __syncwarp after them: ordered") {
    FunctionProgram prog(warps(4, 32), body(true));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
}

TEST_CASE("elect.sync and shfl.sync order no memory among the lanes", "[collective][explore]") {
  // PTX gives neither any memory semantics (the CUDA guide: shuffles "do not guarantee any
  // memory ordering"); only bar.warp.sync orders memory among its lanes.
  for (int which = 0; which < 3; ++which) {
    FunctionProgram prog(warps(1), [which] {
      if (P::lane_idx() == 0) P::store(smem_word(0), std::int64_t{3});
      if (which == 0) (void)P::elect_sync(0xF);
      if (which == 1) (void)P::shfl_sync_idx(0xF, 1, 0);
      if (which == 2) P::syncwarp(0xF);
      if (P::lane_idx() == 1) (void)P::load(smem_word(0));
    });
    const ExploreResult r = explore_all(prog);
    if (which < 2) {
      REQUIRE(r.bug);
      CHECK(r.bug->verdict == Verdict::race);
    } else {
      CHECK_FALSE(r.bug);
    }
  }
}

TEST_CASE("exited lanes are not waited for by __syncwarp, shfl.sync and elect.sync", "[collective][explore]") {
  // PTX ISA 9.1, 9.7.9.6: shfl.sync waits for "all non-exited threads corresponding to
  // membermask"; the CUDA guide says the same of __syncwarp.
  FunctionProgram prog(warps(1), [] {
    const std::uint32_t lane = P::lane_idx();
    if (lane >= 2) return;
    P::syncwarp();
    const std::uint32_t got = P::shfl_sync_idx(0xFFFFFFFFu, 10 + lane, lane ^ 1u);
    P::check(got == 10 + (lane ^ 1u), "the other live lane's value");
    if (P::elect_sync(0xFFFFFFFFu)) P::check(lane == 0, "the lowest live lane");
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("elect_one is elect.sync over the warp: every lane meets there", "[collective][explore]") {
  // Lane 0 may not run a whole iteration ahead of lane 3: each iteration's elect_one meets the
  // warp, so lane 3's parity wait is never two phases behind (a false aliasing before).
  FunctionProgram prog(warps(1), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    for (std::uint32_t it = 0; it < 3; ++it) {
      if (P::elect_one()) smem_bar(0).arrive();
      P::mbarrier_wait_parity_bit(smem_bar(0).raw(), it & 1u);
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("collective misuses", "[collective][misuse]") {
  SECTION("__syncwarp with a mask that leaves out the calling lane") {
    FunctionProgram prog(warps(1), [] {
      if (P::lane_idx() == 0) P::syncwarp(0x6);
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::collective);
  }
  SECTION("a warp-group instruction in a CTA of 64 threads") {
    FunctionProgram prog(warps(2, 32), [] { P::wgmma_fence(); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::collective);
  }
  SECTION("a lane that never reaches the __syncwarp (it has not exited): the others wait forever") {
    FunctionProgram prog(warps(1), [] {
      if (P::thread_idx() == 0) smem_bar(0).init(1);
      P::sync_threads();
      if (P::lane_idx() != 3) {
        P::syncwarp();
        smem_bar(0).arrive();
      } else {
        smem_bar(0).wait(0);  // for the arrive the others make after the __syncwarp
      }
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::deadlock);
    CHECK_THAT(r.bug->message, Catch::Contains("__syncwarp"));
  }
  SECTION("shfl.sync from a lane outside the mask, or one that exited: undefined") {
    FunctionProgram outside(warps(1), [] {
      if (P::lane_idx() < 2) (void)P::shfl_sync_idx(0x3, 7, 2);
    });
    const ExploreResult r = explore_all(outside);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::collective);
    CHECK_THAT(r.bug->message, Catch::Contains("not in membermask"));
    FunctionProgram exited(warps(1), [] {
      if (P::lane_idx() == 3) return;
      (void)P::shfl_sync_idx(0xF, 7, 3);
    });
    const ExploreResult e = explore_all(exited);
    REQUIRE(e.bug);
    CHECK(e.bug->misuse == MisuseKind::collective);
    CHECK_THAT(e.bug->message, Catch::Contains("has exited"));
  }
}

TEST_CASE("__nanosleep in a spin loop changes nothing: the spin is still recognised", "[collective][explore]") {
  // The common back-off `while (!try_wait(b, 0)) __nanosleep(32);`: thread 1 spins until
  // thread 0 arrives. The sleep has no effect the protocol can see, so every failed iteration
  // repeats the last and the spin waits for the phase (no step limit, no livelock).
  FunctionProgram prog(threads(2), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).arrive();
    } else {
      while (!smem_bar(0).try_wait(0)) P::nanosleep(32);
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions <= 2);
}
