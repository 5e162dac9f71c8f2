// Reports point at the lines they are about (#21): a race at both accesses, a deadlock at
// every blocked group's wait, in a protocol of the user's own; and the words they use for
// blocked named barriers, labels without an index and atomics (#47).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <string>

#include "sim/check.hpp"
#include "sim/explore/strategy.hpp"
#include "spec/named_barrier.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;

namespace {
using P = HostPlatform;

std::string here(int line) { return fmt::format("test_report_lines.cpp:{}", line); }

// The diagnostic lines that name `where` (file:line) with `kind` ("error" or "note").
bool names(const Counterexample& c, int line, const std::string& kind) {
  for (const std::string& d : c.diagnostics)
    if (d.find(here(line) + ": " + kind + ":") != std::string::npos) return true;
  return false;
}

int store_line = 0, load_line = 0, producer_wait_line = 0, consumer_wait_line = 0;
}  // namespace

TEST_CASE("a race names the lines of both accesses, the error at the one that completed it", "[report][race]") {
  // The consumer reads the word before waiting for the phase that publishes it.
  CheckResult r = check(threads(2), [] {
    Bar full = smem_bar(0);
    if (P::thread_idx() == 0) {
      full.init(1);
    }
    P::sync_threads();
    if (P::thread_idx() == 0) {
      store_line = __LINE__ + 1;
      P::store(smem_word(0), std::int64_t{42});
      full.arrive();
    } else {
      load_line = __LINE__ + 1;
      (void)P::load(smem_word(0));
      full.wait(0);
    }
  });
  REQUIRE(r.verdict == CheckVerdict::bug);
  const Counterexample& c = *r.counterexample;
  REQUIRE(c.kind == Verdict::race);
  INFO(fmt::format("{}", fmt::join(c.diagnostics, "\n")));
  // Either order of the two accesses completes the race; both lines are named, the error at one.
  CHECK((names(c, store_line, "note") && names(c, load_line, "note")));
  CHECK((names(c, store_line, "error") || names(c, load_line, "error")));
  CHECK(c.diagnostics.front().find(": error: race:") != std::string::npos);
}

TEST_CASE("a deadlock names every blocked group's waiting line, the error at the first", "[report][deadlock]") {
  // Two rounds through one stage; the consumer never releases the stage, so the producer
  // blocks on 'empty' in round two while the consumer blocks on 'full'.
  CheckResult r = check(threads(2), [] {
    Bar full = smem_bar(0), empty = smem_bar(1);
    if (P::thread_idx() == 0) {
      full.init(1);
      empty.init(1);
    }
    P::sync_threads();
    for (int round = 0; round < 2; ++round) {
      if (P::thread_idx() == 0) {
        producer_wait_line = __LINE__ + 1;
        empty.wait(round - 1);
        P::store(smem_word(0), std::int64_t{round});
        full.arrive();
      } else {
        consumer_wait_line = __LINE__ + 1;
        full.wait(round);
        (void)P::load(smem_word(0));
        // missing: empty.arrive()
      }
    }
  });
  REQUIRE(r.verdict == CheckVerdict::bug);
  const Counterexample& c = *r.counterexample;
  REQUIRE(c.kind == Verdict::deadlock);
  INFO(fmt::format("{}", fmt::join(c.diagnostics, "\n")));
  CHECK(names(c, producer_wait_line, "error"));  // thread 0's group comes first, as the cause says
  CHECK(names(c, producer_wait_line, "note"));
  CHECK(names(c, consumer_wait_line, "note"));
  bool producer_named = false;
  for (const std::string& d : c.diagnostics)
    if (d.find(here(producer_wait_line) + ": note: thread 0") != std::string::npos &&
        d.find("phase") != std::string::npos)
      producer_named = true;
  CHECK(producer_named);  // the note says who waits there and the barrier's state
}

namespace {
// One CTA of `n` threads in warps of 4 lanes.
LaunchShape warps_of_four(std::uint32_t n) {
  LaunchShape shape = threads(n);
  shape.warp_size = 4;
  return shape;
}

// The steps of one execution of `kernel` (one thread: there is one schedule).
std::vector<std::string> steps_of(const LaunchShape& shape, std::function<void()> kernel) {
  FunctionProgram program(shape, std::move(kernel));
  Runtime rt;
  RandomStrategy strategy(1);
  RunLimits limits;
  limits.record_trace = true;
  const Outcome out = rt.execute(program, strategy, limits);
  INFO(out.message);
  CHECK(out.verdict == Verdict::completed);
  std::vector<std::string> steps;
  for (const TraceEntry& t : rt.trace()) steps.push_back(t.what);
  return steps;
}
}  // namespace

TEST_CASE("a thread blocked in bar.sync is described whole in the deadlock", "[report][deadlock][named]") {
  // Barrier 2 counts 8 threads; only warp 0 (4 threads) ever comes.
  CheckResult r = check(warps_of_four(8), [] {
    if (P::warp_idx() == 0) mbcheck::NamedBarrier<P>(8, 2).sync();
  });
  REQUIRE(r.verdict == CheckVerdict::bug);
  const Counterexample& c = *r.counterexample;
  REQUIRE(c.kind == Verdict::deadlock);
  REQUIRE(c.details.size() == 1);
  CHECK(c.details[0] ==
        "threads 0-3 (warp 0) bar.sync barrier 2 (8 threads): wait for generation 0; barrier 2: phase 0, pending 4/8, "
        "tx 0");
}

TEST_CASE("a barrier labelled with index -1 is named without an index, as labelled memory is", "[report][label]") {
  // The consumer waits for a phase nobody completes.
  CheckResult r = check(threads(1), [] {
    Bar ready = smem_bar(0);
    P::label(ready.raw(), "ready", -1);
    ready.init(1);
    ready.wait(0);
  });
  REQUIRE(r.verdict == CheckVerdict::bug);
  const Counterexample& c = *r.counterexample;
  REQUIRE(c.kind == Verdict::deadlock);
  REQUIRE(c.details.size() == 1);
  CHECK(c.details[0] ==
        "thread 0 (warp 0 lane 0) wait ready for phase 0 (parity 0); ready: phase 0, pending 1/1, tx 0");
}

TEST_CASE("atomics name labelled memory and say what they wrote and read", "[report][atomic]") {
  const auto steps = steps_of(threads(1), [] {
    std::int64_t* flags = smem_word(0);
    mbcheck::label_memory<P>(flags, 3, "flags");
    P::atomic_store(&flags[0], 5);
    (void)P::atomic_load(&flags[0]);
    (void)P::atomic_fetch_add(&flags[1], 3);
    (void)P::atomic_cas(&flags[2], 0, 7);
    (void)P::atomic_cas(&flags[2], 0, 9);
  });
  CHECK(steps == std::vector<std::string>{"atomic store 'flags'[0] (smem+0x400) = 5",
                                          "atomic load 'flags'[0] (smem+0x400): read 5",
                                          "atomic fetch_add 'flags'[1] (smem+0x408) += 3: read 0",
                                          "atomic cas 'flags'[2] (smem+0x410) 0 -> 7: read 0, swapped",
                                          "atomic cas 'flags'[2] (smem+0x410) 0 -> 9: read 7, not swapped"});
}
