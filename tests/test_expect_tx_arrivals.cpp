// An expect_tx by a thread that still owes its own arrival in the phase commutes with the
// phase's other arrivals: the search lets it (sim/explore/dpor_relation.hpp:
// provisional_expect) when, at the end of the execution, that thread did arrive later in the
// same phase and the phase holds no inc; else it runs the schedule again with the expect_tx
// ordered. CUTLASS's epilogue load pipeline is the shape: every producer lane arrives on C's
// full barrier, the elected lane arms it by a separate expect_tx before its own arrive. Held
// here to brute force (every interleaving) and to the reference enumerator, correct and off by
// one thing, with every execution explored.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "spec/mbarrier.hpp"
#include "tests/differential/compare.hpp"
#include "tests/differential/reference.hpp"
#include "tests/differential/runtime_program.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::diff;
using mbcheck::sim::SearchKind;

namespace {

DiffProgram program(std::uint32_t count, std::vector<std::vector<Instr>> scripts) {
  DiffProgram p;
  p.threads = static_cast<std::uint32_t>(scripts.size());
  p.barriers = 1;
  p.counts = {count};
  p.scripts = std::move(scripts);
  return p;
}
Instr op(Stmt s, std::int32_t arg = 0) { return {s, 0, arg}; }
const Instr kExpect = op(Stmt::expect_tx, 16), kCopy = op(Stmt::copy, 0), kArrive = op(Stmt::arrive);
const Instr kWait0 = op(Stmt::wait, 0), kWait1 = op(Stmt::wait, 1), kRead = op(Stmt::load_slot, 0);

// n lanes: lane 0 runs `elected`, the others arrive, and the last one then waits and reads.
DiffProgram lanes(std::uint32_t n, std::uint32_t count, std::vector<Instr> elected) {
  std::vector<std::vector<Instr>> s(n, std::vector<Instr>{kArrive});
  s[0] = std::move(elected);
  s[n - 1].push_back(kWait0);
  s[n - 1].push_back(kRead);
  return program(count, std::move(s));
}

struct Reach {
  std::set<std::string> kinds;    // bug kinds of the buggy executions
  std::set<std::string> results;  // final results of the completed ones
  mbcheck::sim::ExploreStats stats;
};

Reach reach(const DiffProgram& p, SearchKind kind) {
  RuntimeProgram prog(p);
  mbcheck::sim::ExploreOptions o;
  o.kind = kind;
  o.stop_at_first_bug = false;
  o.max_executions = 1'000'000;
  Reach r;
  r.stats = mbcheck::sim::explore(prog, o, [&](const mbcheck::sim::Outcome& out) {
              if (out.verdict == mbcheck::sim::Verdict::completed)
                r.results.insert(format_observed(prog.observed()));
              else if (mbcheck::sim::is_bug(out.verdict))
                r.kinds.insert(bug_kind(out));
            }).stats;
  return r;
}

std::string text(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += "\n    " + x;
  return out;
}

struct Case {
  const char* name;
  DiffProgram p;
  bool bug;
};

// DPOR against brute force (when asked) and the reference: the same results, the same bug kinds.
void hold(const Case& c, bool brute_too) {
  INFO(c.name << "\n" << describe(c.p));
  const Reach dpor = reach(c.p, SearchKind::dpor);
  const ReferenceResult ref = reference_explore(c.p);
  INFO("dpor (" << dpor.stats.executions << " executions, " << dpor.stats.reruns << " reruns): " << text(dpor.kinds)
                << text(dpor.results) << "\nreference: " << text(ref.bug_kinds) << text(ref.outcomes));
  REQUIRE(dpor.stats.complete);
  REQUIRE(ref.complete);
  CHECK(dpor.results == ref.outcomes);
  CHECK(dpor.kinds.empty() == !c.bug);
  CHECK(std::includes(ref.bug_kinds.begin(), ref.bug_kinds.end(), dpor.kinds.begin(), dpor.kinds.end()));
  CHECK(dpor.stats.fallbacks == 0);
  if (!brute_too) return;
  const Reach brute = reach(c.p, SearchKind::brute_force);
  INFO("brute force (" << brute.stats.executions << " executions): " << text(brute.kinds) << text(brute.results));
  REQUIRE(brute.stats.complete);
  CHECK(dpor.results == brute.results);
  CHECK(dpor.kinds == brute.kinds);
}

}  // namespace

TEST_CASE("provisional expect_tx: DPOR reaches every outcome brute force reaches",
          "[explore][dpor][expect-tx][soundness]") {
  const Case cases[] = {
      // The epilogue load shape: arm, copy, arrive; the others arrive; one waits and reads.
      {"expect_tx, copy, arrive beside 2 arrivals", lanes(3, 3, {kExpect, kCopy, kArrive}), false},
      // Another thread's copy may land before the arming (tx-count below 0 for a while).
      {"the copy issued by another lane", program(3, {{kExpect, kArrive}, {kCopy, kArrive}, {kArrive, kWait0, kRead}}),
       false},
      {"two lanes arm, one copies 32 bytes' worth in two",
       program(3, {{kExpect, kArrive}, {kExpect, kCopy, op(Stmt::copy, 1), kArrive}, {kArrive, kWait0, kRead}}), false},
      // A poll sees the phase open or complete.
      {"a poller beside the arming lane",
       program(2, {{kExpect, kCopy, kArrive}, {op(Stmt::test_wait, 0), kArrive, kWait0, kRead}}), false},
      // Bugs. The arming lane never arrives: the phase may complete before its expect_tx.
      {"the arming lane's arrival missing", lanes(3, 2, {kExpect, kCopy}), true},
      {"the arming lane's arrival missing, count unmet", lanes(3, 3, {kExpect, kCopy}), true},
      // It arrives, but only after waiting for the phase: its arrival is in phase 1.
      {"the arming lane arrives on the next phase", lanes(3, 2, {kExpect, kCopy, kWait0, kArrive}), true},
      // It arrives first and arms afterwards: the expect_tx may fall into the next phase.
      {"arrive before the expect_tx", lanes(3, 3, {kArrive, kExpect, kCopy}), true},
      // Two phases, each armed by lane 0 after it saw the one before complete.
      {"two phases, armed each time",
       program(2, {{kExpect, kCopy, kArrive, kWait0, kExpect, op(Stmt::copy, 1), kArrive},
                   {kArrive, kWait0, kRead, kArrive, kWait1}}),
       false},
  };
  for (const Case& c : cases) hold(c, true);
}

TEST_CASE("provisional expect_tx: 8 lanes held to the reference", "[explore][dpor][expect-tx][soundness]") {
  const Case cases[] = {
      {"8 lanes, lane 0 arms, copies, arrives", lanes(8, 8, {kExpect, kCopy, kArrive}), false},
      {"8 lanes, the arming lane's arrival missing", lanes(8, 7, {kExpect, kCopy}), true},
      {"8 lanes, the arming lane arrives on the next phase", lanes(8, 7, {kExpect, kCopy, kWait0, kArrive}), true},
  };
  for (const Case& c : cases) hold(c, false);
}

namespace {
using P = mbcheck::sim::HostPlatform;
mbcheck::Mbarrier<P> bar0() { return mbcheck::Mbarrier<P>(*reinterpret_cast<P::Barrier*>(P::shared_memory())); }

// n lanes arrive on one barrier and wait for it; lane 0 arms it for a 16-byte copy, by a
// separate expect_tx before its arrive, or by arrive.expect_tx.
mbcheck::sim::ExploreStats epilogue_load(std::uint32_t n, bool separate) {
  alignas(16) static unsigned char src[16];
  mbcheck::sim::LaunchShape shape;
  shape.threads_per_cta = n;
  shape.smem_bytes = 2048;
  mbcheck::sim::FunctionProgram prog(shape, [n, separate] {
    if (P::thread_idx() == 0) bar0().init(n);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      if (separate) bar0().expect_tx(16);
      P::cp_async_bulk_global_to_shared(P::shared_memory() + 1024, src, 16, bar0().raw());
      if (separate)
        bar0().arrive();
      else
        bar0().arrive_expect_tx(16);
    } else {
      bar0().arrive();
    }
    bar0().wait(0);
  });
  mbcheck::sim::ExploreOptions o;
  o.max_executions = 5000;
  return mbcheck::sim::explore(prog, o).stats;
}
}  // namespace

TEST_CASE("provisional expect_tx: the epilogue load shape costs what arrive.expect_tx costs",
          "[explore][dpor][expect-tx]") {
  for (std::uint32_t n : {8u, 32u}) {
    INFO(n << " lanes");
    const auto separate = epilogue_load(n, true), joined = epilogue_load(n, false);
    REQUIRE(separate.complete);
    REQUIRE(joined.complete);
    CHECK(separate.executions == joined.executions);
    CHECK(separate.reruns == 0);
  }
  SECTION("an arming lane that never arrives is ordered again: a rerun") {
    const Reach r = reach(lanes(3, 2, {kExpect, kCopy}), SearchKind::dpor);
    CHECK(r.stats.reruns > 0);
  }
}
