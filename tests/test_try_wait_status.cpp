// A try_wait whose answer only a later wait reads (P::WaitStatus: CUTLASS's consumer_try_wait
// then consumer_wait): the try is deferred to its thread's next event, and a try followed
// directly by its wait is the one blocking wait it amounts to.
#include <catch2/catch.hpp>

#include <set>

#include "sim/check.hpp"
#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "sim/explore/strategy.hpp"
#include "spec/mbarrier.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

TEST_CASE("a try status followed by its wait costs what one blocking wait does", "[status][explore][size]") {
  // Producer: `rounds` phases of full (count 1), each after the consumers released the last
  // one on empty (count c). Consumers: try status, then wait on it, then release.
  auto [consumers, rounds] = GENERATE(table<std::uint32_t, int>({{1, 1}, {3, 4}, {128, 4}}));
  INFO(consumers << " consumers x " << rounds << " rounds");
  FunctionProgram prog(threads(consumers + 1), [c = consumers, k = rounds] {
    if (P::thread_idx() == 0) smem_bar(0).init(1), smem_bar(1).init(c);
    P::sync_threads();
    for (int r = 0; r < k; ++r) {
      if (P::thread_idx() == 0) {
        smem_bar(1).wait(r - 1);
        smem_bar(0).arrive();
      } else {
        smem_bar(0).wait(smem_bar(0).try_wait_status(r));
        smem_bar(1).arrive();
      }
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("a try that finds its phase complete leaves its wait nothing to do", "[status][runtime]") {
  // Thread 1 has waited for phase 0 itself, so its try finds it complete: the wait on that
  // status is no step. (The atomic between them makes the try a step of its own: a try
  // followed directly by its wait is one blocking wait.)
  std::int64_t word = 0;
  FunctionProgram prog(threads(2), [&word] {
    if (P::thread_idx() == 0) smem_bar(0).init(1), smem_bar(1).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).arrive();
    } else {
      smem_bar(0).wait(0);
      const auto status = smem_bar(0).try_wait_status(0);
      (void)P::atomic_load(&word);
      smem_bar(0).wait(status);
      smem_bar(1).arrive();
    }
  });
  Runtime rt;
  RandomStrategy strategy(7);
  RunLimits limits;
  limits.record_trace = true;
  const Outcome out = rt.execute(prog, strategy, limits);
  REQUIRE(out.verdict == Verdict::completed);
  std::vector<std::string> ops;
  for (const TraceEntry& t : rt.trace())
    if (t.agent == 1) ops.push_back(t.what.substr(0, t.what.find(' ')));
  CHECK(ops == std::vector<std::string>{"sync_threads", "wait", "try_wait", "atomic", "arrive"});
}

TEST_CASE("work between a try and its wait: the try is a step before it, and what a timed-out try allows is found",
          "[status][explore]") {
  // Thread 0 publishes D[0] with a release-arrive. Thread 1 reads D[0] after its try but
  // before its wait: ordered only if the try found the phase complete, so a try that timed
  // out leaves a race. Reading after the wait is race-free.
  const bool read_before_wait = GENERATE(true, false);
  INFO("read " << (read_before_wait ? "between the try and the wait" : "after the wait"));
  FunctionProgram prog(threads(2), [read_before_wait] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      P::store(smem_word(0), std::int64_t{1});
      smem_bar(0).arrive();
    } else {
      const auto status = smem_bar(0).try_wait_status(0);
      if (read_before_wait) (void)P::load(smem_word(0));
      smem_bar(0).wait(status);
      if (!read_before_wait) P::check(P::load(smem_word(0)) == 1, "D[0] published");
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK(r.stats.complete);
  if (read_before_wait) {
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  } else {
    CHECK_FALSE(r.bug);
  }
}

TEST_CASE("the values a read between the try and the wait may see are all reached", "[status][explore]") {
  // Thread 1 reads the atomic A after its try: 0 or 1, whichever way the try went.
  std::int64_t atomic_word = 0;
  std::set<std::int64_t> seen;
  std::int64_t last = -1;
  FunctionProgram prog(
      threads(2),
      [&] {
        if (P::thread_idx() == 0) smem_bar(0).init(1);
        P::sync_threads();
        if (P::thread_idx() == 0) {
          P::atomic_store(&atomic_word, 1);
          smem_bar(0).arrive();
        } else {
          const auto status = smem_bar(0).try_wait_status(0);
          last = P::atomic_load(&atomic_word);
          smem_bar(0).wait(status);
        }
      },
      [&] { atomic_word = 0; },
      [&]() -> std::optional<std::string> {
        seen.insert(last);
        return std::nullopt;
      });
  const ExploreResult r = explore_all(prog);
  CHECK_FALSE(r.bug);
  CHECK(seen == std::set<std::int64_t>{0, 1});
}

TEST_CASE("a try status belongs to the thread and the barrier whose try made it", "[status][misuse]") {
  const std::string which = GENERATE("another barrier", "no try");
  INFO("a wait on a status of " << which);
  FunctionProgram prog(threads(1), [which] {
    smem_bar(0).init(1);
    smem_bar(1).init(1);
    smem_bar(0).arrive();
    if (which == "another barrier")
      smem_bar(1).wait(smem_bar(0).try_wait_status(0));
    else
      smem_bar(0).wait(P::WaitStatus{});
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::misuse);
  CHECK(r.bug->misuse == MisuseKind::bad_token);
}

TEST_CASE("a try no wait reads still happens: a try for the next phase after one's own arrive is aliasing",
          "[status][aliasing]") {
  // b counts 2. If thread 1 runs first, its try for phase 1 comes while b is in phase 0.
  FunctionProgram prog(threads(2), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(2);
    P::sync_threads();
    smem_bar(0).arrive();
    if (P::thread_idx() == 1) (void)smem_bar(0).try_wait_status(1);
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::aliasing);
}

TEST_CASE("a consumer that never gets its phase deadlocks at the wait on its status", "[status][deadlock]") {
  FunctionProgram prog(threads(2), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(2);
    P::sync_threads();
    if (P::thread_idx() == 0)
      smem_bar(0).arrive();
    else
      smem_bar(0).wait(smem_bar(0).try_wait_status(0));
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::deadlock);
}

TEST_CASE("a status waited on twice: the second wait waits again only if its try may have timed out",
          "[status][explore]") {
  // The try and the first wait on its status run as one blocking wait; the second wait then
  // depends on what the try found. Once thread 0 is past its first wait (it arrives on
  // barrier 1), thread 1 completes phase 1, so a second wait for phase 0 that waits again
  // finds the barrier two phases on (aliasing).
  const bool own_arrive_first = GENERATE(true, false);
  INFO((own_arrive_first ? "thread 0 completed phase 0 itself before its try: the try finds it complete"
                         : "thread 1 completes phase 0: the try may come first and time out"));
  FunctionProgram prog(threads(2), [own_arrive_first] {
    if (P::thread_idx() == 0) smem_bar(0).init(1), smem_bar(1).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      if (own_arrive_first) smem_bar(0).arrive();
      const auto status = smem_bar(0).try_wait_status(0);
      smem_bar(0).wait(status);
      smem_bar(1).arrive();
      smem_bar(0).wait(status);
    } else {
      if (!own_arrive_first) smem_bar(0).arrive();
      smem_bar(1).wait(0);
      smem_bar(0).arrive();
    }
  });
  const ExploreResult r = explore_all(prog);
  CHECK(r.stats.complete);
  if (own_arrive_first) {
    // (it reported aliasing when the merged try always counted as one that timed out)
    if (r.bug) FAIL(std::string(to_string(r.bug->verdict)) + ": " + r.bug->message);
  } else {
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::aliasing);
  }
}

TEST_CASE("a second wait on a status: the try right after the thread's own completing arrive may still time out",
          "[status][explore]") {
  // The differential soak's program 83,991,311 (2026-12-04). Thread 1's arrive completes phase
  // 0 in the first schedule, so its try finds the phase complete there; but thread 0's arrive
  // is not ordered before the try, and in the schedule where it comes after, the try times
  // out, the second wait on its status waits for phase 0 again, and once thread 0's second
  // arrive completes phase 1 that wait aliases. The search missed it when a try counted as
  // complete whenever the completing op was ordered before it.
  FunctionProgram prog(threads(2), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(2);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).arrive();
      smem_bar(0).wait(0);
      smem_bar(0).arrive();
    } else {
      smem_bar(0).arrive();
      const auto status = smem_bar(0).try_wait_status(0);
      smem_bar(0).wait(status);
      smem_bar(0).arrive();
      smem_bar(0).wait(status);
    }
  });
  const ExploreResult r = explore_all(prog);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::aliasing);
}
