// Thread block clusters: distributed shared memory, remote arrivals, multicast bulk copies,
// the cluster barrier, fence.mbarrier_init and the lifetime of a CTA's shared memory.
#include <catch2/catch.hpp>

#include <set>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "sim/explore/strategy.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {

// `x` by `y` clusters of `threads` threads (warps of 4 lanes), `clusters` of them.
LaunchShape cluster(std::uint32_t x, std::uint32_t y, std::uint32_t threads, std::uint32_t clusters = 1) {
  LaunchShape shape;
  shape.cluster_x = x;
  shape.cluster_y = y;
  shape.ctas = x * y * clusters;
  shape.threads_per_cta = threads;
  shape.warp_size = 4;
  shape.smem_bytes = 2048;
  return shape;
}

P::Barrier& bar0() { return reinterpret_cast<P::Barrier*>(P::shared_memory())[0]; }

// Thread 0 of every CTA inits barrier 0 for `count` arrivals, fences the init, and the cluster
// meets at barrier.cluster (relaxed arrive, as CUTLASS's kernels start).
void init_for_peers(std::uint32_t count, bool fence = true, bool cluster_sync = true, bool relaxed = true) {
  if (P::thread_idx() == 0) {
    P::mbarrier_init(bar0(), count);
    if (fence) P::fence_mbarrier_init_release_cluster();
  }
  if (cluster_sync) {
    if (relaxed)
      P::barrier_cluster_arrive_relaxed();
    else
      P::barrier_cluster_arrive();
    P::barrier_cluster_wait();
  } else {
    P::sync_threads();
  }
}

// Rank 0 writes a word into rank 1's shared memory (mapa) and arrives on rank 1's barrier 0
// (.release.cluster); rank 1 waits on it (.acquire.cluster, or the .cta default) and reads the word.
void remote_handoff(bool fence, bool cluster_sync, bool relaxed, bool consumer_waits = true,
                    bool cluster_scope = true) {
  init_for_peers(1, fence, cluster_sync, relaxed);
  if (P::thread_idx() != 0) return;
  if (P::cluster_ctarank() == 0) {
    P::store(P::map_shared_rank(smem_word(0), 1), std::int64_t{42});
    P::mbarrier_arrive_cluster(bar0(), 1);
  } else if (consumer_waits) {
    if (cluster_scope)
      P::mbarrier_wait_parity_cluster(bar0(), 0);
    else
      P::mbarrier_wait_parity(bar0(), 0);
    P::check(P::load(smem_word(0)) == 42, "the peer's store");
  }
}
}  // namespace

TEST_CASE("a remote arrive releases the peer's stores to the CTA that waits on its own barrier", "[cluster][explore]") {
  SECTION("to a wait at .cluster scope") {
    FunctionProgram prog(cluster(2, 1, 1), [] { remote_handoff(true, true, true); });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
  SECTION("not to a wait at .cta scope: PTX's scopes make them not morally strong, a race") {
    // PTX ISA 9.1, 8.7: synchronizing needs "each operation ... specifies a scope that includes
    // the thread executing the other operation"; a .cta acquire does not include rank 0's thread.
    FunctionProgram prog(cluster(2, 1, 1), [] { remote_handoff(true, true, true, true, false); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("a peer may use a barrier only once its init is visible to the cluster", "[cluster][misuse]") {
  SECTION("no fence.mbarrier_init before the relaxed cluster arrive") {
    FunctionProgram prog(cluster(2, 1, 1), [] { remote_handoff(false, true, true); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::misuse);
    CHECK(r.bug->misuse == MisuseKind::unfenced_init);
    CHECK_THAT(r.bug->message, Catch::Contains("cta 0 (rank 0 of 2x1)") && Catch::Contains("fence.mbarrier_init"));
  }
  SECTION("no cluster barrier after the fence") {
    // Rank 0 inits and fences its barrier, rank 1 arrives on it: some schedule has the init
    // first, and then nothing made it visible to rank 1.
    FunctionProgram prog(cluster(2, 1, 1), [] {
      if (P::cluster_ctarank() == 0) {
        P::mbarrier_init(bar0(), 1);
        P::fence_mbarrier_init_release_cluster();
        P::mbarrier_wait_parity(bar0(), 0);
      } else {
        P::mbarrier_arrive_cluster(bar0(), 0);
      }
    });
    std::set<MisuseKind> kinds;
    ExploreOptions o;
    o.stop_at_first_bug = false;
    (void)explore(prog, o, [&](const Outcome& out) {
      if (out.misuse) kinds.insert(*out.misuse);
    });
    CHECK(kinds.count(MisuseKind::unfenced_init) == 1);
  }
  SECTION("a release cluster arrive publishes the init without the fence") {
    FunctionProgram prog(cluster(2, 1, 1), [] { remote_handoff(false, true, false); });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
}

TEST_CASE("a peer's complete_tx completes the phase but releases nothing", "[cluster][explore]") {
  // Rank 1 expects 16 bytes on its barrier and waits; rank 0 stores a word into rank 1's
  // shared memory and pays the bytes with mbarrier.complete_tx.relaxed.cluster. The phase
  // completes, but complete_tx is relaxed: the store is not ordered before the read. With a
  // remote arrive (a release) as well, it is.
  auto body = [](bool arrive_too) {
    return [arrive_too] {
      init_for_peers(arrive_too ? 2 : 1);
      if (P::thread_idx() != 0) return;
      if (P::cluster_ctarank() == 0) {
        P::store(P::map_shared_rank(smem_word(0), 1), std::int64_t{7});
        P::mbarrier_complete_tx_cluster(bar0(), 1, 16);
        if (arrive_too) P::mbarrier_arrive_cluster(bar0(), 1);
      } else {
        P::mbarrier_arrive_expect_tx(bar0(), 16);
        P::mbarrier_wait_parity_cluster(bar0(), 0);
        (void)P::load(smem_word(0));
      }
    };
  };
  SECTION("complete_tx alone: a race on the word") {
    FunctionProgram prog(cluster(2, 1, 1), body(false));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
  SECTION("with a remote arrive after it: ordered") {
    FunctionProgram prog(cluster(2, 1, 1), body(true));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
}

TEST_CASE("a CTA that exits while a peer may still arrive on its barrier is a lifetime bug", "[cluster][lifetime]") {
  // Rank 1 never waits for the arrival: it may be gone when rank 0 arrives.
  FunctionProgram prog(cluster(2, 1, 1), [] { remote_handoff(true, true, true, false); });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::lifetime);
  CHECK_THAT(r.bug->message, Catch::Contains("cta 1") && Catch::Contains("exit"));
  // The counterexample replays to the same verdict.
  ReplayStrategy replay(r.bug->schedule);
  Runtime rt;
  CHECK(rt.execute(prog, replay).verdict == Verdict::lifetime);
}

TEST_CASE("a peer's counter op whose phase the CTA saw complete is no longer outstanding at its exit",
          "[cluster][lifetime]") {
  // Rank 0's complete_tx on rank 1's barrier is .relaxed: nothing orders it before rank 1's
  // exit by happens-before, but rank 1's wait saw the phase it counted in complete, so it has
  // been performed (CUTLASS's warp-specialized tests at 2x1 do this).
  FunctionProgram prog(cluster(2, 1, 1), [] {
    init_for_peers(1);
    if (P::cluster_ctarank() == 1) {
      P::mbarrier_arrive_expect_tx(bar0(), 16);
      P::mbarrier_wait_parity(bar0(), 0);
    } else {
      P::mbarrier_complete_tx_cluster(bar0(), 1, 16);
    }
  });
  const ExploreResult r = explore_all(prog);
  if (r.bug) FAIL(r.bug->message);
  CHECK(r.stats.complete);
}

TEST_CASE("a peer's counter op in a phase the CTA never saw complete is still a lifetime bug", "[cluster][lifetime]") {
  // Rank 1 completes phase 0 itself and waits for it; rank 0's arrive counts in phase 0 (it
  // completes it) or, after rank 1's arrive, in phase 1, which nobody in rank 1 sees complete.
  FunctionProgram prog(cluster(2, 1, 1), [] {
    init_for_peers(1);
    if (P::cluster_ctarank() == 1) {
      P::mbarrier_arrive(bar0());
      P::mbarrier_wait_parity(bar0(), 0);
    } else {
      P::mbarrier_arrive_cluster(bar0(), 1);
    }
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::lifetime);
}

TEST_CASE("a peer's stores to a CTA's shared memory must happen before that CTA exits", "[cluster][lifetime]") {
  SECTION("no ordering: lifetime") {
    FunctionProgram prog(cluster(2, 1, 1), [] {
      if (P::cluster_ctarank() == 0) P::store(P::map_shared_rank(smem_word(1), 1), std::int64_t{1});
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::lifetime);
  }
  SECTION("a cluster barrier after the store: correct") {
    FunctionProgram prog(cluster(2, 1, 1), [] {
      if (P::cluster_ctarank() == 0) P::store(P::map_shared_rank(smem_word(1), 1), std::int64_t{1});
      P::barrier_cluster_arrive();
      P::barrier_cluster_wait();
      if (P::cluster_ctarank() == 1) P::check(P::load(smem_word(1)) == 1, "the peer's store");
    });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
}

TEST_CASE("barrier.cluster orders every thread of the cluster; .relaxed orders no data", "[cluster][explore]") {
  auto body = [](bool relaxed) {
    return [relaxed] {
      const std::uint32_t me = P::thread_idx();
      if (P::cluster_ctarank() == 0) P::store(P::map_shared_rank(smem_word(static_cast<int>(me)), 1), std::int64_t{7});
      if (relaxed)
        P::barrier_cluster_arrive_relaxed();
      else
        P::barrier_cluster_arrive_aligned();
      P::barrier_cluster_wait_aligned();
      if (P::cluster_ctarank() == 1) (void)P::load(smem_word(static_cast<int>(me)));
      P::barrier_cluster_arrive();  // the writers' CTA outlives the readers' loads
      P::barrier_cluster_wait();
    };
  };
  SECTION("release arrive, acquire wait: ordered, one execution") {
    FunctionProgram prog(cluster(2, 1, 4), body(false));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
  SECTION("relaxed arrive: a data race") {
    FunctionProgram prog(cluster(2, 1, 4), body(true));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("an exited thread leaves the cluster barrier's count", "[cluster][explore]") {
  FunctionProgram prog(cluster(2, 1, 4), [] {
    if (P::thread_idx() == 3) return;  // exits before the others meet
    P::barrier_cluster_arrive();
    P::barrier_cluster_wait();
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("threads that exit after the cluster barrier's first use leave its count", "[cluster][explore]") {
  const std::uint32_t cluster_x = GENERATE(1u, 2u);  // a launch without a cluster is a 1x1 cluster
  FunctionProgram prog(cluster(cluster_x, 1, 4), [] {
    P::barrier_cluster_arrive();
    if (P::thread_idx() == 1) return;  // arrived, never waits, exits
    P::barrier_cluster_wait();
    if (P::thread_idx() == 3) return;  // exits between two rounds
    P::barrier_cluster_arrive();
    P::barrier_cluster_wait();
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("barrier.cluster misuses", "[cluster][misuse]") {
  SECTION("a wait with no arrive") {
    FunctionProgram prog(cluster(2, 1, 1), [] { P::barrier_cluster_wait(); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::cluster);
    CHECK_THAT(r.bug->message, Catch::Contains("no barrier.cluster.arrive"));
  }
  SECTION("two arrives with no wait") {
    FunctionProgram prog(cluster(2, 1, 1), [] {
      P::barrier_cluster_arrive();
      P::barrier_cluster_arrive();
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::cluster);
  }
}

TEST_CASE("a multicast lands in every CTA of its mask and completes each CTA's barrier", "[cluster][multicast]") {
  // Rank 0 multicasts 64 bytes; every CTA expects them on its own barrier 0 and reads them.
  struct Multicast : Program {
    std::uint16_t mask;
    alignas(16) std::int64_t src[8];
    explicit Multicast(std::uint16_t m) : mask(m) {}
    LaunchShape shape() const override { return cluster(2, 2, 1); }
    void reset() override {
      for (int i = 0; i < 8; ++i) src[i] = 100 + i;
    }
    void thread_main() override {
      init_for_peers(1);
      Bar b(bar0());
      b.arrive_expect_tx(64);
      if (P::cluster_ctarank() == 0) P::cp_async_bulk_global_to_shared_multicast(smem_word(0), src, 64, bar0(), mask);
      b.wait(0);
      P::check(P::load(smem_word(7)) == 107, "the multicast's bytes");
      P::barrier_cluster_arrive();  // rank 0's peers are done with its multicast before it exits
      P::barrier_cluster_wait();
    }
  };
  SECTION("mask of all four ranks") {
    Multicast prog(0xF);
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("a mask that leaves out rank 3: rank 3 waits forever") {
    Multicast prog(0x7);
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::deadlock);
    REQUIRE_FALSE(r.bug->details.empty());
    CHECK_THAT(r.bug->details.back(), Catch::StartsWith("cta 3 (rank 3 of 2x2) thread 0"));
  }
  SECTION("a mask naming a rank outside the cluster") {
    Multicast prog(0x1F);
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::cluster);
  }
}

TEST_CASE("cluster operations outside their rules are misuses", "[cluster][misuse]") {
  SECTION("a .shared::cta arrive on a peer's barrier") {
    FunctionProgram prog(cluster(2, 1, 1), [] {
      init_for_peers(1);
      if (P::cluster_ctarank() == 0) P::mbarrier_arrive(*P::map_shared_rank(&bar0(), 1));
      P::barrier_cluster_arrive();
      P::barrier_cluster_wait();
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::cluster);
    CHECK_THAT(r.bug->message, Catch::Contains(".shared::cluster"));
  }
  SECTION("mapa to a rank outside the cluster") {
    FunctionProgram prog(cluster(2, 1, 1), [] { (void)P::map_shared_rank(smem_word(0), 2); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::cluster);
  }
  SECTION("a launch whose CTAs do not make whole clusters") {
    LaunchShape shape = cluster(2, 1, 1);
    shape.ctas = 3;
    FunctionProgram prog(shape, [] {});
    Runtime rt;
    RandomStrategy random(1);
    CHECK_THROWS_AS(rt.execute(prog, random), ProgramError);
  }
}

TEST_CASE("cluster geometry: rank, position and cluster of each CTA", "[cluster]") {
  struct Geometry : Program {
    std::uint32_t seen[8][4] = {};
    LaunchShape shape() const override { return cluster(2, 2, 1, 2); }
    void reset() override {}
    void thread_main() override {
      auto* s = seen[P::block_idx()];
      s[0] = P::cluster_ctarank();
      s[1] = P::cluster_ctaid_x();
      s[2] = P::cluster_ctaid_y();
      s[3] = P::cluster_idx();
      P::check(P::cluster_nctarank() == 4 && P::cluster_dim_x() == 2 && P::cluster_dim_y() == 2, "cluster size");
    }
  } prog;
  Runtime rt;
  RandomStrategy random(1);
  REQUIRE(rt.execute(prog, random).verdict == Verdict::completed);
  for (std::uint32_t cta = 0; cta < 8; ++cta) {
    CHECK(prog.seen[cta][0] == cta % 4);
    CHECK(prog.seen[cta][1] == cta % 2);
    CHECK(prog.seen[cta][2] == (cta % 4) / 2);
    CHECK(prog.seen[cta][3] == cta / 4);
  }
}
