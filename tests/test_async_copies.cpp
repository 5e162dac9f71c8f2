// Async copies beyond the one-group TMA store: cp.async.bulk.wait_group.read N with N > 0, and
// non-bulk cp.async with its groups and cp.async.mbarrier.arrive{.noinc}.
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {
// Words 0..1 and 2..3 (16 bytes each, 16-byte aligned) of shared memory from byte 1024 on.
struct Global {
  alignas(16) std::int64_t words[8] = {};
};
}  // namespace

TEST_CASE("bulk wait_group.read N waits for all but the newest N groups", "[async][store]") {
  // One thread bulk-stores two 16-byte tiles in two groups, waits with N = 1, then rewrites
  // one of the tiles: the first group's is free again, the second's may still be read.
  auto body = [](Global* g, int rewrite) {
    return [g, rewrite] {
      P::store(smem_word(0), std::int64_t{1});
      P::store(smem_word(2), std::int64_t{2});
      P::fence_proxy_async_shared_cta();
      P::cp_async_bulk_shared_to_global(g->words, smem_word(0), 16);
      P::cp_async_bulk_commit_group();
      P::cp_async_bulk_shared_to_global(g->words + 2, smem_word(2), 16);
      P::cp_async_bulk_commit_group();
      P::cp_async_bulk_wait_group_read(1);
      P::store(smem_word(rewrite), std::int64_t{9});
      P::cp_async_bulk_wait_group_read(0);
    };
  };
  Global g;
  SECTION("the first group's tile: free") {
    FunctionProgram prog(threads(1), body(&g, 0));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("the newest group's tile: a race with its store's read") {
    FunctionProgram prog(threads(1), body(&g, 2));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("cp.async lands later; cp.async.wait_group orders the thread after the groups it waited for",
          "[async][cp-async]") {
  auto body = [](Global* g, bool wait, std::uint32_t pending, int read) {
    return [=] {
      P::cp_async(smem_word(0), g->words, 16);
      P::cp_async_commit_group();
      P::cp_async(smem_word(2), g->words + 2, 16);
      P::cp_async_commit_group();
      if (wait) P::cp_async_wait_group(pending);
      (void)P::load(smem_word(read));
      P::cp_async_wait_all();
    };
  };
  Global g;
  SECTION("read after wait_group 0: ordered") {
    FunctionProgram prog(threads(1), body(&g, true, 0, 2));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("read of the older group after wait_group 1: ordered") {
    FunctionProgram prog(threads(1), body(&g, true, 1, 0));
    CHECK_FALSE(explore_all(prog).bug);
  }
  SECTION("read of the newest group after wait_group 1: a race with its landing") {
    FunctionProgram prog(threads(1), body(&g, true, 1, 2));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
  SECTION("no wait: a race") {
    FunctionProgram prog(threads(1), body(&g, false, 0, 0));
    REQUIRE(explore_all(prog).bug);
  }
  SECTION("a size cp.async cannot copy is a misuse") {
    FunctionProgram prog(threads(1), [&] { P::cp_async(smem_word(0), g.words, 12); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->misuse == MisuseKind::tma_misaligned);
  }
}

TEST_CASE("cp.async.mbarrier.arrive arrives once the thread's copies landed, and releases them", "[async][cp-async]") {
  // Thread 0 copies two 16-byte pieces, then has barrier 0 track them; thread 1 waits for
  // phase 0 and reads both pieces.
  enum class Form { noinc, inc_with_arrive, inc_alone, copy_after_arrive };
  auto body = [](Global* g, Form form) {
    return [=] {
      if (P::thread_idx() == 0) {
        smem_bar(0).init(1);
      }
      P::sync_threads();
      if (P::thread_idx() == 0) {
        P::cp_async(smem_word(0), g->words, 16);
        if (form != Form::copy_after_arrive) P::cp_async(smem_word(2), g->words + 2, 16);
        if (form == Form::noinc || form == Form::copy_after_arrive)
          P::cp_async_mbarrier_arrive_noinc(smem_bar(0).raw());
        else
          P::cp_async_mbarrier_arrive(smem_bar(0).raw());
        if (form == Form::inc_with_arrive) smem_bar(0).arrive();  // the one arrival the count expects
        if (form == Form::copy_after_arrive) P::cp_async(smem_word(2), g->words + 2, 16);
      } else {
        smem_bar(0).wait(0);
        P::check(P::load(smem_word(0)) == 5 && P::load(smem_word(2)) == 7, "the copied pieces");
      }
    };
  };
  Global g;
  g.words[0] = 5;
  g.words[2] = 7;
  SECTION(".noinc: the async arrive is the expected arrival, one execution") {
    FunctionProgram prog(threads(2), body(&g, Form::noinc));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
  SECTION("without .noinc, beside the thread's own arrive") {
    FunctionProgram prog(threads(2), body(&g, Form::inc_with_arrive));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
  }
  SECTION("without .noinc and nothing else: the phase never completes") {
    FunctionProgram prog(threads(2), body(&g, Form::inc_alone));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::deadlock);
  }
  SECTION("a copy issued after the arrive is not tracked: a race, or the stale read it allows") {
    FunctionProgram prog(threads(2), body(&g, Form::copy_after_arrive));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK((r.bug->verdict == Verdict::race || r.bug->verdict == Verdict::assertion));
  }
}
