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
  const ReferenceResult r = check(handoff(Stmt::remote_arrive, true, true, true));
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
