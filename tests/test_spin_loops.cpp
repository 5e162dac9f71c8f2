// Spin loops as users write them (HostPlatform directly, not the differential's interpreter):
// a recognised spin costs one class however many threads spin; a back-off loop whose counter
// grows verifies without a step limit; a loop that gives up after a few polls still reaches its
// give-up path; a spin that also reads an atomic flag terminates; a loop of atomic loads alone
// is one await of its words (one class, a livelock when nobody changes them).
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "sim/explore/strategy.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {
ExploreResult explore_to_end(std::uint32_t n, std::function<void()> kernel) {
  FunctionProgram prog(threads(n), std::move(kernel));
  ExploreOptions o;
  o.stop_at_first_bug = false;
  o.max_executions = 5000;
  return explore(prog, o);
}
}  // namespace

TEST_CASE("two platform calls on one line are two places: their columns differ", "[spin][callsite]") {
  // Spin recognition takes a poll from the same state at the same place as its last failed
  // poll for an iteration of one loop; two polls on one line must not be one place. GCC 12
  // has no __builtin_COLUMN: the column comes from std::source_location there (it was 0).
  // clang-format off
  const mbcheck::CallSite a = mbcheck::CallSite::current(), b = mbcheck::CallSite::current();
  // clang-format on
  CHECK(a.line == b.line);
  CHECK(a.column != 0);
  CHECK(a.column != b.column);
  CHECK_FALSE(a.same_place(b));
  CHECK(a.same_place(a));
}

TEST_CASE("n consumers spinning with while (!try_wait) on one barrier: one class", "[spin]") {
  const std::uint32_t consumers = GENERATE(1u, 2u, 8u, 32u);
  const ExploreResult r = explore_to_end(consumers + 1, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0)
      smem_bar(0).arrive();
    else
      while (!smem_bar(0).try_wait(0)) {}
  });
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("a spin loop that reads the producer's data after the loop still finds the race", "[spin]") {
  const ExploreResult r = explore_to_end(3, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).arrive();
      P::store(smem_word(0), std::int64_t{7});  // after the arrive: not published
    } else {
      while (!smem_bar(0).try_wait(0)) {}
      (void)P::load(smem_word(0));
    }
  });
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
}

TEST_CASE("a back-off loop whose counter grows verifies without a step limit", "[spin][backoff]") {
  const ExploreResult r = explore_to_end(3, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      P::store(smem_word(0), std::int64_t{7});
      smem_bar(0).arrive();
    } else {
      std::uint32_t n = 0;
      while (!smem_bar(0).try_wait(0)) {
        if (++n > 64) P::nanosleep(n);
      }
      P::check(P::load(smem_word(0)) == 7, "the consumer sees the producer's data");
      P::check(n < (1u << 30), "the counter is live after the loop");  // (else it is optimised away)
    }
  });
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  CHECK(r.stats.backoff_merges > 0);
  // Each consumer's loop exits after 0..kBackoffExplored+1 failed polls: a class each.
  CHECK(r.stats.executions <= (Runtime::kBackoffExplored + 2) * (Runtime::kBackoffExplored + 2));
}

TEST_CASE("a back-off loop before a racy read still finds the race", "[spin][backoff]") {
  const ExploreResult r = explore_to_end(2, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).arrive();
      P::store(smem_word(0), std::int64_t{7});
    } else {
      std::uint32_t n = 0;
      while (!smem_bar(0).test_wait(0)) P::nanosleep(++n);
      (void)P::load(smem_word(0));
    }
  });
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
}

TEST_CASE("a loop that gives up after three polls reaches its give-up path", "[spin][backoff]") {
  const ExploreResult r = explore_to_end(2, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).arrive();
    } else {
      int i = 0;
      for (; i < 3; ++i)
        if (smem_bar(0).test_wait(0)) break;
      P::check(i < 3, "the phase completed within three polls");
    }
  });
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::assertion);
}

TEST_CASE("a spin that also reads an atomic flag terminates, and each exit is reached", "[spin][flag]") {
  static int exits[2];
  exits[0] = exits[1] = 0;
  FunctionProgram prog(threads(2), [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      if (P::atomic_load(smem_word(1)) == 0) P::atomic_store(smem_word(0), 1);  // the flag
      smem_bar(0).arrive();
    } else {
      bool by_flag = false;
      while (!smem_bar(0).try_wait(0)) {
        if (P::atomic_load(smem_word(0)) != 0) {
          by_flag = true;
          break;
        }
      }
      ++exits[by_flag ? 1 : 0];
    }
  });
  ExploreOptions o;
  o.stop_at_first_bug = false;
  o.max_executions = 5000;
  const ExploreResult r = explore(prog, o);
  CHECK_FALSE(r.bug);
  if (r.bug) FAIL_CHECK(r.bug->message);
  CHECK(r.stats.complete);
  CHECK(exits[0] > 0);
  CHECK(exits[1] > 0);
  CHECK(r.stats.executions <= 20);
}

TEST_CASE("a spin on an atomic flag alone (no poll) is one await: it verifies without a step limit", "[spin][flag]") {
  const std::uint32_t consumers = GENERATE(1u, 2u, 8u, 32u);
  const ExploreResult r = explore_to_end(consumers + 1, [] {
    if (P::thread_idx() == 0)
      P::atomic_store(smem_word(0), 1);
    else
      while (P::atomic_load(smem_word(0)) == 0) {}
  });
  CHECK_FALSE(r.bug);
  if (r.bug) FAIL_CHECK(r.bug->message);
  CHECK(r.stats.complete);
  CHECK(r.stats.fallbacks == 0);
  // One class: the loop's first load, made again from the same state, is no event (as a failed
  // poll before its loop's await is not): the search explores the loop as one wait.
  CHECK(r.stats.executions == 1);
}

TEST_CASE("a spin on a flag nobody sets is a livelock that names the word, not a step limit", "[spin][flag]") {
  const ExploreResult r = explore_to_end(2, [] {
    if (P::thread_idx() == 1)
      while (P::atomic_load(smem_word(0)) == 0) {}
  });
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::livelock);
  CHECK_THAT(r.bug->message, Catch::Contains("spins forever on atomic loads") && Catch::Contains("= 0"));
}

TEST_CASE("a flag spin orders nothing: the data read after it races with the relaxed store's writer", "[spin][flag]") {
  const ExploreResult r = explore_to_end(2, [] {
    if (P::thread_idx() == 0) {
      P::store(smem_word(1), std::int64_t{7});
      P::atomic_store(smem_word(0), 1);  // relaxed: publishes nothing
    } else {
      while (P::atomic_load(smem_word(0)) == 0) {}
      (void)P::load(smem_word(1));
    }
  });
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
}

TEST_CASE("a loop over two flags exits by either, and each exit is reached", "[spin][flag]") {
  static int exits[2];
  exits[0] = exits[1] = 0;
  const ExploreResult r = explore_to_end(3, [] {
    if (P::thread_idx() < 2) {
      P::atomic_store(smem_word(P::thread_idx()), 1);
    } else {
      std::int64_t a = 0, b = 0;
      while ((a = P::atomic_load(smem_word(0))) == 0 && (b = P::atomic_load(smem_word(1))) == 0) {}
      ++exits[a != 0 ? 0 : 1];
    }
  });
  CHECK_FALSE(r.bug);
  if (r.bug) FAIL_CHECK(r.bug->message);
  CHECK(r.stats.complete);
  CHECK(r.stats.spin_iterations > 0);
  CHECK(exits[0] > 0);
  CHECK(exits[1] > 0);
}

TEST_CASE("a loop waiting for one value of a word that passes through others ends at that value", "[spin][flag]") {
  static bool saw_one_first = false;
  saw_one_first = false;
  const ExploreResult r = explore_to_end(2, [] {
    if (P::thread_idx() == 0) {
      P::atomic_store(smem_word(0), 1);
      P::atomic_store(smem_word(0), 2);
    } else {
      std::int64_t seen = 0, v;
      while ((v = P::atomic_load(smem_word(0))) != 2)
        if (v == 1) seen = 1;
      saw_one_first = saw_one_first || seen == 1;
      P::check(v == 2, "the loop ends at 2");
    }
  });
  CHECK_FALSE(r.bug);
  if (r.bug) FAIL_CHECK(r.bug->message);
  CHECK(r.stats.complete);
  CHECK(saw_one_first);  // the value in between is read in some order
}

TEST_CASE("the proved line states the state assumption whenever a spin was merged, even with no await run",
          "[spin][report]") {
  // The only complete execution has the flag raised before the loop; the others, where the
  // loop spun, were cut because its first load was no event: that relied on the assumption.
  const CheckResult r = check(threads(3), [] {
    if (P::thread_idx() == 0)
      P::atomic_store(smem_word(0), 1);
    else
      while (P::atomic_load(smem_word(0)) == 0) {}
  });
  REQUIRE(r.verdict == CheckVerdict::verified);
  CHECK(r.stats.spin_iterations == 0);  // (no await ran: only the left-out loads used it)
  CHECK(r.stats.spin_noops > 0);
  CHECK_THAT(format_report(r), Catch::Contains("assuming each thread's state is its registers and stack"));
}

namespace {
// Spin loops in deep protocol code: the spinning thread keeps `Bytes` of live locals on its
// stack, past the 3 KiB its stack is scrubbed for spin snapshots to begin with.
template <std::size_t Bytes>
void deep_locals_then(const std::function<void()>& spin) {
  volatile unsigned char locals[Bytes];
  for (std::size_t i = 0; i < Bytes; i += 64) locals[i] = static_cast<unsigned char>(i / 64);
  spin();
  P::check(locals[64] == 1, "the locals are live across the loop");
}

template <std::size_t Bytes>
void deep_poll_kernel() {
  if (P::thread_idx() == 0) smem_bar(0).init(1);
  P::sync_threads();
  if (P::thread_idx() == 0)
    smem_bar(0).arrive();
  else
    deep_locals_then<Bytes>([] {
      while (!smem_bar(0).try_wait(0)) {}
    });
}

template <std::size_t Bytes>
void deep_load_kernel() {
  P::sync_threads();
  if (P::thread_idx() == 0)
    P::atomic_store(smem_word(0), 1);
  else
    deep_locals_then<Bytes>([] {
      while (P::atomic_load(smem_word(0)) == 0) {}
    });
}

// The same with a race: the spinners read a word the producer writes after its release.
template <std::size_t Bytes>
void deep_racy_poll_kernel() {
  if (P::thread_idx() == 0) smem_bar(0).init(1);
  P::sync_threads();
  if (P::thread_idx() == 0) {
    smem_bar(0).arrive();
    P::store(smem_word(1), std::int64_t{7});
  } else {
    deep_locals_then<Bytes>([] {
      while (!smem_bar(0).try_wait(0)) {}
    });
    (void)P::load(smem_word(1));
  }
}
}  // namespace

// Before: a spin past the scrubbed 3 KiB was explored poll by poll, and every search of it
// ended at the step limit (a false alarm). Now the execution runs again with a deeper scrub.
TEST_CASE("a spin loop in deep protocol code is one class, however deep", "[spin][deep]") {
  for (const auto& [name, kernel] : std::vector<std::pair<const char*, void (*)()>>{
           {"poll, 1 KiB", deep_poll_kernel<1024>},
           {"poll, 8 KiB", deep_poll_kernel<8192>},
           {"poll, 40 KiB", deep_poll_kernel<40 * 1024>},
           {"atomic loads, 8 KiB", deep_load_kernel<8192>},
           {"atomic loads, 40 KiB", deep_load_kernel<40 * 1024>},
       }) {
    INFO(name);
    const ExploreResult r = explore_to_end(3, kernel);
    INFO((r.bug ? r.bug->message : std::string("no bug")));
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
    CHECK(r.stats.fallbacks == 0);
  }
}

TEST_CASE("a race after a deep spin loop is found, and its schedule replays exactly", "[spin][deep]") {
  const ExploreResult r = explore_to_end(3, deep_racy_poll_kernel<8192>);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
  // A fresh runtime (scrubbed 3 KiB deep again) replays it: the same verdict on the same steps.
  FunctionProgram prog(threads(3), deep_racy_poll_kernel<8192>);
  Runtime rt;
  ReplayStrategy replay(r.bug->schedule);
  const Outcome again = rt.execute(prog, replay);
  CHECK(again.verdict == Verdict::race);
  CHECK(again.schedule == r.bug->schedule);
  CHECK(replay.finished());
}

// A runtime keeps phase knowledge only from its first wait by phase bit on: here that wait
// comes after a spin, so the execution's first attempt ran awaits before it ended to run
// again. The search's figures (the proved line's count of merged polls) are the rerun's only:
// the same as with the phase-bit wait given as a full phase, which needs no rerun.
TEST_CASE("what an execution's first attempt counted before it ran again is not counted twice", "[spin][report]") {
  auto kernel = [](bool by_bit) {
    return [by_bit] {
      if (P::thread_idx() == 0) smem_bar(0).init(1), smem_bar(1).init(2);
      P::sync_threads();
      if (P::thread_idx() == 0) {
        smem_bar(0).arrive();
      } else {
        while (!smem_bar(0).try_wait(0)) {}
        smem_bar(1).arrive();
        if (by_bit)
          smem_bar(1).wait_parity(0);
        else
          smem_bar(1).wait(0);
      }
    };
  };
  const ExploreResult full = explore_to_end(3, kernel(false));
  const ExploreResult bit = explore_to_end(3, kernel(true));
  REQUIRE_FALSE(full.bug);
  REQUIRE_FALSE(bit.bug);
  CHECK(full.stats.spin_iterations + full.stats.spin_noops > 0);
  CHECK(bit.stats.executions == full.stats.executions);
  CHECK(bit.stats.spin_iterations == full.stats.spin_iterations);
  CHECK(bit.stats.spin_noops == full.stats.spin_noops);
  CHECK(bit.stats.races == full.stats.races);
}
