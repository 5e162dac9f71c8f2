// The operation model (sim/runtime/ops.def): one row per instruction, read by the runtime,
// the DPOR relation, the race detector and the reports. The regressions of the hand-wired
// design it replaced, and the instructions added through it.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/fuzz.hpp"
#include "sim/host_platform.hpp"
#include "sim/protocols/protocols.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {
LaunchShape cluster_of(std::uint32_t x, std::uint32_t threads) {
  LaunchShape shape;
  shape.cluster_x = x;
  shape.ctas = x;
  shape.threads_per_cta = threads;
  shape.warp_size = 4;
  shape.smem_bytes = 2048;
  return shape;
}
P::Barrier& bar0() { return reinterpret_cast<P::Barrier*>(P::shared_memory())[0]; }
}  // namespace

TEST_CASE("every row of the operation table names its PTX instruction and formats its report", "[ops]") {
  std::set<std::string> names;
  MbarrierState bar;
  std::int64_t word = 0;
  for (std::size_t k = 0; k < kOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    const OpInfo& row = op_info(kind);
    INFO(row.kind);
    if (kind != OpKind::start) CHECK_FALSE(row.ptx.empty());
    Op op{kind, &bar, 2};
    op.addr = &word;
    std::string text;
    CHECK_NOTHROW(text = report_text(op, "full[0]"));
    CHECK_FALSE(text.empty());
    CHECK(std::string(to_string(kind)).size() > 0);
    names.insert(std::string(row.kind));
    // What the relation and the race detector read must agree with the effect.
    if (row.dependence == Dependence::observer) CHECK(row.effect == Effect::observe);
    if (is_counter(op)) CHECK(row.effect != Effect::none);
    if (row.order == Order::release || row.order == Order::relaxed) CHECK(row.effect != Effect::none);
  }
  CHECK(names.size() == kOpKinds);
}

TEST_CASE("the .shared::cluster form travels with its operation through the scheduling point",
          "[ops][cluster][explore]") {
  // Two threads of rank 1 arrive on rank 0's barrier with the remote form. The form used to be
  // a flag of the runtime, set before the scheduling point and read after it: when the other
  // thread's remote arrive ran in between, it was down, and the arrive was a false misuse.
  FunctionProgram prog(cluster_of(2, 2), [] {
    if (P::thread_idx() == 0) {
      P::mbarrier_init(bar0(), 2);
      P::fence_mbarrier_init_release_cluster();
    }
    P::barrier_cluster_arrive_relaxed();
    P::barrier_cluster_wait();
    if (P::cluster_ctarank() == 1) P::mbarrier_arrive_cluster(bar0(), 0);
    if (P::cluster_ctarank() == 0 && P::thread_idx() == 0) P::mbarrier_wait_parity(bar0(), 0);
    P::barrier_cluster_arrive();
    P::barrier_cluster_wait();
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("random and PCT fuzzing of the correct bundled protocols report no bug", "[ops][fuzz][protocols]") {
  // The shapes the suite checks them at; 200 runs of each strategy.
  struct Case {
    const char* protocol;
    std::map<std::string, std::string> options;
  };
  const std::vector<Case> cases = {
      {"epi-load", {}},
      {"epi-load", {{"ctas", "2"}, {"copy-pieces", "2"}}},
      {"tma-pipeline", {}},
      {"tma-pipeline", {{"consumer-wait", "try-then-wait"}}},
      {"pingpong", {}},
      {"tma-store", {}},
      {"cluster-gemm", {{"tiles", "2"}, {"k-blocks", "2"}}},
      {"cluster-gemm", {{"cluster", "2x2"}, {"tiles", "1"}, {"k-blocks", "2"}}},
      {"cluster-gemm", {{"order", "named-barriers"}, {"tiles", "2"}, {"k-blocks", "2"}}},
  };
  for (const Case& c : cases)
    for (FuzzKind kind : {FuzzKind::random, FuzzKind::pct}) {
      INFO(c.protocol << (kind == FuzzKind::pct ? " pct" : " random"));
      for (const auto& [k, v] : c.options) INFO("--" << k << " " << v);
      FuzzOptions o;
      o.kind = kind;
      o.runs = 200;
      o.shrink = false;
      const FuzzResult r = fuzz([&] { return std::unique_ptr<Program>(make_protocol(c.protocol, c.options)); }, o);
      CHECK(r.runs == 200);
      CHECK(r.verdict != CheckVerdict::bug);
      if (r.counterexample) FAIL_CHECK(r.counterexample->cause);
    }
}

TEST_CASE("n threads committing cp.async to one barrier phase with .noinc take one execution",
          "[ops][cp-async][dpor]") {
  // Each thread copies its word, then cp.async.mbarrier.arrive.noinc: the issue reads only
  // whether the barrier is live, and the arrive-ons commute (they were ordered as counter ops:
  // (n!)^2 executions).
  const std::uint32_t n = GENERATE(1u, 2u, 3u, 4u, 8u, 32u, 128u);
  static std::int64_t source[128];
  for (std::uint32_t i = 0; i < 128; ++i) source[i] = 100 + i;
  LaunchShape shape = threads(n);
  shape.smem_bytes = 1024 + 16 * 128 + 64;
  FunctionProgram prog(shape, [n] {
    const std::uint32_t me = P::thread_idx();
    if (me == 0) smem_bar(0).init(n);
    P::sync_threads();
    P::cp_async(smem_word(2 * me), &source[me], 8);
    P::cp_async_commit_group();
    P::cp_async_mbarrier_arrive_noinc(smem_bar(0).raw());
    smem_bar(0).wait(0);
    P::check(P::load(smem_word(2 * ((me + 1) % n))) == 100 + (me + 1) % n, "a neighbour's copied word");
  });
  INFO("n = " << n);
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("a deadlock in elect.sync is named elect.sync", "[ops][collective]") {
  LaunchShape shape;
  shape.warp_size = 4;
  shape.threads_per_cta = 4;
  shape.smem_bytes = 2048;
  FunctionProgram prog(shape, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::lane_idx() != 3) {
      P::elect_sync(0xF);
      smem_bar(0).arrive();
    } else {
      smem_bar(0).wait(0);  // lane 3 has not exited: the others wait for it at elect.sync
    }
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::deadlock);
  CHECK_THAT(r.bug->message, Catch::Contains("elect.sync"));
  CHECK_THAT(r.bug->message, !Catch::Contains("__syncwarp"));
}

TEST_CASE("a .relaxed arrive completes the phase but orders none of the thread's stores", "[ops][relaxed]") {
  // Thread 0 stores a word, then arrives; thread 1 waits for the phase and loads the word.
  enum class Form { release, relaxed, expect_tx_relaxed, drop_relaxed };
  const Form form = GENERATE(Form::release, Form::relaxed, Form::expect_tx_relaxed, Form::drop_relaxed);
  FunctionProgram prog(threads(2), [form] {
    if (P::thread_idx() == 0) {
      smem_bar(0).init(1);
    }
    P::sync_threads();
    if (P::thread_idx() == 0) {
      P::store(smem_word(0), std::int64_t{7});
      switch (form) {
        case Form::release: P::mbarrier_arrive(smem_bar(0).raw()); break;
        case Form::relaxed: P::mbarrier_arrive_relaxed(smem_bar(0).raw()); break;
        case Form::expect_tx_relaxed:
          P::mbarrier_arrive_expect_tx_relaxed(smem_bar(0).raw(), 16);
          P::mbarrier_complete_tx(smem_bar(0).raw(), 16);
          break;
        case Form::drop_relaxed: P::mbarrier_arrive_drop_relaxed(smem_bar(0).raw()); break;
      }
    } else {
      smem_bar(0).wait(0);
      P::check(P::load(smem_word(0)) == 7, "the store before the arrive");
    }
  });
  const ExploreResult r = explore_all(prog);
  if (form == Form::release) {
    CHECK_FALSE(r.bug);
    CHECK(r.stats.executions == 1);
  } else {
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

namespace {
// A wgmma consumer warp group (threads 0..127) and a TMA producer (thread 128) over one
// stage, two rounds: the producer fills the stage (full, barrier 0), the warp group runs a
// wgmma on it, and thread 0 releases it (empty, barrier 1) for the next fill. `groups`
// MMAs per round, each committed in its own group; the release comes after
// wgmma.wait_group(`pending`) (pending < 0: before any wait_group, as if warpgroup_wait were
// forgotten). The stage is two B operand tiles of 256 bytes (one m64n8k16 step each).
enum class Release { after_wait_0, before_wait, after_wait_1 };
void wgmma_stage_protocol(Release release) {
  alignas(16) static std::int64_t source[2][64];
  const std::uint32_t me = P::thread_idx();
  unsigned char* stage = P::shared_memory() + 1024;  // two 256-byte operand tiles
  if (me == 0) {
    smem_bar(0).init(1);
    smem_bar(1).init(1);
  }
  P::sync_threads();
  if (me == 128) {
    for (int round = 0; round < 2; ++round) {
      if (round > 0) smem_bar(1).wait(round - 1);
      smem_bar(0).arrive_expect_tx(512);
      P::cp_async_bulk_global_to_shared(stage, source[round], 512, smem_bar(0).raw());
    }
  } else if (me < 128) {
    P::WgmmaAccumulator acc;
    for (int round = 0; round < 2; ++round) {
      smem_bar(0).wait(round);
      P::wgmma_fence();
      P::wgmma_mma_async(acc, nullptr, 0, stage, 256);
      P::wgmma_commit_group();
      P::wgmma_mma_async(acc, nullptr, 0, stage + 256, 256);
      P::wgmma_commit_group();
      if (release == Release::after_wait_0) P::wgmma_wait_group(0);
      if (release == Release::after_wait_1) P::wgmma_wait_group(1);  // the newest group still reads
      if (me == 0) smem_bar(1).arrive();
      if (release != Release::after_wait_0) P::wgmma_wait_group(0);
    }
  }
}
LaunchShape warp_group_and_producer() {
  LaunchShape shape;
  shape.threads_per_cta = 160;
  shape.warp_size = 32;
  shape.smem_bytes = 2048;
  return shape;
}
}  // namespace

TEST_CASE("wgmma reads its shared-memory operands until the wait_group that retires its group", "[ops][wgmma]") {
  SECTION("released after wgmma.wait_group 0: no race, in one execution") {
    FunctionProgram prog(warp_group_and_producer(), [] { wgmma_stage_protocol(Release::after_wait_0); });
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
  SECTION("released between commit_group and wait_group: the next fill races with the MMA's read") {
    FunctionProgram prog(warp_group_and_producer(), [] { wgmma_stage_protocol(Release::before_wait); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
    CHECK_THAT(r.bug->message, Catch::Contains("wgmma"));
  }
  SECTION("released after wait_group 1: the newest group may still be reading") {
    FunctionProgram prog(warp_group_and_producer(), [] { wgmma_stage_protocol(Release::after_wait_1); });
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}

TEST_CASE("a wgmma reading what a thread stored needs fence.proxy.async", "[ops][wgmma]") {
  const bool fenced = GENERATE(false, true);
  FunctionProgram prog(warp_group_and_producer(), [fenced] {
    unsigned char* tile = P::shared_memory() + 1024;
    if (P::thread_idx() == 0) P::store(reinterpret_cast<std::int64_t*>(tile), std::int64_t{3});
    if (fenced) P::fence_proxy_async_shared_cta();
    if (P::thread_idx() < 128) {
      P::WgmmaAccumulator acc;
      P::wgmma_fence();
      P::wgmma_mma_async(acc, nullptr, 0, tile, 256);
      P::wgmma_commit_group();
      P::wgmma_wait_group(0);
    }
  });
  const ExploreResult r = explore_all(prog);
  if (fenced) {
    CHECK_FALSE(r.bug);
  } else {
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}
