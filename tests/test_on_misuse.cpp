// --on-misuse continue (LaunchShape::on_misuse = OnMisuse::proceed): the misuses the hardware
// answers are answered as it does (a missing wait's arrive counts, a lapped wait reads the
// parity), and the search goes on to the consequence, which the report names with its root.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <utility>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/fuzz.hpp"
#include "sim/host_platform.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {

LaunchShape shape_of(std::uint32_t n, OnMisuse on_misuse) {
  LaunchShape s = threads(n);
  s.on_misuse = on_misuse;
  return s;
}

// The transcribed kernel's bug: a count-1 barrier that its producer arrives on twice, the
// consumer waiting for phase 0 (by phase bit, as CUTLASS's PipelineState does). When both
// arrivals come before the consumer's wait, the second breaks the missing-wait rule, and on
// the hardware the consumer then reads phase 2's parity, that of phase 0: not complete, a hang.
void double_arrive() {
  if (P::thread_idx() == 0) smem_bar(0).init(1);
  P::sync_threads();
  if (P::thread_idx() == 0) {
    smem_bar(0).arrive();
    smem_bar(0).arrive();
  } else {
    smem_bar(0).wait_parity(0);
  }
}

// Thread 0 completes phases 0 and 1, waiting for each; thread 1 waits for phase 0 by its bit.
// Run after phase 1 completed, its wait is lapped: phase-aliasing to the emulator, a hang on
// the hardware (the parity of the open phase 2 is phase 0's).
void lapped_waiter() {
  if (P::thread_idx() == 0) smem_bar(0).init(1);
  P::sync_threads();
  if (P::thread_idx() == 0) {
    smem_bar(0).arrive();
    smem_bar(0).wait_parity(0);
    smem_bar(0).arrive();
    smem_bar(0).wait_parity(1);
  } else {
    smem_bar(0).wait_parity(0);
  }
}

// Two producers of one arrival each on a count-1 barrier, one of them arriving again; a
// consumer waits for phases 0 and 1 by their bits.
void three_threads() {
  if (P::thread_idx() == 0) smem_bar(0).init(1);
  P::sync_threads();
  if (P::thread_idx() == 2) {
    smem_bar(0).wait_parity(0);
    smem_bar(0).wait_parity(1);
    return;
  }
  smem_bar(0).arrive();
  if (P::thread_idx() == 0) smem_bar(0).arrive();
}

std::string text(const std::set<std::pair<Verdict, int>>& seen) {
  std::string out;
  for (const auto& [v, root] : seen)
    out += std::string(to_string(v)) + (root < 0 ? "" : "<-" + std::string(to_string(static_cast<MisuseKind>(root)))) +
           " ";
  return out;
}

// Every (verdict, root misuse) one search kind reaches, over all executions.
std::set<std::pair<Verdict, int>> outcomes(Program& prog, SearchKind kind) {
  ExploreOptions o;
  o.kind = kind;
  o.stop_at_first_bug = false;
  std::set<std::pair<Verdict, int>> seen;
  const ExploreResult r = explore(prog, o, [&](const Outcome& out) {
    seen.insert({out.verdict, out.root ? static_cast<int>(out.root->kind) : -1});
  });
  CHECK(r.stats.complete);
  return seen;
}

}  // namespace

TEST_CASE("on-misuse stop: two arrivals on a count-1 barrier before its wait are a missing-wait misuse",
          "[on-misuse]") {
  FunctionProgram prog(shape_of(2, OnMisuse::stop), double_arrive);
  const ExploreResult r = explore(prog, ExploreOptions{});
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::misuse);
  CHECK(r.bug->misuse == MisuseKind::missing_wait);
  CHECK_FALSE(r.bug->root);
}

TEST_CASE("on-misuse continue: the missing wait leads to the hang, and the report names both", "[on-misuse]") {
  FunctionProgram prog(shape_of(2, OnMisuse::proceed), double_arrive);
  const ExploreResult r = explore(prog, ExploreOptions{});
  REQUIRE(r.bug);
  INFO(r.bug->message);
  CHECK(r.bug->verdict == Verdict::deadlock);
  REQUIRE(r.bug->root);
  CHECK(r.bug->root->kind == MisuseKind::missing_wait);
  CHECK_FALSE(r.bug->root_only);
  CHECK(r.bug->message.find("the consequence of the missing-wait") != std::string::npos);
  CHECK(r.bug->message.find("the wait reads it as not complete") != std::string::npos);
  bool names_root = false;
  for (const std::string& d : r.bug->details) names_root |= d.rfind("root misuse (missing-wait", 0) == 0;
  CHECK(names_root);
}

TEST_CASE("on-misuse continue: a lapped wait is the hang the hardware shows, rooted in phase-aliasing", "[on-misuse]") {
  FunctionProgram stop(shape_of(2, OnMisuse::stop), lapped_waiter);
  const ExploreResult stopped = explore(stop, ExploreOptions{});
  REQUIRE(stopped.bug);
  CHECK(stopped.bug->verdict == Verdict::aliasing);

  FunctionProgram go_on(shape_of(2, OnMisuse::proceed), lapped_waiter);
  const ExploreResult r = explore(go_on, ExploreOptions{});
  REQUIRE(r.bug);
  INFO(r.bug->message);
  CHECK(r.bug->verdict == Verdict::deadlock);
  REQUIRE(r.bug->root);
  CHECK(r.bug->root->kind == MisuseKind::phase_aliasing);
}

TEST_CASE("on-misuse continue: a misuse with no consequence in any schedule is reported after the whole search",
          "[on-misuse]") {
  // Two threads arrive once each on a count-1 barrier nobody waits on: the second arrival
  // breaks the missing-wait rule in every order, and nothing follows from it.
  FunctionProgram prog(shape_of(2, OnMisuse::proceed), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    smem_bar(0).arrive();
  });
  const ExploreResult r = explore(prog, ExploreOptions{});
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::misuse);
  CHECK(r.bug->misuse == MisuseKind::missing_wait);
  CHECK(r.bug->root_only);
  CHECK(r.stats.complete);  // every schedule was looked at for a consequence
}

TEST_CASE("on-misuse continue: the search reaches every outcome brute force reaches", "[on-misuse][soundness]") {
  // Answered by parity, an enabled wait can be disabled again by the barrier's next phase:
  // DPOR must still reach each outcome of the unreduced search.
  for (auto* kernel : {&double_arrive, &lapped_waiter, &three_threads}) {
    FunctionProgram prog(shape_of(kernel == &three_threads ? 3 : 2, OnMisuse::proceed), *kernel);
    const auto dpor = outcomes(prog, SearchKind::dpor), brute = outcomes(prog, SearchKind::brute_force);
    INFO("dpor: " << text(dpor) << "; brute force: " << text(brute));
    CHECK(dpor == brute);
    CHECK(dpor.count({Verdict::deadlock, static_cast<int>(kernel == &lapped_waiter ? MisuseKind::phase_aliasing
                                                                                   : MisuseKind::missing_wait)}) == 1);
  }
}

TEST_CASE("on-misuse continue: the search agrees with brute force on producers that over-run their consumers",
          "[on-misuse][soundness]") {
  // A producer arrives `arrivals` times on a count-1 barrier; each of `consumers` threads
  // waits for phases 0 and 1 by their bits, the last one polling with test_wait. Every
  // interleaving: laps, missing waits, hangs and clean runs.
  for (std::uint32_t arrivals : {2u, 3u})
    for (std::uint32_t consumers : {1u, 2u}) {
      FunctionProgram prog(shape_of(1 + consumers, OnMisuse::proceed), [arrivals, consumers] {
        if (P::thread_idx() == 0) smem_bar(0).init(1);
        P::sync_threads();
        if (P::thread_idx() == 0) {
          for (std::uint32_t i = 0; i < arrivals; ++i) smem_bar(0).arrive();
        } else {
          smem_bar(0).wait_parity(0);
          if (P::thread_idx() == consumers)
            while (!P::mbarrier_test_wait_parity_bit(smem_bar(0).raw(), 1)) {}
          else
            smem_bar(0).wait_parity(1);
        }
      });
      const auto dpor = outcomes(prog, SearchKind::dpor), brute = outcomes(prog, SearchKind::brute_force);
      INFO(arrivals << " arrivals, " << consumers << " consumers; dpor: " << text(dpor)
                    << "; brute force: " << text(brute));
      CHECK(dpor == brute);
    }
}

TEST_CASE("on-misuse continue: random schedules find the hang too", "[on-misuse][fuzz]") {
  const LaunchShape shape = shape_of(2, OnMisuse::proceed);
  FuzzOptions o;
  o.runs = 200;
  const FuzzResult r = fuzz([&] { return std::make_unique<FunctionProgram>(shape, double_arrive); }, o);
  REQUIRE(r.counterexample);
  CHECK(r.counterexample->kind == Verdict::deadlock);
  CHECK(r.counterexample->root_misuse == MisuseKind::missing_wait);
}

namespace {
// DeepGEMM's release in miniature: two CTAs' worth of roles in one, a producer and a consumer
// each (threads 0 and 1 produce into A and B, threads 2 and 3 consume them); every consumer
// releases a round on both empty barriers (count 2). Consumer A's round-1 release of B (an
// arrive-on of empty B's phase 1) may come before producer B's wait for phase 0, yet phase 1
// cannot complete before that wait: consumer B's own round-1 release follows B's refill, which
// follows the wait. So no wait's answer can change.
void early_release() {
  const std::uint32_t t = P::thread_idx();  // barriers 0, 1: empty A, B; 2, 3: full A, B
  if (t == 0) {
    smem_bar(0).init(2);
    smem_bar(1).init(2);
    smem_bar(2).init(1);
    smem_bar(3).init(1);
  }
  P::sync_threads();
  if (t < 2) {  // producer of A (0) or B (1)
    smem_bar(static_cast<int>(t)).wait_parity(0);
    smem_bar(2 + static_cast<int>(t)).arrive();
    smem_bar(static_cast<int>(t)).wait_parity(1);
  } else {  // consumer of A (2) or B (3): round 0 needs no fill, round 1 its own CTA's
    smem_bar(0).arrive();
    smem_bar(1).arrive();
    smem_bar(static_cast<int>(t)).wait_parity(0);
    smem_bar(0).arrive();
    smem_bar(1).arrive();
  }
}
}  // namespace

TEST_CASE("missing wait: an early arrive-on that cannot complete its phase is a warning, and the search verifies",
          "[on-misuse]") {
  FunctionProgram prog(shape_of(4, OnMisuse::stop), early_release);
  ExploreOptions o;
  o.stop_at_first_bug = false;
  std::uint64_t bugs = 0;
  const ExploreResult r = explore(prog, o, [&](const Outcome& out) { bugs += is_bug(out.verdict) ? 1 : 0; });
  INFO(r.stats.executions << " executions");
  CHECK_FALSE(r.bug);
  CHECK(bugs == 0);
  CHECK(r.stats.complete);
  CHECK(r.stats.early_arrive_ons > 0);  // consumer 1's round-1 release before the producer's wait, in some order
  const std::string report = format_report(check_program(prog));
  CHECK(report.find("warning:") != std::string::npos);
  CHECK(report.find("missing-wait") != std::string::npos);
}
