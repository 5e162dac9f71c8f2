// Reports point at the lines they are about (#21): a race at both accesses, a deadlock at
// every blocked group's wait, in a protocol of the user's own.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <string>

#include "sim/check.hpp"
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
