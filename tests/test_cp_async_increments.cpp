// cp.async.mbarrier.arrive without .noinc raises pending at issue, and the search lets it
// commute with its phase's arrivals when, at the end of the execution, every increment of the
// phase is followed there by an arrival of its thread and by its own arrive-on
// (sim/explore/dpor_relation.hpp: provisional_increment). Held here to brute force (every
// interleaving) and to the reference enumerator on small programs, correct and buggy, with
// every execution explored: the same bug kinds and the same final results.
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

DiffProgram program(std::vector<std::uint32_t> counts, std::vector<std::vector<Instr>> scripts) {
  DiffProgram p;
  p.threads = static_cast<std::uint32_t>(scripts.size());
  p.barriers = static_cast<std::uint32_t>(counts.size());
  p.counts = std::move(counts);
  p.scripts = std::move(scripts);
  return p;
}
Instr op(Stmt s, std::int32_t arg = 0) { return {s, 0, arg}; }
const Instr kCopy0 = op(Stmt::cpa_copy, 0), kCopy1 = op(Stmt::cpa_copy, 1);
const Instr kInc = op(Stmt::cpa_arrive, 0), kNoinc = op(Stmt::cpa_arrive, 1), kArrive = op(Stmt::arrive);
const Instr kWait0 = op(Stmt::wait, 0), kRead0 = op(Stmt::load_slot, 0), kRead1 = op(Stmt::load_slot, 1);

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

}  // namespace

TEST_CASE("provisional increments: DPOR reaches every outcome brute force reaches on small cp.async programs",
          "[explore][dpor][cp-async][soundness]") {
  struct Case {
    const char* name;
    DiffProgram p;
    bool bug;
    // A bug kind may be reached only after another bug, which ends the execution: a search that
    // explores one order per class may meet the other first.
    bool shadowed = false;
  };
  const Case cases[] = {
      // FlashAttention-3's producer shape: copy, track it (+1), arrive; wait, read the other's piece.
      {"two producers, each cp.async + increment + arrive",
       program({2}, {{kCopy0, kInc, kArrive, kWait0, kRead1}, {kCopy1, kInc, kArrive, kWait0, kRead0}}), false},
      {"three producers tracking nothing, one waits",
       program({3}, {{kInc, kArrive}, {kInc, kArrive}, {kInc, kArrive, kWait0}}), false},
      {"one increment, one .noinc",
       program({2}, {{kCopy0, kInc, kArrive, kWait0, kRead1}, {kCopy1, kNoinc, kWait0, kRead0}}), false},
      {".noinc alone", program({2}, {{kCopy0, kNoinc, kWait0, kRead1}, {kCopy1, kNoinc, kWait0, kRead0}}), false},
      // A poll sees the phase open or complete: two results.
      {"a poller beside one producer",
       program({1}, {{kCopy0, kInc, kArrive}, {op(Stmt::test_wait, 0), kWait0, kRead0}}), false},
      // Bugs. A producer without its arrive: the phase never completes.
      {"a missing arrival", program({2}, {{kCopy0, kInc, kArrive, kWait0}, {kCopy1, kInc, kWait0, kRead0}}), true},
      // The arrivals before the increments: the phase may complete before the copies landed.
      {"arrive before the increment",
       program({2}, {{kCopy0, kArrive, kInc, kWait0, kRead1}, {kCopy1, kArrive, kInc, kWait0, kRead0}}), true, true},
      // Without the reads nothing is wrong: the increments and their copies' arrive-ons fall in
      // phase 1 before any wait saw phase 0 complete, but none of them completes phase 1 (each
      // increment is matched by its own arrive-on), so no wait's answer changes: PTX's
      // missing-wait rule is a misuse only on the arrive-on that completes the phase
      // (docs/semantics.md, "The missing-wait rule"; what synccheck reports on the H100).
      {"arrive before the increment, no reads",
       program({2}, {{kCopy0, kArrive, kInc, kWait0}, {kCopy1, kArrive, kInc, kWait0}}), false},
      // One arrival too many: the phase completes early in some orders, before a copy landed.
      {"a count one short", program({1}, {{kCopy0, kInc, kArrive}, {kCopy1, kInc, kArrive, kWait0, kRead0}}), true},
      // Thread 0's increment meets both of its checks in some orders while thread 2's arrive-on
      // lands in the next phase; thread 1's arrive before thread 0's increment completes the
      // phase at once (dpor_relation.hpp: why every increment of the phase is checked).
      {"one increment's checks met, another's not",
       program({1}, {{kCopy0, kInc, kArrive}, {kArrive, kWait0, kRead0}, {kCopy1, kInc}}), true},
  };
  for (const Case& c : cases) {
    INFO(c.name << "\n" << describe(c.p));
    const Reach dpor = reach(c.p, SearchKind::dpor), brute = reach(c.p, SearchKind::brute_force);
    const ReferenceResult ref = reference_explore(c.p);
    INFO("dpor (" << dpor.stats.executions << " executions, " << dpor.stats.reruns << " reruns): " << text(dpor.kinds)
                  << text(dpor.results) << "\nbrute force (" << brute.stats.executions
                  << " executions): " << text(brute.kinds) << text(brute.results)
                  << "\nreference: " << text(ref.bug_kinds) << text(ref.outcomes));
    REQUIRE(dpor.stats.complete);
    REQUIRE(brute.stats.complete);
    REQUIRE(ref.complete);
    CHECK(dpor.results == brute.results);
    CHECK(dpor.results == ref.outcomes);
    CHECK(dpor.kinds.empty() == !c.bug);
    CHECK(brute.kinds.empty() == !c.bug);
    CHECK(std::includes(brute.kinds.begin(), brute.kinds.end(), dpor.kinds.begin(), dpor.kinds.end()));
    CHECK(std::includes(ref.bug_kinds.begin(), ref.bug_kinds.end(), dpor.kinds.begin(), dpor.kinds.end()));
    if (!c.shadowed) CHECK(dpor.kinds == brute.kinds);
    CHECK(dpor.stats.fallbacks == 0);
  }
  // The shadowed case is the same with the rule off (every increment an inc): the race on the
  // read ends the executions in which the missing wait comes later; without the reads, the
  // missing wait is reached (above).
}

TEST_CASE("provisional increments: the producer shape is one execution; a failed check runs the schedule again",
          "[explore][dpor][cp-async]") {
  SECTION("two and three producers: one class, no rerun") {
    for (const DiffProgram& p :
         {program({2}, {{kCopy0, kInc, kArrive, kWait0, kRead1}, {kCopy1, kInc, kArrive, kWait0, kRead0}}),
          program({3}, {{kCopy0, kInc, kArrive, kWait0}, {kCopy1, kInc, kArrive, kWait0}, {kInc, kArrive, kWait0}})}) {
      const Reach r = reach(p, SearchKind::dpor);
      CHECK(r.stats.executions == 1);
      CHECK(r.stats.provisional_incs > 0);
      CHECK(r.stats.reruns == 0);
    }
  }
  SECTION("an increment with no arrival of its thread after it is an inc again") {
    const Reach r =
        reach(program({2}, {{kCopy0, kInc, kArrive, kWait0}, {kCopy1, kInc, kWait0, kRead0}}), SearchKind::dpor);
    CHECK(r.stats.reruns > 0);
    CHECK(r.kinds == std::set<std::string>{"deadlock"});
  }
}

TEST_CASE("provisional increments: 32 producers of FlashAttention-3's paged-KV shape verify in one execution",
          "[explore][dpor][cp-async]") {
  using P = mbcheck::sim::HostPlatform;
  constexpr std::uint32_t n = 32;
  alignas(16) static unsigned char pieces[16 * n];
  mbcheck::sim::LaunchShape shape;
  shape.threads_per_cta = n;
  shape.smem_bytes = 64 + 16 * n;
  mbcheck::sim::FunctionProgram prog(shape, [] {
    const std::uint32_t t = P::thread_idx();
    mbcheck::Mbarrier<P> bar(*reinterpret_cast<P::Barrier*>(P::shared_memory()));
    if (t == 0) bar.init(n);
    P::sync_threads();
    P::cp_async(P::shared_memory() + 64 + 16 * t, pieces + 16 * t, 16);
    P::cp_async_mbarrier_arrive(bar.raw());
    bar.arrive();
    bar.wait(0);
    (void)P::load(reinterpret_cast<std::uint32_t*>(P::shared_memory() + 64 + 16 * ((t + 1) % n)));
  });
  const mbcheck::sim::ExploreResult r = mbcheck::sim::explore(prog, mbcheck::sim::ExploreOptions{});
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
  CHECK(r.stats.reruns == 0);
}

TEST_CASE("provisional increments: a barrier re-initialised after them, DPOR against brute force",
          "[explore][dpor][cp-async][soundness]") {
  // Both threads increment and arrive in phase 0 (count 2); thread 0 waits, invalidates and
  // re-initialises it (count 1), then increments and arrives again, in a phase 0 of the new
  // incarnation; thread 1 polls phase 0 at some point: before the inval or after it (a misuse).
  using P = mbcheck::sim::HostPlatform;
  using mbcheck::sim::test::smem_bar;
  mbcheck::sim::FunctionProgram prog(mbcheck::sim::test::threads(2), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(2);
    P::sync_threads();
    P::cp_async_mbarrier_arrive(smem_bar(0).raw());
    smem_bar(0).arrive();
    if (P::thread_idx() == 0) {
      smem_bar(0).wait(0);
      smem_bar(0).inval();
      smem_bar(0).init(1);
      P::cp_async_mbarrier_arrive(smem_bar(0).raw());
      smem_bar(0).arrive();
      smem_bar(0).wait(0);
    } else {
      (void)smem_bar(0).test_wait(0);
    }
  });
  auto verdicts = [&](SearchKind kind, mbcheck::sim::ExploreStats& stats) {
    mbcheck::sim::ExploreOptions o;
    o.kind = kind;
    o.stop_at_first_bug = false;
    std::set<std::string> seen;
    stats = mbcheck::sim::explore(prog, o, [&](const mbcheck::sim::Outcome& out) {
              if (out.verdict != mbcheck::sim::Verdict::pruned) seen.insert(bug_kind(out));
            }).stats;
    return seen;
  };
  mbcheck::sim::ExploreStats d, b;
  const auto dpor = verdicts(SearchKind::dpor, d), brute = verdicts(SearchKind::brute_force, b);
  INFO("dpor: " << text(dpor) << "\nbrute force: " << text(brute));
  REQUIRE(d.complete);
  REQUIRE(b.complete);
  CHECK(dpor == brute);
  CHECK(dpor.count("misuse:invalidated") == 1);
  CHECK(d.reruns > 0);  // the new incarnation's phase 0 holds the old one's increments: run as incs
}
