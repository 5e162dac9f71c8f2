// The host's reading of the contract functions where it once departed from the PTX ISA (issue
// 46): each case is the PTX text's consequence, written from the text (docs/semantics.md cites
// it), not from the emulator. The collectives' cases are in test_collectives.cpp, the scopes'
// in test_clusters.cpp, the conformance tests both backends run in test_conformance.cpp.
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {
LaunchShape cta(std::uint32_t threads, std::uint32_t warp_size = 32) {
  LaunchShape shape;
  shape.threads_per_cta = threads;
  shape.warp_size = warp_size;
  shape.smem_bytes = 4096;
  return shape;
}
alignas(16) std::int64_t g_global[64];
unsigned char* smem_at(std::size_t offset) { return P::shared_memory() + offset; }
}  // namespace

TEST_CASE("wgmma.mma_async is one instruction of the whole warp group (.aligned)", "[ptx][wgmma]") {
  SECTION("issued by thread 0 alone: a misuse, not a silent no-op of the others") {
    FunctionProgram prog(cta(128), [] {
      P::WgmmaAccumulator acc;
      if (P::thread_idx() == 0) P::wgmma_mma_async(acc, nullptr, 0, smem_at(1024), 256);
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::collective);
    CHECK_THAT(r.bug->message, Catch::Contains("exit"));
  }
  SECTION("warps with other operands: a misuse") {
    FunctionProgram prog(cta(128), [] {
      P::WgmmaAccumulator acc;
      P::wgmma_mma_async(acc, nullptr, 0, smem_at(P::warp_idx() == 3 ? 1280 : 1024), 256);
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::collective);
    CHECK_THAT(r.bug->message, Catch::Contains("other operands"));
  }
  SECTION("operand sizes that are not whole m64n8k16 steps: a misuse operand-range") {
    FunctionProgram prog(cta(128), [] {
      P::WgmmaAccumulator acc;
      P::wgmma_mma_async(acc, smem_at(1024), 64, smem_at(2048), 64);
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::operand_range);
  }
  SECTION("the whole group, A 2 KiB and B 256 B: the group's one read, retired by wait_group") {
    FunctionProgram prog(cta(128), [] {
      P::WgmmaAccumulator acc;
      P::wgmma_fence();
      P::wgmma_mma_async(acc, smem_at(1024), 2048, smem_at(3072), 256);
      P::wgmma_commit_group();
      P::wgmma_wait_group(0);
      if (P::thread_idx() == 64) P::store(reinterpret_cast<std::int64_t*>(smem_at(3072)), std::int64_t{1});
    });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
}

TEST_CASE("wait_group N is 0..7 on both backends", "[ptx][groups]") {
  const std::uint32_t n = GENERATE(7u, 8u);
  FunctionProgram prog(cta(1), [n] {
    P::cp_async_bulk_commit_group();
    P::cp_async_bulk_wait_group_read(n);
  });
  const ExploreResult r = explore_all(prog);
  if (n <= 7) {
    CHECK_FALSE(r.bug);
  } else {
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::operand_range);
  }
}

TEST_CASE("cp.async.bulk.wait_group.read waits for the read of the source only", "[ptx][groups]") {
  // PTX ISA 9.1, 9.7.9.27.2.2: .read waits for "the reading from their source locations"; only
  // the full form for "writing to their respective destination locations" and visibility.
  const bool full = GENERATE(false, true);
  FunctionProgram prog(cta(1), [full] {
    auto* src = reinterpret_cast<std::int64_t*>(smem_at(1024));
    P::store(src, std::int64_t{9});
    P::fence_proxy_async_shared_cta();
    P::cp_async_bulk_shared_to_global(g_global, src, 16);
    P::cp_async_bulk_commit_group();
    P::cp_async_bulk_wait_group_read(0);
    P::store(src, std::int64_t{10});  // the source may be reused after .read
    if (full) P::cp_async_bulk_wait_group(0);
    const std::int64_t got = P::load(g_global);
    if (full) P::check(got == 9, "the store wrote what it read");
  });
  const ExploreResult r = explore_all(prog);
  if (full) {
    CHECK_FALSE(r.bug);
  } else {
    REQUIRE(r.bug);  // the global destination read before its write is ordered: a race
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("fence.proxy.async orders only the state space it names", "[ptx][proxy]") {
  // PTX ISA 9.1, 9.7.13.4: "The memory ordering is limited only to operations performed on
  // objects in the state space specified."
  const int fence = GENERATE(0, 1, 2);  // .shared::cta, .global, no space
  FunctionProgram prog(cta(1), [fence] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::store(g_global + 8, std::int64_t{5});  // a generic write of global memory ...
    if (fence == 0) P::fence_proxy_async_shared_cta();
    if (fence == 1) P::fence_proxy_async_global();
    if (fence == 2) P::fence_proxy_async();
    smem_bar(0).arrive_expect_tx(16);  // ... read by a TMA load
    P::cp_async_bulk_global_to_shared(smem_at(1024), g_global + 8, 16, smem_bar(0).raw());
    smem_bar(0).wait(0);
  });
  const ExploreResult r = explore_all(prog);
  if (fence == 0) {
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
    CHECK_THAT(r.bug->message, Catch::Contains("fence.proxy.async.global"));
  } else {
    CHECK_FALSE(r.bug);
  }
}

TEST_CASE("mbarrier.wait on a state token checks the token's barrier as test_wait does", "[ptx][token]") {
  FunctionProgram prog(cta(1), [] {
    smem_bar(0).init(1);
    smem_bar(1).init(2);
    const P::Token t = P::mbarrier_arrive(smem_bar(1).raw(), 1);
    P::mbarrier_wait(smem_bar(0).raw(), t);  // barrier 1's token on barrier 0
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->misuse == MisuseKind::bad_token);
}

TEST_CASE("bar instructions are .aligned: the lanes of a warp meet at the same one", "[ptx][named]") {
  FunctionProgram prog(cta(8, 4), [] {
    if (P::lane_idx() == 0)
      P::bar_sync(1, 8);
    else
      P::bar_sync(2, 8);
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->misuse == MisuseKind::divergent);
}

TEST_CASE("bar.arrive releases and acquires nothing, not even from its own warp", "[ptx][named]") {
  // Lanes 0 and 1 of warp 0 meet in bar.arrive's warp round; lane 0's store is not ordered
  // before lane 1's load by it (bar.arrive "does not cause executing thread to wait").
  FunctionProgram prog(cta(8, 4), [] {
    if (P::thread_idx() == 0) P::store(smem_word(0), std::int64_t{1});
    if (P::thread_idx() < 4) P::bar_arrive(1, 8);
    if (P::thread_idx() == 1) (void)P::load(smem_word(0));
    if (P::thread_idx() >= 4) P::bar_sync(1, 8);
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
}

TEST_CASE("bar.red on barrier 0 over all threads is __syncthreads_count", "[ptx][named]") {
  SECTION("then __syncthreads: legal") {
    FunctionProgram prog(cta(8, 4), [] {
      const std::uint32_t n = P::bar_red_popc(0, 8, P::thread_idx() % 3 == 0);
      P::check(n == 3, "threads 0, 3 and 6");
      P::sync_threads();
      P::check(P::bar_red_or(0, 8, P::thread_idx() == 5), "thread 5's predicate");
    });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("mixed with bar.sync in one generation: unpredictable, a misuse") {
    FunctionProgram prog(cta(8, 4), [] {
      if (P::warp_idx() == 0)
        (void)P::bar_red_popc(1, 8, true);
      else
        P::bar_sync(1, 8);
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::named_barrier);
    CHECK_THAT(r.bug->message, Catch::Contains("intermixed"));
  }
}

TEST_CASE("bulk copies' operands in the state spaces their PTX names", "[ptx][spaces]") {
  SECTION("a TMA store whose source is global memory: a misuse state-space") {
    FunctionProgram prog(cta(1), [] { P::cp_async_bulk_shared_to_global(g_global, g_global + 8, 16); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::state_space);
  }
  SECTION("a TMA load whose destination is global memory: a misuse state-space") {
    FunctionProgram prog(cta(1), [] {
      smem_bar(0).init(1);
      P::cp_async_bulk_global_to_shared(g_global, g_global + 8, 16, smem_bar(0).raw());
    });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::state_space);
  }
}

TEST_CASE("an atomic and an unordered ordinary access to its word race", "[ptx][atomics]") {
  FunctionProgram prog(cta(2), [] {
    if (P::thread_idx() == 0) P::store(smem_word(0), std::int64_t{1});
    if (P::thread_idx() == 1) (void)P::atomic_fetch_add(smem_word(0), 1);
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
  FunctionProgram atomics_only(cta(2), [] { (void)P::atomic_fetch_add(smem_word(0), 1); });
  CHECK_FALSE(explore_all(atomics_only).bug);
}
