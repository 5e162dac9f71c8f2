// Waits given only the phase bit (CUTLASS's and Mojo's PipelineState): the host reads the bit
// against what the waiting thread knows of the barrier through happens-before.
#include <catch2/catch.hpp>

#include <set>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/explore/strategy.hpp"
#include "sim/host_platform.hpp"
#include "spec/mbarrier.hpp"
#include "spec/ordered_sequence_barrier.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

TEST_CASE("a pipeline written with phase bits checks as written", "[parity][explore]") {
  // full (count 1) and empty (count c), CUTLASS's way: the producer's state starts at bit 1,
  // so its first wait on the fresh empty barrier returns at once; each side flips its bit per
  // round. The consumers read the word the producer published.
  const std::uint32_t consumers = GENERATE(1u, 4u, 32u);
  const int rounds = 6;
  FunctionProgram prog(threads(consumers + 1), [c = consumers, rounds] {
    if (P::thread_idx() == 0) smem_bar(0).init(1), smem_bar(1).init(c);
    P::sync_threads();
    std::uint32_t bit = P::thread_idx() == 0 ? 1 : 0;
    for (int r = 0; r < rounds; ++r, bit ^= 1) {
      if (P::thread_idx() == 0) {
        smem_bar(1).wait_parity(bit);
        P::store(smem_word(0), std::int64_t{r});
        smem_bar(0).arrive();
      } else {
        smem_bar(0).wait_parity(bit);
        P::check(P::load(smem_word(0)) == r, "the round's word");
        smem_bar(1).arrive();
      }
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

namespace {
// Thread 0 completes phases 0 and 1 (waiting for each itself). Thread 1 waits with bit 0 for
// phase 0; if it runs after phase 1 completed, the hardware answers from phase 1's parity (not
// complete) and waits for phase 2, which never comes.
void lapped_parity_waiter() {
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
}  // namespace

TEST_CASE("a parity waiter the barrier lapped is phase aliasing", "[parity][aliasing]") {
  FunctionProgram prog(threads(2), lapped_parity_waiter);
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::aliasing);
}

// A runtime keeps phase knowledge only from its first wait by phase bit on: that execution
// runs again from its start with it. One runtime that ran a full-phase protocol first (no
// knowledge kept, its tables left as they were) then gives the lapped parity waiter above the
// verdicts and schedules a fresh runtime gives, seed by seed.
TEST_CASE("phase knowledge turned on in a runtime that ran without it", "[parity][aliasing]") {
  FunctionProgram full_phases(threads(3), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(2);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).wait(0);
    } else {
      P::store(smem_word(P::thread_idx()), std::int64_t{1});
      smem_bar(0).arrive();
    }
  });
  FunctionProgram lapped(threads(2), lapped_parity_waiter);
  Runtime rt, fresh_rt;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    RandomStrategy a(seed), b(seed), c(seed);
    CHECK(rt.execute(full_phases, a).verdict == Verdict::completed);
    const Outcome shared = rt.execute(lapped, b);
    const Outcome fresh = fresh_rt.execute(lapped, c);
    INFO("seed " << seed);
    CHECK(shared.verdict == fresh.verdict);
    CHECK(shared.schedule == fresh.schedule);
  }
  // Both outcomes occur among those seeds (the waiter before and after the lapping phase).
  std::set<Verdict> seen;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    RandomStrategy s(seed);
    seen.insert(rt.execute(lapped, s).verdict);
  }
  CHECK(seen.count(Verdict::completed) == 1);
  CHECK(seen.count(Verdict::aliasing) == 1);
}

namespace {
// Persistent ping-pong: consumers A (thread 1) and B (thread 2) take alternate phases of
// `full` (bar 0, count 1), each reading the word the producer (thread 0) published for its
// phase. B's turn follows A's release of bar 2, A's next turn B's release of bar 3, so each
// knows the phase the other consumed; `skip_handoff` lets A go without waiting for B.
void ping_pong(bool skip_handoff) {
  constexpr int kPhases = 6;
  const std::uint32_t me = P::thread_idx();
  if (me == 0) smem_bar(0).init(1), smem_bar(1).init(1), smem_bar(2).init(1), smem_bar(3).init(1);
  P::sync_threads();
  if (me == 0) {
    for (int k = 0; k < kPhases; ++k) {
      smem_bar(1).wait_parity(static_cast<std::uint32_t>((k + 1) & 1));  // consumed: starts at bit 1
      P::store(smem_word(0), std::int64_t{k});
      smem_bar(0).arrive();
    }
    return;
  }
  const bool a = me == 1;
  std::uint32_t full_bit = a ? 0 : 1, turn_bit = 0;
  for (int k = a ? 0 : 1; k < kPhases; k += 2, full_bit ^= 0, turn_bit ^= 1) {
    if (!a) smem_bar(2).wait_parity(turn_bit);                               // A's turn before this one is over
    if (a && k > 0 && !skip_handoff) smem_bar(3).wait_parity(turn_bit ^ 1);  // and B's
    smem_bar(0).wait_parity(full_bit);  // every other phase: the same bit each time
    P::check(P::load(smem_word(0)) == k, "this consumer's phase's word");
    smem_bar(1).arrive();
    smem_bar(a ? 2 : 3).arrive();
  }
}
}  // namespace

TEST_CASE("a persistent ping-pong consumer that skips phases the other consumed is no false alarm",
          "[parity][explore]") {
  FunctionProgram prog(threads(3), [] { ping_pong(false); });
  const ExploreResult r = explore_all(prog);
  INFO((r.bug ? r.bug->message : std::string("no bug")));
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("a ping-pong consumer that does not wait for the other's turn reads a phase too early", "[parity][explore]") {
  FunctionProgram prog(threads(3), [] { ping_pong(true); });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  INFO(r.bug->message);
  CHECK(
      (r.bug->verdict == Verdict::race || r.bug->verdict == Verdict::assertion || r.bug->verdict == Verdict::aliasing));
}

TEST_CASE("OrderedSequenceBarrier makes groups take turns in order", "[parity][explore][sequence]") {
  // Two groups of 4 threads, 2 turns of lookahead, 6 turns each. Turn k uses stage k % 2's
  // data: a shared word per stage and lane that group g's turn k finds holding exactly the
  // turns of that stage before it ((k / 2) rounds of both groups, then group 0 if g is 1).
  using Sequence = mbcheck::OrderedSequenceBarrier<P, 2, 2>;
  auto body = [](bool group1_starts_free) {
    return [group1_starts_free] {
      auto* bars = &smem_bar(0).raw();
      const std::uint32_t me = P::thread_idx(), group = me / 4, lane = me % 4;
      Sequence seq(bars, group1_starts_free ? 0 : group);
      if (me == 0) seq.init(4);
      P::sync_threads();
      for (std::int64_t turn = 0; turn < 6; ++turn) {
        seq.wait();
        std::int64_t* word = smem_word(static_cast<int>(4 * (turn % 2) + lane));
        P::check(P::load(word) == 2 * (turn / 2) + group, "the turns of this stage before this one, in order");
        P::store(word, P::load(word) + 1);
        seq.arrive();
      }
    };
  };
  SECTION("in order: no race, one execution") {
    FunctionProgram prog(threads(8), body(false));
    const ExploreResult r = explore_all(prog);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
  SECTION("group 1 starting at bit 1 as group 0 does: found") {
    FunctionProgram prog(threads(8), body(true));
    const ExploreResult r = explore_all(prog);
    REQUIRE(r.bug);
  }
}
