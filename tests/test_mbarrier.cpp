// The mbarrier emulator, one rule per test: docs/mbarrier-semantics.md as executable text.
#include <catch2/catch.hpp>

#include "sim/runtime/mbarrier.hpp"

using namespace mbcheck::sim;

namespace {
MbarrierState live(std::int64_t count) {
  MbarrierState b;
  b.init(count);
  return b;
}
MisuseKind misuse_of(const std::function<void()>& op) {
  try {
    op();
  } catch (const MisuseError& e) {
    return e.kind;
  }
  FAIL("expected a misuse to be reported");
  return MisuseKind::uninitialized;
}
bool same_state(const MbarrierState& a, const MbarrierState& b) {
  return a.life == b.life && a.phase == b.phase && a.pending == b.pending && a.expected == b.expected && a.tx == b.tx &&
         a.phase_observed == b.phase_observed;
}
}  // namespace

TEST_CASE("init sets phase 0, pending = expected = count, tx 0", "[mbarrier][init]") {
  MbarrierState b = live(128);
  CHECK(b.phase == 0);
  CHECK(b.pending == 128);
  CHECK(b.expected == 128);
  CHECK(b.tx == 0);
  CHECK(b.is_live());
}

TEST_CASE("init count must be in [1, 2^20-1]", "[mbarrier][init][misuse]") {
  CHECK(misuse_of([] { live(0); }) == MisuseKind::count_out_of_range);
  CHECK(misuse_of([] { live(1 << 20); }) == MisuseKind::count_out_of_range);
  CHECK(live((1 << 20) - 1).pending == (1u << 20) - 1);
}

TEST_CASE("zeroed memory is an uninitialised barrier: every op but init is a misuse", "[mbarrier][misuse]") {
  MbarrierState b;  // all-zero, as the host's shared memory starts
  CHECK(misuse_of([&] { b.arrive(1, false, nullptr); }) == MisuseKind::uninitialized);
  CHECK(misuse_of([&] { b.arrive_expect_tx(16, nullptr); }) == MisuseKind::uninitialized);
  CHECK(misuse_of([&] { b.expect_tx(16); }) == MisuseKind::uninitialized);
  CHECK(misuse_of([&] { b.complete_tx(16); }) == MisuseKind::uninitialized);
  CHECK(misuse_of([&] { b.test_wait_parity(0); }) == MisuseKind::uninitialized);
  CHECK(misuse_of([&] { b.inval(); }) == MisuseKind::uninitialized);
}

TEST_CASE("init on a live barrier is a misuse, after inval it is allowed again", "[mbarrier][init][misuse]") {
  MbarrierState b = live(2);
  CHECK(misuse_of([&] { b.init(2); }) == MisuseKind::reinit_live);
  b.inval();
  b.init(3);
  CHECK(b.pending == 3);
}

TEST_CASE("ops after inval are misuses", "[mbarrier][misuse]") {
  MbarrierState b = live(2);
  b.inval();
  CHECK(misuse_of([&] { b.arrive(1, false, nullptr); }) == MisuseKind::invalidated);
  CHECK(misuse_of([&] { b.test_wait_parity(0); }) == MisuseKind::invalidated);
}

TEST_CASE("arrive counts down, the last arrival completes the phase and reloads pending", "[mbarrier][arrive]") {
  MbarrierState b = live(3);
  bool done = true;
  b.arrive(1, false, &done);
  CHECK_FALSE(done);
  CHECK(b.pending == 2);
  b.arrive(2, false, &done);  // arrive with a count (sm_90)
  CHECK(done);
  CHECK(b.phase == 1);
  CHECK(b.pending == 3);
}

TEST_CASE("arrive returns a token for the phase before the arrive", "[mbarrier][arrive][token]") {
  MbarrierState b = live(1);
  MbarrierToken t = b.arrive(1, false, nullptr);  // completes phase 0
  CHECK(t.phase == 0);
  CHECK(b.test_wait(t));  // phase 0 is now the preceding phase: complete
}

TEST_CASE("arriving more than pending is over-arrival and changes nothing", "[mbarrier][arrive][misuse]") {
  MbarrierState b = live(2);
  b.arrive(1, false, nullptr);
  MbarrierState before = b;
  CHECK(misuse_of([&] { b.arrive(2, false, nullptr); }) == MisuseKind::over_arrival);
  CHECK(same_state(b, before));
}

TEST_CASE("arrive count must be in [1, 2^20-1]", "[mbarrier][arrive][misuse]") {
  MbarrierState b = live(4);
  CHECK(misuse_of([&] { b.arrive(0, false, nullptr); }) == MisuseKind::count_out_of_range);
}

TEST_CASE("a phase completes only when pending is 0 AND tx-count is 0", "[mbarrier][tx]") {
  MbarrierState b = live(1);
  bool done = true;
  b.arrive_expect_tx(4096, &done);  // expect-tx first, then the arrive
  CHECK_FALSE(done);
  CHECK(b.pending == 0);
  CHECK(b.tx == 4096);
  CHECK_FALSE(b.complete_tx(1024));
  CHECK(b.tx == 3072);
  CHECK(b.complete_tx(3072));  // the last bytes land: phase 0 completes
  CHECK(b.phase == 1);
  CHECK(b.pending == 1);
  CHECK(b.tx == 0);
}

TEST_CASE("a copy may land before its expect_tx: the tx-count goes negative", "[mbarrier][tx]") {
  MbarrierState b = live(1);
  CHECK_FALSE(b.complete_tx(512));
  CHECK(b.tx == -512);
  bool done = false;
  b.arrive_expect_tx(512, &done);  // tx back to 0 and the arrival: complete
  CHECK(done);
  CHECK(b.phase == 1);
}

TEST_CASE("tx-count must stay within +-(2^20-1)", "[mbarrier][tx][misuse]") {
  MbarrierState b = live(1);
  b.expect_tx((1 << 20) - 1);
  CHECK(misuse_of([&] { b.expect_tx(1); }) == MisuseKind::tx_out_of_range);
  MbarrierState c = live(1);
  c.complete_tx((1 << 20) - 1);
  CHECK(misuse_of([&] { c.complete_tx(1); }) == MisuseKind::tx_out_of_range);
}

TEST_CASE("expect_tx that brings tx to 0 with nothing pending is unspecified: reported, not guessed",
          "[mbarrier][tx][misuse]") {
  MbarrierState b = live(1);
  b.complete_tx(64);            // tx -64
  b.arrive(1, false, nullptr);  // pending 0, tx -64: not complete
  CHECK(b.phase == 0);
  CHECK(misuse_of([&] { b.expect_tx(64); }) == MisuseKind::expect_tx_completes);
}

TEST_CASE("arrive.noComplete counts down but must not complete the phase", "[mbarrier][arrive][misuse]") {
  MbarrierState b = live(3);
  MbarrierToken t = b.arrive(2, true, nullptr);
  CHECK(b.pending == 1);
  CHECK(MbarrierState::pending_count(t) == 3);  // the count before the arrive, as the H200 returns it
  CHECK(misuse_of([&] { b.arrive(1, true, nullptr); }) == MisuseKind::nocomplete_completes);
}

TEST_CASE("pending_count reads the count before the arrive (as measured on an H200)", "[mbarrier][token]") {
  MbarrierState b = live(5);
  CHECK(MbarrierState::pending_count(b.arrive(2, true, nullptr)) == 5);
  CHECK(MbarrierState::pending_count(b.arrive(1, true, nullptr)) == 3);
}

TEST_CASE("pending_count needs a token from arrive.noComplete", "[mbarrier][token][misuse]") {
  MbarrierState b = live(3);
  MbarrierToken t = b.arrive(1, false, nullptr);
  CHECK(misuse_of([&] { MbarrierState::pending_count(t); }) == MisuseKind::bad_token);
}

TEST_CASE("a token works only on the barrier it came from", "[mbarrier][token][misuse]") {
  MbarrierState a = live(2), b = live(2);
  a.id = 1;
  b.id = 2;
  MbarrierToken t = a.arrive(1, false, nullptr);
  CHECK(misuse_of([&] { b.test_wait(t); }) == MisuseKind::bad_token);
}

TEST_CASE("arrive_drop lowers the expected count for this and later phases", "[mbarrier][arrive_drop]") {
  MbarrierState b = live(3);
  bool done = false;
  b.arrive_drop(1, &done);  // expected 2, pending 2
  CHECK(b.expected == 2);
  CHECK(b.pending == 2);
  b.arrive(1, false, nullptr);
  b.arrive(1, false, &done);
  CHECK(done);
  CHECK(b.pending == 2);  // the next phase expects 2
  CHECK(misuse_of([&] { b.arrive_drop(3, nullptr); }) == MisuseKind::count_out_of_range);
}

TEST_CASE("parity waits on a fresh barrier: the phase before init (parity 1) is complete, phase 0 is not",
          "[mbarrier][wait]") {
  MbarrierState b = live(1);
  CHECK(b.test_wait_parity(-1));
  CHECK_FALSE(b.test_wait_parity(0));
  b.arrive(1, false, nullptr);
  CHECK(b.test_wait_parity(0));
  CHECK_FALSE(b.test_wait_parity(1));
}

TEST_CASE("a wait for a phase neither current nor preceding is phase aliasing", "[mbarrier][wait][misuse]") {
  MbarrierState b = live(1);
  for (int i = 0; i < 3; ++i) {
    b.arrive(1, false, nullptr);
    b.test_wait_parity(b.phase - 1);  // observe each phase (missing-wait rule)
  }
  REQUIRE(b.phase == 3);
  // Two phases behind: parity says "not complete" although phase 1 completed long ago.
  CHECK(misuse_of([&] { b.test_wait_parity(1); }) == MisuseKind::phase_aliasing);
  // One phase ahead: parity says "complete" although phase 4 has not even begun.
  CHECK(misuse_of([&] { b.test_wait_parity(4); }) == MisuseKind::phase_aliasing);
  CHECK(b.test_wait_parity(2));
  CHECK_FALSE(b.test_wait_parity(3));
}

TEST_CASE("missing wait: an arrive of phase k+1 needs a successful wait on phase k first", "[mbarrier][misuse]") {
  MbarrierState b = live(1);
  b.arrive(1, false, nullptr);  // phase 0 completes, nobody has waited
  CHECK(misuse_of([&] { b.arrive(1, false, nullptr); }) == MisuseKind::missing_wait);
  CHECK(b.test_wait_parity(0));
  b.arrive(1, false, nullptr);  // now allowed
  CHECK(b.phase == 2);
}

TEST_CASE("missing wait: an early arrive-on of phase k+1 that does not complete it changes no answer",
          "[mbarrier][misuse]") {
  MbarrierState b = live(2);
  b.arrive(1, false, nullptr);
  b.arrive(1, false, nullptr);  // phase 0 completes, nobody has waited
  CHECK(b.early_arrive_on());
  b.arrive(1, false, nullptr);  // phase 1: 1 of 2, before any wait saw phase 0 (a warning, not a misuse)
  CHECK(b.phase == 1);
  CHECK(b.test_wait_parity(0));  // the wait's answer is what it would have been
  b.arrive(1, false, nullptr);   // completes phase 1, after the wait
  CHECK(b.phase == 2);
}

TEST_CASE("missing wait: the arrive-on that completes phase k+1 with no wait on phase k is the misuse",
          "[mbarrier][misuse]") {
  MbarrierState b = live(2);
  b.arrive(1, false, nullptr);
  b.arrive(1, false, nullptr);
  b.arrive(1, false, nullptr);  // early, not completing
  CHECK(misuse_of([&] { b.arrive(1, false, nullptr); }) == MisuseKind::missing_wait);
  CHECK(b.phase == 1);  // a failing op leaves no trace
  // arrive.expect_tx: its own expect-tx counted, it does not complete the phase, so no misuse
  b.arrive_expect_tx(16, nullptr);
  CHECK(b.phase == 1);
  CHECK(b.tx == 16);
}

TEST_CASE("a blocking wait proceeds only once its phase completed (or to report a misuse)", "[mbarrier][wait]") {
  MbarrierState uninit;
  CHECK(uninit.wait_would_proceed(0));  // proceeds, and reports "uninitialised"
  MbarrierState b = live(2);
  CHECK_FALSE(b.wait_would_proceed(0));
  CHECK(b.wait_would_proceed(-1));
  b.arrive(2, false, nullptr);
  CHECK(b.wait_would_proceed(0));
}

TEST_CASE("every state change bumps the version (spin loops wait for it)", "[mbarrier]") {
  MbarrierState b = live(2);
  auto v = b.version;
  b.arrive(1, false, nullptr);
  CHECK(b.version > v);
  v = b.version;
  b.test_wait_parity(0);  // a failing poll changes nothing
  CHECK(b.version == v);
}

TEST_CASE("describe() shows phase, pending/expected and tx", "[mbarrier]") {
  MbarrierState b = live(128);
  b.arrive(1, false, nullptr);
  b.expect_tx(4096);
  CHECK(b.describe() == "phase 0, pending 127/128, tx 4096");
  CHECK(MbarrierState{}.describe() == "uninitialised");
}
