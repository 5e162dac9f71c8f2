// Programs that once made the exhaustive search wrong (issue: "a verified must be a proof"),
// each held to the reference enumerator and to the outcome the hardware allows.
#include <catch2/catch.hpp>

#include "tests/differential/compare.hpp"
#include "tests/differential/fuzz_compare.hpp"
#include "sim/check.hpp"
#include "sim/host_platform.hpp"
#include "tests/differential/runtime_program.hpp"

using namespace mbcheck::diff;

namespace {
DiffProgram program(std::vector<std::uint32_t> counts, std::vector<std::vector<Instr>> scripts) {
  DiffProgram p;
  p.threads = static_cast<std::uint32_t>(scripts.size());
  p.barriers = static_cast<std::uint32_t>(counts.size());
  p.counts = std::move(counts);
  p.scripts = std::move(scripts);
  return p;
}
// The registers part of an outcome ("[..][..]"), without the memory.
std::set<std::string> registers_of(const std::set<std::string>& outcomes) {
  std::set<std::string> out;
  for (const auto& o : outcomes) out.insert(o.substr(0, o.find(" D")));
  return out;
}
Instr op(Stmt s, std::uint8_t bar = 0, std::int32_t arg = 0) { return {s, bar, arg}; }
}  // namespace

TEST_CASE("a poll is never deferred past what the hardware can do: three polls, then an arrive",
          "[explore][soundness]") {
  // b0 count 1, b1 count 2. If T1 runs first, T0's try_wait sees phase 0 complete.
  const auto p = program(
      {1, 2}, {{op(Stmt::arrive_drop, 1), op(Stmt::try_wait, 0, 0)},
               {op(Stmt::test_wait, 1, 0), op(Stmt::test_wait, 1, 0), op(Stmt::test_wait, 1, 0), op(Stmt::arrive, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK(registers_of(c.search.outcomes) == std::set<std::string>{"[0,][0,0,0,]", "[1,][0,0,0,]"});
}

TEST_CASE("expect_tx racing a completing arrive: every outcome is reached", "[explore][soundness]") {
  const auto p = program({2}, {{op(Stmt::arrive), op(Stmt::arrive), op(Stmt::try_wait, 0, 0)},
                               {op(Stmt::expect_tx, 0, 16)},
                               {op(Stmt::try_wait, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK(registers_of(c.search.outcomes) == std::set<std::string>{"[0,][][0,]", "[1,][][0,]", "[1,][][1,]"});
}

TEST_CASE("a next-phase poll or wait after one's own arrive aliases when the other thread is late",
          "[explore][soundness]") {
  const auto p = program({2}, {{op(Stmt::arrive)}, {op(Stmt::arrive), op(Stmt::try_wait, 0, 1)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK(c.search.bug_kinds == std::set<std::string>{"aliasing"});
  // With a blocking wait the program also deadlocks (nobody completes phase 1); the search,
  // which stops at its first bug, must still reach the aliasing schedule.
  const auto blocking = program({2}, {{op(Stmt::arrive)}, {op(Stmt::arrive), op(Stmt::wait, 0, 1)}});
  bool aliasing = false;
  mbcheck::sim::ExploreOptions o;
  o.stop_at_first_bug = false;
  RuntimeProgram prog(blocking);
  mbcheck::sim::explore(
      prog, o, [&](const mbcheck::sim::Outcome& out) { aliasing |= out.verdict == mbcheck::sim::Verdict::aliasing; });
  CHECK(aliasing);
  CHECK(reference_explore(blocking).bug_kinds.count("aliasing") == 1);
}

TEST_CASE("complete_tx is relaxed: a store before it is not released to the waiter", "[explore][soundness]") {
  const auto p = program({1}, {{op(Stmt::arrive_expect_tx, 0, 16), op(Stmt::store, 0, 0), op(Stmt::complete_tx, 0, 16)},
                               {op(Stmt::wait, 0, 0), op(Stmt::load, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK(c.search.bug_kinds == std::set<std::string>{"race"});
  // With the store before the release-arrive, the same program is race-free.
  const auto fixed =
      program({1}, {{op(Stmt::store, 0, 0), op(Stmt::arrive_expect_tx, 0, 16), op(Stmt::complete_tx, 0, 16)},
                    {op(Stmt::wait, 0, 0), op(Stmt::load, 0, 0)}});
  const Comparison f = compare(fixed);
  CHECK(f.agree);
  CHECK_FALSE(f.search.bug);
  CHECK(registers_of(f.search.outcomes) == std::set<std::string>{"[][1,]"});
}

TEST_CASE("a correct spin loop verifies without a false alarm, in few executions", "[explore][soundness][spin]") {
  const Stmt spin = GENERATE(Stmt::spin_try_wait, Stmt::spin_backoff, Stmt::try_then_wait);
  const auto p = program({1}, {{op(Stmt::arrive)}, {op(spin, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK_FALSE(c.search.bug);
  CHECK(c.search.stats.executions <= 4);  // whether the first polls fail; the backoff counts 0, 1, 2
}

TEST_CASE("sync_threads after a thread has exited is no false alarm", "[explore][soundness]") {
  const auto p = program({1}, {{op(Stmt::arrive)}, {op(Stmt::sync_threads)}, {op(Stmt::sync_threads)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK_FALSE(c.search.bug);
  CHECK(c.search.stats.fallbacks == 0);
}

TEST_CASE("straight-line polls on a phase nobody completes just finish", "[explore][soundness]") {
  const auto p = program({2}, {{op(Stmt::arrive)},
                               {op(Stmt::test_wait, 0, 0), op(Stmt::test_wait, 0, 0), op(Stmt::test_wait, 0, 0),
                                op(Stmt::test_wait, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK_FALSE(c.search.bug);
  CHECK(registers_of(c.search.outcomes) == std::set<std::string>{"[][0,0,0,0,]"});
}

TEST_CASE("three straight-line polls while the phase completes reach every outcome", "[explore][soundness]") {
  const auto p = program(
      {1}, {{op(Stmt::arrive)}, {op(Stmt::try_wait, 0, 0), op(Stmt::test_wait, 0, 0), op(Stmt::try_wait, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK(registers_of(c.search.outcomes) ==
        std::set<std::string>{"[][0,0,0,]", "[][0,0,1,]", "[][0,1,1,]", "[][1,1,1,]"});
}

// A loop polling at two places (try_wait, then after two rounds test_wait): the phase may
// complete before any poll, so each answers true in some execution. PTX: "test_wait is a
// non-blocking instruction which tests for the completion of the phase"; try_wait "causes the
// executing thread to wait until the specified phase completes or ... a system-dependent time
// limit" (9.7.13.15.16): either may find it complete, so both exits are outcomes.
TEST_CASE("a loop over two poll sites leaves by either, and each exit is an outcome", "[explore][soundness][spin]") {
  const auto p = program({1}, {{op(Stmt::arrive)}, {op(Stmt::spin_two_sites, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK_FALSE(c.search.bug);
  CHECK(registers_of(c.search.outcomes) == std::set<std::string>{"[][0,]", "[][1,]"});
}

TEST_CASE("a loop over two poll sites on a phase nobody completes is a livelock", "[explore][soundness][spin]") {
  const auto p = program({2}, {{op(Stmt::arrive)}, {op(Stmt::spin_two_sites, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK(c.search.bug_kinds == std::set<std::string>{"livelock"});
}

// A loop counted in memory gives up after two failed polls: with nobody arriving, its only
// outcome is the give-up (c = 2), never a livelock; with an arrive, every count 0..2.
TEST_CASE("a loop whose count lives in memory gives up, and is no livelock", "[explore][soundness][spin]") {
  const auto never = program({2}, {{op(Stmt::arrive)}, {op(Stmt::spin_counter_mem, 0, 0)}});
  const Comparison n = compare(never);
  CHECK(n.agree);
  CHECK_FALSE(n.search.bug);
  CHECK(registers_of(n.search.outcomes) == std::set<std::string>{"[][2,]"});
  const auto completes = program({1}, {{op(Stmt::arrive)}, {op(Stmt::spin_counter_mem, 0, 0)}});
  const Comparison c = compare(completes);
  CHECK(c.agree);
  CHECK(registers_of(c.search.outcomes) == std::set<std::string>{"[][0,]", "[][1,]", "[][2,]"});
}

// PTX ISA 8.9.5: X precedes Y in proxy-preserved base causality order only if both are generic,
// or of one proxy and one thread block, or aliases with a proxy fence between; a slot read with
// an ordinary load (generic) and overwritten by a bulk copy (cp.async.bulk: "performed in the
// asynchronous proxy") are neither, so the mbarrier release/acquire between them orders them only
// with a fence.proxy.async: the reader's before its release, or the issuer's after its wait.
TEST_CASE("a slot read, released and refilled by a bulk copy needs a proxy fence", "[explore][soundness][proxy]") {
  auto refill = [](std::vector<Instr> reader_tail, std::vector<Instr> issuer_middle) {
    std::vector<Instr> issuer{op(Stmt::arrive, 0)};
    issuer.push_back(op(Stmt::wait, 1, 0));
    issuer.insert(issuer.end(), issuer_middle.begin(), issuer_middle.end());
    issuer.push_back(op(Stmt::arrive_expect_tx, 0, 16));
    issuer.push_back(op(Stmt::copy, 0, 0));
    std::vector<Instr> reader{op(Stmt::wait, 0, 0), op(Stmt::load_slot, 0, 0)};
    reader.insert(reader.end(), reader_tail.begin(), reader_tail.end());
    return compare(program({1, 1}, {issuer, reader}));
  };
  const Comparison none = refill({op(Stmt::arrive, 1)}, {});
  CHECK(none.agree);
  CHECK(none.search.bug_kinds == std::set<std::string>{"race"});
  const Comparison reader = refill({op(Stmt::fence_proxy), op(Stmt::arrive, 1)}, {});
  CHECK(reader.agree);
  CHECK_FALSE(reader.search.bug);
  const Comparison issuer = refill({op(Stmt::arrive, 1)}, {op(Stmt::fence_proxy)});
  CHECK(issuer.agree);
  CHECK_FALSE(issuer.search.bug);
  const Comparison late = refill({op(Stmt::arrive, 1), op(Stmt::fence_proxy)}, {});
  CHECK(late.agree);
  CHECK(late.search.bug_kinds == std::set<std::string>{"race"});
  // A third thread of the CTA that learnt of the read (barrier 2) fences and releases the stage:
  // its fence covers the reads it knows of (ConSan: "the generic accesses currently visible to
  // the issuing base thread"); fenced before it learnt of them, it covers nothing.
  for (const bool after : {true, false}) {
    std::vector<Instr> third{op(Stmt::wait, 2, 0), op(Stmt::arrive, 1)};
    third.insert(third.begin() + (after ? 1 : 0), op(Stmt::fence_proxy));
    const Comparison c = compare(
        program({1, 1, 1},
                {{op(Stmt::arrive, 0), op(Stmt::wait, 1, 0), op(Stmt::arrive_expect_tx, 0, 16), op(Stmt::copy, 0, 0)},
                 {op(Stmt::wait, 0, 0), op(Stmt::load_slot, 0, 0), op(Stmt::arrive, 2)},
                 third}));
    INFO("the third thread fences " << (after ? "after" : "before") << " its wait");
    CHECK(c.agree);
    CHECK(c.search.bug_kinds == (after ? std::set<std::string>{} : std::set<std::string>{"race"}));
  }
}

TEST_CASE("a spin on a phase nobody completes is a livelock", "[explore][soundness][spin]") {
  const auto p = program({2}, {{op(Stmt::arrive)}, {op(Stmt::spin_try_wait, 0, 0)}});
  const Comparison c = compare(p);
  CHECK(c.agree);
  CHECK(c.search.bug_kinds == std::set<std::string>{"livelock"});
}

// Written as users write them, not through the interpreter of tests/differential (whose
// statements all poll from one call site with a changing script index, so it cannot make
// two polls from equal states): straight-line polls whose answers are discarded.
namespace {
using HP = mbcheck::sim::HostPlatform;
HP::Barrier& host_bar() { return *reinterpret_cast<HP::Barrier*>(HP::shared_memory()); }
std::int64_t* host_word() { return reinterpret_cast<std::int64_t*>(HP::shared_memory() + 1024); }
mbcheck::sim::LaunchShape two_threads() {
  mbcheck::sim::LaunchShape shape;
  shape.threads_per_cta = 2;
  shape.smem_bytes = 2048;
  return shape;
}
}  // namespace

TEST_CASE("three discarded test_waits are three polls, not a spin: the schedule where all fail is reached",
          "[explore][soundness][spin]") {
  // Thread 1 polls three times, then stores 1; thread 0 loads, then arrives. All three polls
  // may fail (test_wait never blocks), the store lands, and thread 0 loads 1.
  mbcheck::sim::FunctionProgram prog(two_threads(), [] {
    if (HP::thread_idx() == 0) HP::mbarrier_init(host_bar(), 1);
    HP::sync_threads();
    if (HP::thread_idx() == 0) {
      const std::int64_t r = HP::atomic_load(host_word());
      HP::mbarrier_arrive(host_bar());
      HP::check(r == 0, "thread 0 loaded before thread 1 stored");
    } else {
      HP::mbarrier_test_wait_parity(host_bar(), 0);
      HP::mbarrier_test_wait_parity(host_bar(), 0);
      HP::mbarrier_test_wait_parity(host_bar(), 0);
      HP::atomic_store(host_word(), 1);
    }
  });
  mbcheck::sim::ExploreOptions o;
  const mbcheck::sim::ExploreResult r = mbcheck::sim::explore(prog, o);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == mbcheck::sim::Verdict::assertion);
}

TEST_CASE("three discarded test_waits of a phase nobody completes terminate: no livelock",
          "[explore][soundness][spin]") {
  mbcheck::sim::FunctionProgram prog(two_threads(), [] {
    if (HP::thread_idx() == 0) HP::mbarrier_init(host_bar(), 2);
    HP::sync_threads();
    if (HP::thread_idx() == 1) {
      HP::mbarrier_test_wait_parity(host_bar(), 0);
      HP::mbarrier_test_wait_parity(host_bar(), 0);
      HP::mbarrier_test_wait_parity(host_bar(), 0);
    }
  });
  mbcheck::sim::ExploreOptions o;
  o.stop_at_first_bug = false;
  const mbcheck::sim::ExploreResult r = mbcheck::sim::explore(prog, o);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("a spin loop on one line is still recognised as a spin", "[explore][soundness][spin]") {
  mbcheck::sim::FunctionProgram prog(two_threads(), [] {
    if (HP::thread_idx() == 0) HP::mbarrier_init(host_bar(), 1);
    HP::sync_threads();
    if (HP::thread_idx() == 0)
      HP::mbarrier_arrive(host_bar());
    else
      while (!HP::mbarrier_try_wait_parity(host_bar(), 0)) {}
  });
  mbcheck::sim::ExploreOptions o;
  o.stop_at_first_bug = false;
  const mbcheck::sim::ExploreResult r = mbcheck::sim::explore(prog, o);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.executions <= 2);
}

TEST_CASE("a wait on a barrier re-initialised under it is enabled exactly when the new incarnation lets it run",
          "[explore][soundness]") {
  // T1's wait for phase 1 blocks; T0's inval enables it (to report the misuse), its init makes
  // it an aliasing wait (phase 1 while the barrier is in phase 0), and T0's arrive then makes
  // phase 1 the current one: blocked again. Each step must leave the wait as the rules say
  // (the runtime once kept it enabled past the arrive and then threw "a blocked wait was
  // scheduled"); likewise a wait whose old phase 0 had completed, after the init.
  const auto ahead = program({1, 1}, {{op(Stmt::wait, 0, 0), op(Stmt::inval), op(Stmt::reinit, 0, 1), op(Stmt::arrive)},
                                      {op(Stmt::arrive), op(Stmt::wait, 0, 1)},
                                      {}});
  const Comparison c = compare(ahead);
  INFO(c.why);
  CHECK(c.agree);
  const auto completed = program({1, 1}, {{op(Stmt::wait, 0, 0), op(Stmt::inval), op(Stmt::reinit, 0, 1)},
                                          {op(Stmt::arrive), op(Stmt::arrive_relaxed, 1)},
                                          {op(Stmt::wait, 0, 0)}});
  const Comparison d = compare(completed);
  INFO(d.why);
  CHECK(d.agree);
}

TEST_CASE("a phase-bit wait blocked while another thread re-initialises its barrier reads the bit again",
          "[explore][soundness][fuzz]") {
  // T1 learns phase 0 complete, then waits by bit 1: phase 1, blocked. T0 invalidates the
  // barrier and initialises it again: bit 1 now means the phase before the new incarnation's
  // phase 0 (T1 knows nothing of it), which the hardware's parity test passes. The runtime once
  // kept phase 1 and reported aliasing there, in fuzzing (program 87,297,364 of the soak).
  const auto p = program({1}, {{op(Stmt::arrive), op(Stmt::inval), op(Stmt::reinit, 0, 1)},
                               {op(Stmt::parity_wait, 0, 0), op(Stmt::parity_wait, 0, 1)}});
  const Comparison c = compare(p);
  INFO(c.why);
  CHECK(c.agree);
  const FuzzComparison f = fuzz_compare(p, c.reference, 200, 200, 1);
  INFO(f.why);
  CHECK(f.false_alarms == 0);
  CHECK(f.unknown_outcomes == 0);
}
