// Named barriers (bar.sync / bar.arrive with an id and a thread count), as CUTLASS's
// NamedBarrier and FlashAttention-3's warp-group scheduling use them.
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "spec/named_barrier.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;
using Named = mbcheck::NamedBarrier<P>;

namespace {

// Warps of 4 lanes keep the shapes small; counts are multiples of 4.
LaunchShape warps(std::uint32_t n) {
  LaunchShape shape;
  shape.warp_size = 4;
  shape.threads_per_cta = 4 * n;
  shape.smem_bytes = 2048;
  return shape;
}
}  // namespace

TEST_CASE("bar.arrive publishes to the threads that bar.sync the same generation", "[named][explore]") {
  // Warp 0 stores, then arrives on barrier 1 for 8 threads; warp 1 syncs on it and reads.
  FunctionProgram prog(warps(2), [] {
    const Named ready(8, 1);
    if (P::warp_idx() == 0) {
      P::store(smem_word(static_cast<int>(P::lane_idx())), std::int64_t{10} + P::lane_idx());
      ready.arrive();
    } else {
      ready.sync();
      for (int i = 0; i < 4; ++i) P::check(P::load(smem_word(i)) == 10 + i, "published word");
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("a store after the arrive races with the reader", "[named][race]") {
  FunctionProgram prog(warps(2), [] {
    const Named ready(8, 1);
    if (P::warp_idx() == 0) {
      ready.arrive();
      P::store(smem_word(static_cast<int>(P::lane_idx())), std::int64_t{1});
    } else {
      ready.sync();
      (void)P::load(smem_word(static_cast<int>(P::lane_idx())));
    }
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
}

TEST_CASE("bar.sync waits for the whole count: too few participants deadlock", "[named][deadlock]") {
  // Barrier 2 counts 12 threads but only two warps (8 threads) ever come.
  FunctionProgram prog(warps(3), [] {
    if (P::warp_idx() < 2) Named(12, 2).sync();
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::deadlock);
  CHECK_THAT(r.bug->message, Catch::Contains("barrier 2"));
}

TEST_CASE("rounds of bar.sync over the CTA run in one execution", "[named][explore][size]") {
  const std::uint32_t n = GENERATE(2u, 8u, 32u);
  INFO(n << " warps of 4 lanes x 4 rounds");
  FunctionProgram prog(warps(n), [n] {
    for (int r = 0; r < 4; ++r) {
      P::store(smem_word(static_cast<int>(P::thread_idx())), std::int64_t{r});
      Named(4 * n, 3).sync();
      P::check(P::load(smem_word(static_cast<int>((P::thread_idx() + 1) % (4 * n)))) == r, "a neighbour's word");
      Named(4 * n, 4).sync();  // the next round's stores wait for every read of this one
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("named-barrier misuses: id, count, disagreeing counts", "[named][misuse]") {
  auto [what, body] = GENERATE(table<std::string, std::function<void()>>({
      {"id 16", [] { Named(8, 16).sync(); }},
      {"count not a multiple of the warp size", [] { Named(6, 1).sync(); }},
      {"count above the CTA", [] { Named(12, 1).sync(); }},
      {"two counts for one id", [] { Named(P::warp_idx() == 0 ? 8 : 4, 1).arrive(); }},
  }));
  INFO(what);
  FunctionProgram prog(warps(2), body);
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::misuse);
  CHECK(r.bug->misuse == MisuseKind::named_barrier);
}

TEST_CASE("a surplus arrival completes a generation without the thread it was meant to wait for", "[named][race]") {
  // flashinfer PR #4732's shape: the math warp arrives for tile t and t+1 (count: math + IO)
  // before the IO warp synced tile t, so tile t+1's generation completes with the math warp's
  // two arrivals while the IO warp still reads tile t's buffer, which math then overwrites.
  const bool surplus = GENERATE(false, true);
  INFO((surplus ? "math arrives twice per tile" : "math arrives once per tile"));
  FunctionProgram prog(warps(2), [surplus] {
    const Named tile_ready(8, 5), tile_free(8, 6);
    const int lane = static_cast<int>(P::lane_idx());
    for (int t = 0; t < 2; ++t) {
      if (P::warp_idx() == 0) {  // math: write the buffer, hand it to IO, wait until IO is done
        if (t > 0) tile_free.sync();
        P::store(smem_word(lane), std::int64_t{t});
        tile_ready.arrive();
        if (surplus && t == 0) tile_ready.arrive();  // the early-return path's arrive, then the loop's
      } else {                                       // IO: wait for the buffer, read it, give it back
        tile_ready.sync();
        P::check(P::load(smem_word(lane)) == t, "IO reads the tile it waited for");
        if (t == 0) tile_free.arrive();
      }
    }
  });
  const ExploreResult r = explore_all(prog);
  if (surplus) {
    REQUIRE(r.bug);
    INFO(r.bug->message);
    CHECK((r.bug->verdict == Verdict::race || r.bug->verdict == Verdict::assertion ||
           r.bug->verdict == Verdict::deadlock));
  } else {
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
}

TEST_CASE("bar.red reduces every participant's predicate over its generation", "[named][explore]") {
  // Two warps of 4 lanes, three rounds: thread t votes (t + round) % 3 == 0.
  FunctionProgram prog(warps(2), [] {
    const std::uint32_t me = P::thread_idx();
    for (std::uint32_t round = 0; round < 3; ++round) {
      const bool vote = (me + round) % 3 == 0;
      std::uint32_t expected = 0;
      for (std::uint32_t t = 0; t < 8; ++t) expected += (t + round) % 3 == 0 ? 1 : 0;
      P::check(P::bar_red_popc(2, 8, vote) == expected, "popc of the round's votes");
      P::check(P::bar_red_and(2, 8, vote) == (expected == 8), "and of the round's votes");
      P::check(P::bar_red_or(2, 8, vote) == (expected > 0), "or of the round's votes");
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("a named barrier counts warps: a warp arrives once all its non-exited lanes have", "[named][explore]") {
  SECTION("a warp whose upper lanes exited still counts as a whole warp (as measured on the H200)") {
    FunctionProgram prog(warps(2), [] {
      if (P::warp_idx() == 0 && P::lane_idx() >= 2) return;
      P::bar_sync(1, 8);
    });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("a lane that exits while its warp waits at the barrier lets the warp arrive") {
    FunctionProgram prog(warps(2), [] {
      if (P::warp_idx() == 0 && P::lane_idx() == 0) {
        smem_bar(0).init(1);  // some work first, then exit
        return;
      }
      P::bar_sync(1, 8);
    });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("a lane busy elsewhere holds up its warp's arrival") {
    // Warp 0's lane 0 waits for an mbarrier that warp 1 arrives on only after the bar.sync:
    // warp 0 cannot arrive without lane 0, so nobody passes the named barrier.
    FunctionProgram prog(warps(2), [] {
      if (P::thread_idx() == 0) smem_bar(0).init(1);
      P::sync_threads();
      if (P::thread_idx() == 0) {
        smem_bar(0).wait(0);
        return;
      }
      P::bar_sync(1, 8);
      if (P::thread_idx() == 4) smem_bar(0).arrive();
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::deadlock);
  }
}

TEST_CASE("one id used by two groups at once mixes their generations", "[named][explore]") {
  // Warps 0-1 and warps 2-3 each hand data from their first warp to their second through a
  // bar.sync for 8 threads. With separate ids this is correct; with one id a generation can
  // fill with a warp of each group, and a reader passes before its group's writer arrived.
  auto body = [](bool shared_id) {
    return [shared_id] {
      const std::uint32_t w = P::warp_idx(), group = w / 2, lane = P::lane_idx();
      const std::uint32_t id = shared_id ? 1 : 1 + group;
      if (w % 2 == 0) P::store(smem_word(static_cast<int>(4 * group + lane)), std::int64_t{1});
      P::bar_sync(id, 8);
      if (w % 2 == 1) (void)P::load(smem_word(static_cast<int>(4 * group + lane)));
    };
  };
  SECTION("an id per group: correct") {
    FunctionProgram prog(warps(4), body(false));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("one id for both: a race") {
    FunctionProgram prog(warps(4), body(true));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("a bar.sync waiter is answered by its generation however many followed", "[named][explore][soundness]") {
  // Found by the differential soak (seed 8016338, shrunk): warp 0 syncs on barrier 1 for 4
  // threads (its own generation), warp 1 arrives on it for 4 (the next one). Warp 0's wait
  // may run after both generations completed; hardware has no parity to confuse there, so it
  // is no phase aliasing.
  FunctionProgram prog(warps(2), [] {
    if (P::warp_idx() == 0)
      P::bar_sync(1, 4);
    else
      P::bar_arrive(1, 4);
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

// Barrier 0: __syncthreads() is bar.sync 0, so bar.sync / bar.arrive 0 with the CTA's thread
// count meet it (PTX: the forms of one id may be mixed with the same count).
TEST_CASE("bar.arrive 0 over the CTA's threads publishes to a thread in sync_threads", "[named][block-sync]") {
  FunctionProgram prog(warps(2), [] {
    if (P::warp_idx() == 0) {
      P::store(smem_word(static_cast<int>(P::lane_idx())), std::int64_t{10} + P::lane_idx());
      P::bar_arrive(0, 8);
    } else {
      P::sync_threads();
      for (int i = 0; i < 4; ++i) P::check(P::load(smem_word(i)) == 10 + i, "published word");
    }
  });
  const ExploreResult r = explore_all(prog);
  if (r.bug) FAIL(r.bug->message);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("bar.sync 0 over the CTA's threads and sync_threads are one barrier", "[named][block-sync]") {
  FunctionProgram prog(warps(2), [] {
    if (P::warp_idx() == 0) {
      P::store(smem_word(static_cast<int>(P::lane_idx())), std::int64_t{1});
      P::bar_sync(0, 8);
      (void)P::load(smem_word(static_cast<int>(4 + P::lane_idx())));
    } else {
      P::store(smem_word(static_cast<int>(P::thread_idx())), std::int64_t{2});
      P::sync_threads();
      (void)P::load(smem_word(static_cast<int>(P::lane_idx())));
    }
  });
  const ExploreResult r = explore_all(prog);
  if (r.bug) FAIL(r.bug->message);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("barrier 0: a store after bar.arrive 0 still races with the reader", "[named][block-sync][race]") {
  FunctionProgram prog(warps(2), [] {
    if (P::warp_idx() == 0) {
      P::bar_arrive(0, 8);
      P::store(smem_word(static_cast<int>(P::lane_idx())), std::int64_t{1});
    } else {
      P::sync_threads();
      (void)P::load(smem_word(static_cast<int>(P::lane_idx())));
    }
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
}

TEST_CASE("barrier 0: arriving twice before the generation completes is found", "[named][block-sync][misuse]") {
  // Warp 0 arrives for two generations without waiting; warp 1 syncs twice. When warp 0's
  // second arrive comes before warp 1's first sync, it counts in the first generation.
  FunctionProgram prog(warps(2), [] {
    if (P::warp_idx() == 0) {
      P::bar_arrive(0, 8);
      P::bar_arrive(0, 8);
    } else {
      P::sync_threads();
      P::sync_threads();
    }
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::misuse);
  CHECK_THAT(r.bug->message, Catch::Contains("second time"));
}

TEST_CASE("barrier 0: uses over all threads and over fewer disagree on the count", "[named][block-sync][misuse]") {
  FunctionProgram prog(warps(2), [] {
    if (P::warp_idx() == 0) P::bar_sync(0, 4);
    P::sync_threads();
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::misuse);
  CHECK_THAT(r.bug->message, Catch::Contains("disagree on the count"));
}

TEST_CASE("barrier 0: exits release sync_threads, not bar.sync 0 with a count", "[named][block-sync][deadlock]") {
  const bool counted = GENERATE(false, true);
  FunctionProgram prog(warps(2), [counted] {
    if (P::warp_idx() == 1) return;  // the whole warp exits
    if (counted)
      P::bar_sync(0, 8);
    else
      P::sync_threads();
  });
  const ExploreResult r = explore_all(prog);
  INFO("counted: " << counted);
  if (counted) {
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::deadlock);
  } else {
    CHECK_FALSE(r.bug);
  }
}
