// Spin loops that poll at more than one place, and loops whose counter lives in memory (issue
// #49, item 3): a back-off loop as hand-written kernels have it, `while (!try_wait(b, p)) { if
// (++n > 2) { nanosleep(ns); ns = min(2 * ns, 1024); if (test_wait(b, p)) return; } }`, is one
// loop over two call sites; it verifies without a step limit, and both of its exits (by the
// try_wait, by the test_wait) are reached. A loop counter kept in shared memory is no spin
// state that repeats: the loop's give-up path is reached, and it is no livelock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>

#include "sim/check.hpp"
#include "sim/explore/strategy.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {
ExploreResult explore_to_end(std::uint32_t n, std::function<void()> kernel, std::uint64_t max_executions = 5000) {
  FunctionProgram prog(threads(n), std::move(kernel));
  ExploreOptions o;
  o.stop_at_first_bug = false;
  o.max_executions = max_executions;
  return explore(prog, o);
}

// The loop: 0 when the try_wait ended it, 1 when the test_wait did. `n` grows without
// bound (live in the loop), `ns` saturates at 1024.
[[gnu::noinline]] int backoff_wait(Bar bar, std::int64_t phase) {
  std::uint32_t n = 0, ns = 32;
  while (!bar.try_wait(phase)) {
    if (++n > 2) {
      P::nanosleep(ns);
      ns = std::min(2 * ns, 1024u);
      if (bar.test_wait(phase)) return 1;
    }
  }
  return 0;
}

// The same loop with a saturating counter: from its third round on, the thread's state repeats
// exactly at each of the two polls (an exact spin, no back-off assumption).
[[gnu::noinline]] int saturating_wait(Bar bar, std::int64_t phase) {
  std::uint32_t n = 0;
  for (;;) {
    if (bar.try_wait(phase)) return 0;
    if (n < 2) {
      ++n;
      continue;
    }
    if (bar.test_wait(phase)) return 1;
  }
}
}  // namespace

TEST_CASE("a back-off loop polling at two places verifies without a step limit", "[spin][sites]") {
  const std::uint32_t consumers = GENERATE(1u, 2u, 4u);
  const ExploreResult r = explore_to_end(consumers + 1, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      P::store(smem_word(0), std::int64_t{7});
      smem_bar(0).arrive();
    } else {
      (void)backoff_wait(smem_bar(0), 0);
      P::check(P::load(smem_word(0)) == 7, "the consumer sees the producer's data");
    }
  });
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.backoff_merges > 0);
}

TEST_CASE("each exit of a loop polling at two places is reached", "[spin][sites]") {
  // Found as a failed check on the exit asked for: the search reaches it.
  const int exit_checked = GENERATE(0, 1);
  for (auto wait : {&backoff_wait, &saturating_wait}) {
    const ExploreResult r = explore_to_end(2, [exit_checked, wait] {
      if (P::thread_idx() == 0) smem_bar(0).init(1);
      P::sync_threads();
      if (P::thread_idx() == 0)
        smem_bar(0).arrive();
      else
        P::check(wait(smem_bar(0), 0) != exit_checked, "the loop left by the other poll");
    });
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::assertion);
  }
}

TEST_CASE("a loop polling at two places whose state repeats is an exact spin: no back-off merge", "[spin][sites]") {
  const ExploreResult r = explore_to_end(3, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0)
      smem_bar(0).arrive();
    else
      (void)saturating_wait(smem_bar(0), 0);
  });
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.backoff_merges == 0);
  CHECK(r.stats.spin_iterations > 0);
}

TEST_CASE("a two-place loop on a barrier nobody completes is a livelock, not a step limit", "[spin][sites]") {
  const ExploreResult r = explore_to_end(2, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(2);
    P::sync_threads();
    if (P::thread_idx() == 0)
      smem_bar(0).arrive();  // one of two
    else
      (void)saturating_wait(smem_bar(0), 0);
  });
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::livelock);
}

TEST_CASE("a loop whose counter lives in shared memory reaches its give-up path and is no livelock", "[spin][memory]") {
  // Registers and stack repeat from poll to poll; the count is in memory, which the loop
  // stores to: no spin iteration. Nobody arrives: the loop gives up after three polls.
  const ExploreResult r = explore_to_end(2, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 1) {
      std::int64_t* polls = smem_word(1);
      P::store(polls, std::int64_t{0});
      while (P::load(polls) < 3) {
        if (smem_bar(0).try_wait(0)) break;
        P::store(polls, P::load(polls) + 1);
      }
      P::check(P::load(polls) < 3, "the phase completed before the loop gave up");
    }
  });
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::assertion);
}
