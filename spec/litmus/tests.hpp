// The litmus suite (see litmus.hpp for the shape of a test). Each comment gives the
// outcomes docs/mbarrier-semantics.md allows; the host's exhaustive exploration is the
// authority, and tests/litmus/test_litmus.cpp pins these sets.
#pragma once

#include "spec/litmus/litmus.hpp"

namespace mbcheck::litmus {

using Phase = std::int64_t;

// Parity on a fresh barrier: phase -1 (parity 1) is complete, phase 0 is not.  {1,0}
struct FreshParity {
  static constexpr const char* kName = "fresh-parity";
  static constexpr std::uint32_t kThreads = 1, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.result(0, e.bar(0).test_wait(Phase{-1}));
    e.result(1, e.bar(0).test_wait(Phase{0}));
  }
};

// A token names the phase before its arrive: incomplete until the last arrival.  {0,1,1}
struct ArriveToken {
  static constexpr const char* kName = "arrive-token";
  static constexpr std::uint32_t kThreads = 1, kResults = 3, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(2);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    const auto first = e.bar(0).arrive();
    e.result(0, e.bar(0).test_wait(first));
    const auto second = e.bar(0).arrive();
    e.result(1, e.bar(0).test_wait(first));
    e.result(2, e.bar(0).test_wait(second));
  }
};

// Two threads arrive on a count-2 barrier and test their own token: the later arrival
// completes the phase, so at least one sees true.  {0,1} {1,0} {1,1}, never {0,0}
struct ArriveTokenRace {
  static constexpr const char* kName = "arrive-token-race";
  static constexpr std::uint32_t kThreads = 2, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(2);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.delay(0);
    const auto token = e.bar(0).arrive();
    e.delay(1);
    e.result(e.tid, e.bar(0).test_wait(token));
  }
};

// arrive with a count: thread 0 arrives 2 of 3, thread 1 tests, arrives 1, tests again.
// {0,0} {0,1}: thread 1's first test is always false.
struct ArriveCount {
  static constexpr const char* kName = "arrive-count";
  static constexpr std::uint32_t kThreads = 2, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(3);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.delay(0);
    if (e.tid == 0) {
      e.bar(0).arrive(2);
      return;
    }
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.bar(0).arrive(1);
    e.delay(1);
    e.result(1, e.bar(0).test_wait(Phase{0}));
  }
};

// expect_tx before or after complete_tx (tx-count may go negative): thread 0 arms 16 bytes
// with its arrival, thread 1 completes them; each then tests.  {0,1} {1,0} {1,1}
struct TxNegative {
  static constexpr const char* kName = "tx-negative";
  static constexpr std::uint32_t kThreads = 2, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.delay(0);
    if (e.tid == 0)
      e.bar(0).arrive_expect_tx(16);
    else
      e.bar(0).complete_tx(16);
    e.delay(1);
    e.result(e.tid, e.bar(0).test_wait(Phase{0}));
  }
};

// Completion needs pending == 0 AND tx == 0: neither alone completes.  {0,0,0,1}
struct CompletionNeedsBoth {
  static constexpr const char* kName = "completion-needs-both";
  static constexpr std::uint32_t kThreads = 1, kResults = 4, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.bar(0).expect_tx(32);
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.bar(0).arrive();
    e.result(1, e.bar(0).test_wait(Phase{0}));
    e.bar(0).complete_tx(16);
    e.result(2, e.bar(0).test_wait(Phase{0}));
    e.bar(0).complete_tx(16);
    e.result(3, e.bar(0).test_wait(Phase{0}));
  }
};

// arrive_drop lowers the expected count of this and every later phase: init(2), drop one,
// then a single arrival completes phase 0 and another completes phase 1.  {0,1,1}
struct ArriveDrop {
  static constexpr const char* kName = "arrive-drop";
  static constexpr std::uint32_t kThreads = 1, kResults = 3, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(2);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.bar(0).arrive_drop(1);
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.bar(0).arrive();
    e.result(1, e.bar(0).test_wait(Phase{0}));
    e.bar(0).arrive();
    e.result(2, e.bar(0).test_wait(Phase{1}));
  }
};

// Phase aliasing: after phases 0 and 1 complete, a parity test for phase 0 (two behind)
// gets the parity answer for phase 2, "incomplete". The host reports aliasing; the GPU's
// value is recorded (expected {1,1,0}).
struct PhaseAliasing {
  static constexpr const char* kName = "phase-aliasing";
  static constexpr std::uint32_t kThreads = 1, kResults = 3, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = true;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.bar(0).arrive();
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.bar(0).arrive();
    e.result(1, e.bar(0).test_wait(Phase{1}));
    e.result(2, e.bar(0).test_wait(Phase{0}));
  }
};

// test_wait never blocks; try_wait may block for a while but may also give up. Thread 1
// tests, then tries, while thread 0 arrives.  {0,0} {0,1} {1,1}, never {1,0}
struct TestVsTryWait {
  static constexpr const char* kName = "test-vs-try-wait";
  static constexpr std::uint32_t kThreads = 2, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.delay(0);
    if (e.tid == 0) {
      e.bar(0).arrive();
      return;
    }
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.result(1, e.bar(0).try_wait(Phase{0}));
  }
};

// pending_count of a .noComplete arrive's token: the count before that arrive (H200,
// device/RESULTS.md). Two threads on init(3).  {3,2} {2,3}
struct PendingCountNoComplete {
  static constexpr const char* kName = "pending-count-nocomplete";
  static constexpr std::uint32_t kThreads = 2, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(3);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.delay(0);
    const auto token = e.bar(0).arrive_no_complete(1);
    e.result(e.tid, E::Platform::mbarrier_pending_count(token));
  }
};

// A bulk copy completes the tx bytes armed by arrive_expect_tx (on the host in 2 pieces, as
// PTX allows any split): a test right after the issue may see it landed or not; after the
// wait the bytes are all there.  {0,1} {1,1}
struct TmaSplit {
  static constexpr const char* kName = "tma-split";
  static constexpr std::uint32_t kThreads = 1, kResults = 2, kCopyPieces = 2;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    e.bar(0).arrive_expect_tx(kScratchBytes);
    P::cp_async_bulk_global_to_shared(e.scratch, e.src, kScratchBytes, e.bar(0).raw());
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.bar(0).wait(0);
    e.result(1, e.scratch_matches_src(kScratchBytes));
  }
};

// The bulk copy is issued before its bytes are expected (its complete_tx may drive the
// tx-count negative): the phase cannot complete before the arrival.  {0,1}
struct TmaBeforeExpect {
  static constexpr const char* kName = "tma-before-expect";
  static constexpr std::uint32_t kThreads = 1, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    P::cp_async_bulk_global_to_shared(e.scratch, e.src, kScratchBytes, e.bar(0).raw());
    e.delay(0);
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.bar(0).arrive_expect_tx(kScratchBytes);
    e.bar(0).wait(0);
    e.result(1, e.scratch_matches_src(kScratchBytes));
  }
};

// Several waiters on one phase: each tests (either answer), waits, tests again (true).
// {x,1,y,1} for x, y in {0,1}
struct MultipleWaiters {
  static constexpr const char* kName = "multiple-waiters";
  static constexpr std::uint32_t kThreads = 3, kResults = 4, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = false;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.delay(0);
    if (e.tid == 0) {
      e.bar(0).arrive();
      return;
    }
    const int slot = 2 * static_cast<int>(e.tid - 1);
    e.result(slot, e.bar(0).test_wait(Phase{0}));
    e.bar(0).wait(0);
    e.result(slot + 1, e.bar(0).test_wait(Phase{0}));
  }
};

// expect_tx that brings tx from -16 to 0 with nothing pending: PTX gives expect_tx no
// completion step, so whether the phase completes is unspecified. The host reports it;
// the GPU's answer is recorded.
struct ExpectTxCompletes {
  static constexpr const char* kName = "expect-tx-completes";
  static constexpr std::uint32_t kThreads = 1, kResults = 2, kCopyPieces = 1;
  static constexpr bool kHostFlagsMisuse = true;
  template <class E>
  MBCHECK_HD static void init(const E& e) {
    e.bar(0).init(1);
  }
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    e.bar(0).complete_tx(16);
    e.bar(0).arrive();
    e.result(0, e.bar(0).test_wait(Phase{0}));
    e.bar(0).expect_tx(16);
    e.result(1, e.bar(0).test_wait(Phase{0}));
  }
};

using AllTests = TestList<FreshParity, ArriveToken, ArriveTokenRace, ArriveCount, TxNegative, CompletionNeedsBoth,
                          ArriveDrop, PhaseAliasing, TestVsTryWait, PendingCountNoComplete, TmaSplit, TmaBeforeExpect,
                          MultipleWaiters, ExpectTxCompletes>;

}  // namespace mbcheck::litmus
