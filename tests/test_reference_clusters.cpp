// The reference enumerator's cluster, scope and warp-collective statements on small programs
// whose answer the PTX ISA gives directly (diff_program.hpp), and DPOR's agreement on each.
#include <catch2/catch.hpp>

#include "tests/differential/compare.hpp"

using namespace mbcheck::diff;

namespace {
// A 2x1 cluster of one thread per CTA: CTA 1 stores into rank 0's D[0] (DSMEM), then signals
// rank 0's barrier 0 by `signal`; CTA 0 waits and loads D[0]. `setup`: fence.mbarrier_init
// and a relaxed cluster sync first; `teardown`: a cluster sync before exit.
DiffProgram handoff(Stmt signal, bool fence, bool setup, bool teardown) {
  DiffProgram p;
  p.ctas = 2;
  p.threads = 1;
  p.cluster_x = 2;
  p.counts = {1};
  p.scripts.resize(2);
  for (auto& s : p.scripts) {
    if (fence) s.push_back({Stmt::fence_init, 0, 0});
    if (setup) {
      s.push_back({Stmt::cluster_arrive_relaxed, 0, 0});
      s.push_back({Stmt::cluster_wait, 0, 0});
    }
  }
  p.scripts[1].push_back({Stmt::dsmem_store, 0, 0});
  if (signal == Stmt::remote_complete_tx) {
    p.scripts[0].push_back({Stmt::expect_tx, 0, 16});
    p.scripts[0].push_back({Stmt::arrive, 0, 0});
  }
  p.scripts[1].push_back({signal, 0, 0});
  p.scripts[0].push_back({Stmt::wait, 0, 0});
  p.scripts[0].push_back({Stmt::load, 0, 0});
  if (teardown)
    for (auto& s : p.scripts) {
      s.push_back({Stmt::cluster_arrive, 0, 0});
      s.push_back({Stmt::cluster_wait, 0, 0});
    }
  return p;
}

ReferenceResult check(const DiffProgram& p) {
  const Comparison c = compare(p);
  INFO(describe(p) << c.why);
  CHECK(c.agree);
  return c.reference;
}
}  // namespace

TEST_CASE("reference: a DSMEM store released by a remote arrive after init, fence and cluster sync",
          "[reference][clusters]") {
  // PTX ISA 9.1, 8.7: the remote arrive is .release.cluster; a wait of the default .cta scope
  // does not include the peer's thread, so only a .cluster wait synchronizes with it.
  DiffProgram p = handoff(Stmt::remote_arrive, true, true, true);
  CHECK(check(p).bug_kinds == std::set<std::string>{"race"});
  for (auto& s : p.scripts)
    for (Instr& i : s)
      if (i.op == Stmt::wait) i.op = Stmt::wait_cluster;
  const ReferenceResult r = check(p);
  CHECK(!r.bug);
  CHECK(r.outcomes == std::set<std::string>{"[2,][] D 2 0 0 0 S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 A 0 0"});
}

TEST_CASE("reference: the init must reach the peer (fence_init before a relaxed sync, or a sync at all)",
          "[reference][clusters]") {
  CHECK(check(handoff(Stmt::remote_arrive, false, true, true)).bug_kinds.count("misuse:unfenced-init"));
  CHECK(check(handoff(Stmt::remote_arrive, true, false, true)).bug_kinds.count("misuse:unfenced-init"));
}

TEST_CASE("reference: a relaxed remote complete_tx releases nothing", "[reference][clusters]") {
  CHECK(check(handoff(Stmt::remote_complete_tx, true, true, true)).bug_kinds.count("race"));
}

TEST_CASE("reference: a peer's DSMEM read needs the owner alive", "[reference][clusters]") {
  DiffProgram p;
  p.ctas = 2;
  p.threads = 1;
  p.cluster_x = 2;
  p.counts = {1};
  p.scripts = {{{Stmt::cluster_arrive, 0, 0}, {Stmt::cluster_wait, 0, 0}},
               {{Stmt::cluster_arrive, 0, 0}, {Stmt::cluster_wait, 0, 0}, {Stmt::dsmem_load, 0, 0}}};
  CHECK(check(p).bug_kinds == std::set<std::string>{"lifetime"});
  for (auto& s : p.scripts) {  // a cluster sync before exit keeps rank 0's memory
    s.push_back({Stmt::cluster_arrive, 0, 0});
    s.push_back({Stmt::cluster_wait, 0, 0});
  }
  CHECK(!check(p).bug);
}

TEST_CASE("reference: a multicast lands in every CTA of the mask", "[reference][clusters]") {
  DiffProgram p;
  p.ctas = 2;
  p.threads = 1;
  p.cluster_x = 2;
  p.counts = {1};
  const std::vector<Instr> setup = {{Stmt::cluster_arrive, 0, 0}, {Stmt::cluster_wait, 0, 0}};
  p.scripts = {setup, setup};
  p.scripts[0].push_back({Stmt::multicast, 0, 3});
  for (auto& s : p.scripts) {
    s.push_back({Stmt::arrive_expect_tx, 0, 16});
    s.push_back({Stmt::wait, 0, 0});
    s.push_back({Stmt::load_slot, 0, 0});
  }
  const ReferenceResult r = check(p);
  CHECK(!r.bug);
  CHECK(r.outcomes.size() == 1);
  CHECK(r.outcomes.begin()->find("[1000,][1000,]") == 0);
  p.scripts[0][2].arg = 4;  // rank 2 is outside a 2x1 cluster
  CHECK(check(p).bug_kinds == std::set<std::string>{"misuse:cluster"});
}

TEST_CASE("reference: warp collectives are rendezvous of the warp's lanes", "[reference][collectives]") {
  DiffProgram p;
  p.threads = 2;
  p.warp_size = 2;
  p.counts = {1};
  p.scripts = {{{Stmt::store, 0, 0}, {Stmt::syncwarp, 0, 0}, {Stmt::elect_sync, 0, 0}, {Stmt::shfl_idx, 0, 1}},
               {{Stmt::syncwarp, 0, 0}, {Stmt::load, 0, 0}, {Stmt::elect_sync, 0, 0}, {Stmt::shfl_idx, 0, 1}}};
  const ReferenceResult r = check(p);
  CHECK(!r.bug);
  CHECK(r.outcomes == std::set<std::string>{"[1,2,][1,0,2,] D 1 0 S 0 0 0 0 0 0 0 0 A 0 0"});
  p.scripts[1].erase(p.scripts[1].begin());  // lane 1 no longer waits for lane 0's store
  p.scripts[0].erase(p.scripts[0].begin() + 1);
  CHECK(check(p).bug_kinds == std::set<std::string>{"race"});
}

namespace {
using S = Stmt;
// A 2x1 cluster of `threads` threads per CTA.
DiffProgram cl(std::uint32_t threads, std::vector<std::vector<Instr>> scripts,
               std::vector<std::uint32_t> counts = {1}) {
  DiffProgram p;
  p.ctas = 2;
  p.threads = threads;
  p.cluster_x = 2;
  p.counts = counts;
  p.barriers = static_cast<std::uint32_t>(counts.size());
  p.scripts = std::move(scripts);
  return p;
}
const Instr RA{S::cluster_arrive_relaxed, 0, 0}, A{S::cluster_arrive, 0, 0}, W{S::cluster_wait, 0, 0},
    F{S::fence_init, 0, 0};
struct Case {
  const char* name;
  DiffProgram program;
  bool bug;             // the reference's verdict (PTX)
  const char* kind;     // its bug kind ("" when bug-free)
  bool runtime_agrees;  // DPOR over the runtime reaches the same verdict (all do since the fixes of
                        // tests/differential/known_disagreements.md)
};
}  // namespace

// Small programs for each rule of the cluster section, with the reference's verdict checked and
// DPOR held to it. The "(known A/B/C/D)" cases are the runtime's former departures from the PTX
// ISA (tests/differential/known_disagreements.md), fixed: regression tests.
TEST_CASE("reference: cluster and collective rules on small programs", "[reference][clusters]") {
  const std::vector<Case> cases = {
      {"Q2 relaxed cluster arrive carries phase knowledge?", cl(2, {{{S::arrive, 0, 0}, {S::wait, 0, 0}, RA, W}, {RA, W, {S::parity_wait, 0, 1}}, {RA, W}, {RA, W}}), true, "aliasing", true},
      {"Q2b release cluster arrive carries phase knowledge", cl(2, {{{S::arrive, 0, 0}, {S::wait, 0, 0}, A, W}, {A, W, {S::parity_wait, 0, 1}}, {A, W}, {A, W}}), true, "deadlock", true},
      {"Q4 peer loads for rank 0: remote expect_tx + multicast to rank 0 only", cl(1, {{F, RA, W, {S::wait, 0, 0}, {S::load_slot, 0, 0}}, {F, RA, W, {S::remote_arrive_expect_tx, 0, 0}, {S::multicast, 0, 1}}}), false, "", true},
      {"Q4b same, peer exits w/o sync (lands in rank 0 only)", cl(1, {{F, RA, W, {S::wait, 0, 0}, {S::load_slot, 0, 0}, A, W}, {F, RA, W, {S::remote_arrive_expect_tx, 0, 0}, {S::multicast, 0, 1}, A, W}}), false, "", true},
      {"Q5 dsmem_load own rank", cl(1, {{{S::store, 0, 0}, {S::dsmem_load, 0, 0}}, {}}), false, "", true},
      {"Q6 one thread of rank 0 exits early, other waits the remote arrive", cl(2, {{F, RA, W}, {RA, W, {S::wait, 0, 0}}, {F, RA, W, {S::remote_arrive, 0, 0}}, {RA, W}}), false, "", true},
      {"Q8 relaxed remote complete_tx on a phase never seen complete", cl(1, {{F, RA, W, {S::expect_tx, 0, 32}, {S::arrive, 0, 0}}, {F, RA, W, {S::remote_complete_tx, 0, 0}}}), true, "lifetime", true},
      {"Q12 two remote arrives, no wait between", cl(1, {{F, RA, W, {S::wait, 0, 0}, {S::wait, 0, 1}}, {F, RA, W, {S::remote_arrive, 0, 0}, {S::remote_arrive, 0, 0}}}), true, "misuse:missing-wait", true},
      {"Q14 dsmem_store racing owner's load", cl(1, {{F, RA, W, {S::load, 0, 0}, A, W}, {F, RA, W, {S::dsmem_store, 0, 0}, A, W}}), true, "race", true},
      {"Q1 two 1x1 clusters", [] { DiffProgram p; p.ctas = 2; p.threads = 1; p.counts = {1}; p.scripts = {{A, W, A, W}, {A, W}}; return p; }(), false, "", true},
      {"Q16 cluster arrive by all, one thread exits before wait", cl(1, {{A}, {A, W}}), false, "", true},
      {"Q17 remote arrive before the peer's init even ran (no sync)", cl(1, {{}, {{S::remote_arrive, 0, 0}}}), true, "misuse:unfenced-init", true},
      {"Q18 remote arrive_expect_tx, own CTA complete_tx", cl(1, {{F, RA, W, {S::complete_tx, 0, 16}, {S::wait, 0, 0}, A, W}, {F, RA, W, {S::remote_arrive_expect_tx, 0, 0}, A, W}}), false, "", true},
      {"Q19 dsmem store to peer, then cluster arrive relaxed after fence", cl(1, {{F, RA, W, A, W, {S::load, 0, 0}}, {F, RA, W, {S::dsmem_store, 0, 0}, RA, W}}), true, "race", true},
      {"Q20 multicast seen complete but owner's other thread exits", cl(2, {{F, RA, W, {S::multicast, 0, 3}, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}}, {RA, W}, {F, RA, W, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}}, {RA, W}}), false, "", true},
      {"Q2c (known B) relaxed cluster arrive, parity_try_wait", cl(2, {{{S::arrive, 0, 0}, {S::wait, 0, 0}, RA, W}, {RA, W, {S::parity_try_wait, 0, 1}}, {RA, W}, {RA, W}}), true, "aliasing", true},
      {"Q2d release cluster arrive, parity_try_wait", cl(2, {{{S::arrive, 0, 0}, {S::wait, 0, 0}, A, W}, {A, W, {S::parity_try_wait, 0, 1}}, {A, W}, {A, W}}), false, "", true},
      {"Q2e relaxed syncwarp-free: sync_threads carries", cl(2, {{{S::arrive, 0, 0}, {S::wait, 0, 0}, {S::sync_threads, 0, 0}}, {{S::sync_threads, 0, 0}, {S::parity_try_wait, 0, 1}}, {}, {}}), false, "", true},
      {"P1 exit completes cluster phase", cl(1, {{A, W}, {}}), false, "", true},
      {"P2 remote arrive own rank", [] { DiffProgram p; p.threads = 1; p.counts = {1}; p.scripts = {{{S::remote_arrive, 0, 0}, {S::wait, 0, 0}}}; return p; }(), false, "", true},
      {"P3 relaxed remote complete_tx seen complete, no teardown", cl(1, {{F, RA, W, {S::expect_tx, 0, 16}, {S::arrive, 0, 0}, {S::wait, 0, 0}}, {F, RA, W, {S::remote_complete_tx, 0, 0}}}), false, "", true},
      {"P3b remote arrive seen complete, no teardown", cl(1, {{F, RA, W, {S::wait, 0, 0}}, {F, RA, W, {S::remote_arrive, 0, 0}}}), false, "", true},
      {"P3c remote arrive not waited, no teardown", cl(1, {{F, RA, W}, {F, RA, W, {S::remote_arrive, 0, 0}}}), true, "lifetime", true},
      {"P5 fence by non-initialiser", cl(2, {{RA, W, {S::wait, 0, 0}}, {F, RA, W}, {F, RA, W, {S::remote_arrive, 0, 0}}, {RA, W}}), true, "misuse:unfenced-init", true},
      {"P6 (known A) release arrive by non-initialiser, no fence", cl(2, {{RA, W, {S::wait, 0, 0}}, {A, W}, {A, W, {S::remote_arrive, 0, 0}}, {A, W}}), false, "", true},
      {"P6c (known D) the initialiser's remote release carries its own init, no fence", cl(2, {{A, W}, {A, W, {S::wait, 0, 0}, {S::multicast, 0, 3}, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 1}}, {RA, W, {S::remote_arrive_expect_tx, 0, 0}, {S::remote_complete_tx, 0, 0}}, {RA, W, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}}}), false, "", true},
      {"P6b release arrive by initialiser, no fence", cl(1, {{A, W, {S::wait, 0, 0}}, {A, W, {S::remote_arrive, 0, 0}}}), false, "", true},
      {"P7 multicast without setup", cl(1, {{{S::multicast, 0, 3}, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}, A, W}, {{S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}, A, W}}), true, "misuse:unfenced-init", true},
      {"P7b multicast with setup", cl(1, {{F, RA, W, {S::multicast, 0, 3}, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}, A, W}, {F, RA, W, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}, A, W}}), false, "", true},
      {"P9 arrive twice", cl(1, {{A, A, W}, {A, W}}), true, "misuse:cluster", true},
      {"P9b wait without arrive", cl(1, {{W}, {}}), true, "misuse:cluster", true},
      {"P11 relaxed cluster arrive carries no data", cl(1, {{{S::store, 0, 0}, RA, W, A, W}, {A, W, {S::dsmem_load, 0, 0}, A, W}}), true, "race", true},
      {"P14 multicast into a peer that exits", cl(1, {{F, RA, W, {S::multicast, 0, 3}, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}}, {F, RA, W, {S::arrive_expect_tx, 0, 16}}}), true, "lifetime", true},
      {"P15 multicast seen complete by peer, no teardown", cl(1, {{F, RA, W, {S::multicast, 0, 3}, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}}, {F, RA, W, {S::arrive_expect_tx, 0, 16}, {S::wait, 0, 0}}}), false, "", true},
      {"P16 syncwarp does not order other warps", [] { DiffProgram p; p.threads = 4; p.warp_size = 2; p.counts = {1}; p.scripts = {{{S::store, 0, 0}, {S::syncwarp, 0, 0}}, {{S::syncwarp, 0, 0}}, {{S::syncwarp, 0, 0}, {S::load, 0, 0}}, {{S::syncwarp, 0, 0}}}; return p; }(), true, "race", true},
      {"P17 remote arrive after setup, owner exits early w/o wait", cl(1, {{F, RA, W}, {F, RA, W, {S::remote_arrive, 0, 0}, A, W}}), true, "lifetime", true},
      {"P18 fence then release arrive of other thread only", cl(2, {{F, RA, W}, {A, W}, {RA, W, {S::remote_arrive, 0, 0}}, {RA, W}}), true, "lifetime", true},
      {"P19 dsmem store then release cluster sync, owner reads", cl(1, {{A, W, {S::load, 0, 0}}, {{S::dsmem_store, 0, 0}, A, W}}), false, "", true},
      {"P20 dsmem store own rank", cl(1, {{{S::dsmem_store, 0, 0}, {S::load, 0, 0}}, {}}), false, "", true},
      {"P21 remote arrive to peer, relaxed sync w/o fence but initialiser released earlier via arrive", cl(1, {{{S::arrive, 0, 0}, RA, W, {S::wait, 0, 0}, A, W}, {RA, W, {S::remote_arrive, 0, 0}, A, W}}, {2}), true, "misuse:unfenced-init", true},
      {"P22 parity wait after relaxed cluster sync", cl(1, {{{S::arrive, 0, 0}, {S::wait, 0, 0}, RA, W, A, W}, {RA, W, {S::remote_arrive, 0, 0}, A, W}}, {1}), true, "misuse:unfenced-init", true},
      {"X1 a peer's DSMEM load, then the owner exits without sync", cl(1, {{{S::store, 0, 0}}, {A, W, {S::dsmem_load, 0, 0}}}), true, "lifetime", true},
      {"X1b an exit is no release (data)", cl(2, {{{S::store, 0, 0}}, {A, W, {S::load, 0, 0}}, {}, {}}), true, "race", true},
      {"X2 an exit is no release (phase knowledge)", cl(2, {{{S::arrive, 0, 0}, {S::wait, 0, 0}}, {A, W, {S::parity_try_wait, 0, 1}}, {}, {}}), true, "aliasing", true},
      {"X3 a relaxed arrive before the thread learns the phase", cl(2, {{RA, {S::arrive, 0, 0}, {S::wait, 0, 0}, W}, {RA, W, {S::parity_try_wait, 0, 1}}, {}, {}}), true, "aliasing", true},
      {"X4 a store after one's relaxed arrive is not released", cl(2, {{RA, {S::store, 0, 0}, W}, {RA, W, {S::load, 0, 0}}, {}, {}}), true, "race", true},
      {"X9 (known C) an exit completing a cluster phase releases nothing", [] { DiffProgram p; p.threads = 2; p.counts = {1}; p.scripts = {{A, W, {S::store, 0, 0}}, {A, W, A, W, {S::load, 0, 0}}}; return p; }(), true, "race", true},
      {"X10 arrive, store, exit", [] { DiffProgram p; p.threads = 2; p.counts = {1}; p.scripts = {{A, {S::store, 0, 0}}, {A, W, {S::load, 0, 0}}}; return p; }(), true, "race", true},
  };
  for (const Case& k : cases) {
    INFO(k.name << "\n" << describe(k.program));
    const Comparison c = compare(k.program);
    CHECK(c.reference.bug == k.bug);
    if (k.bug) CHECK(c.reference.bug_kinds.count(k.kind) == 1);
    INFO(c.why);
    CHECK(c.agree == k.runtime_agrees);
  }
}
