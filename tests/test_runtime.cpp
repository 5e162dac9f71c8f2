// The fiber runtime: outcomes, enabledness, spin loops, copies, replay.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>

#include <sys/wait.h>

#include <csignal>
#include <unistd.h>

#include "sim/runtime/crash.hpp"
#include "sim/host_platform.hpp"
#include "sim/report/replay_token.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/explore/strategy.hpp"
#include "sim/check.hpp"
#include "spec/mbarrier.hpp"

using namespace mbcheck::sim;
using P = HostPlatform;
using Bar = mbcheck::Mbarrier<P>;

namespace {

// A protocol given as a lambda run by every thread; barriers live in shared memory.
class LambdaProgram final : public Program {
 public:
  LambdaProgram(std::uint32_t threads, std::function<void()> body, std::uint32_t ctas = 1) : body_(std::move(body)) {
    shape_.threads_per_cta = threads;
    shape_.ctas = ctas;
    shape_.smem_bytes = 4096;
  }
  LaunchShape shape() const override { return shape_; }
  void reset() override {}
  void thread_main() override { body_(); }
  LaunchShape shape_;

 private:
  std::function<void()> body_;
};

Bar smem_bar(int i) { return Bar(reinterpret_cast<P::Barrier*>(P::shared_memory())[i]); }

Outcome run(Program& prog, std::uint64_t seed, RunLimits limits = {}) {
  Runtime rt;
  RandomStrategy s(seed);
  return rt.execute(prog, s, limits);
}

// Thread 0 inits and signals barrier 0 once; everyone else waits for phase 0.
void one_shot_signal() {
  if (P::thread_idx() == 0) smem_bar(0).init(1);
  P::sync_threads();
  if (P::thread_idx() == 0)
    smem_bar(0).arrive();
  else
    smem_bar(0).wait(0);
}

}  // namespace

TEST_CASE("every source site keeps one id, however many sites there are and however they collide", "[runtime]") {
  // The race detector's shadow words name their access's line by this id; two sites with one
  // id would put a report at the wrong line. 2,000 sites on 250 lines of two files (the table
  // grows several times), asked twice in another order: the same, distinct ids.
  Runtime rt;
  static const char* const kFiles[] = {"a.cpp", "b.cpp"};
  std::vector<mbcheck::CallSite> sites;
  for (unsigned line = 1; line <= 250; ++line)
    for (unsigned column = 1; column <= 4; ++column)
      for (const char* file : kFiles) sites.push_back({file, line, "f", column});
  std::vector<std::uint32_t> ids;
  for (const mbcheck::CallSite& s : sites) ids.push_back(rt.site_id(s));
  CHECK(std::set<std::uint32_t>(ids.begin(), ids.end()).size() == sites.size());
  for (std::size_t i = sites.size(); i-- > 0;) {
    REQUIRE(rt.site_id(sites[i]) == ids[i]);
    const mbcheck::CallSite& back = rt.site_of(ids[i]);
    CHECK((back.file == sites[i].file && back.line == sites[i].line && back.column == sites[i].column));
  }
  CHECK(rt.site_id(mbcheck::CallSite{}) == 0);  // line 0: unknown
}

TEST_CASE("a correct protocol completes under every seed", "[runtime]") {
  LambdaProgram prog(4, one_shot_signal);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    Outcome out = run(prog, seed);
    INFO("seed " << seed << ": " << out.message);
    CHECK(out.verdict == Verdict::completed);
  }
}

TEST_CASE("a wait is enabled only once its phase has completed", "[runtime]") {
  // A strategy that checks, at every step, that no enabled waiter waits for an open phase.
  struct Checking final : Strategy {
    SplitMix64 rng{7};
    int violations = 0;
    AgentId choose(const Runtime& rt) override {
      for (AgentId id : rt.enabled()) {
        const Agent& a = rt.agent(id);
        if (a.op.kind == OpKind::wait && a.op.bar->is_live() && a.op.bar->phase <= a.op.arg) ++violations;
      }
      return rt.enabled()[rng.below(static_cast<std::uint32_t>(rt.enabled().size()))];
    }
  } strategy;
  LambdaProgram prog(8, one_shot_signal);
  Runtime rt;
  CHECK(rt.execute(prog, strategy).verdict == Verdict::completed);
  CHECK(strategy.violations == 0);
}

TEST_CASE("a wait left enabled by a barrier's earlier incarnation is disabled by its re-init", "[runtime]") {
  // Thread 2 waits for phase 0 of barrier 0; thread 1 completes it (count 2) and then tells
  // thread 0, which invalidates barrier 0 and initialises it again: a new phase 0, open until
  // thread 0's arrive. Thread 2's wait, enabled by the old phase 0 (or by the inval, to report
  // the misuse), must be disabled by the init until then.
  struct Checking final : Strategy {
    SplitMix64 rng;
    int violations = 0;
    explicit Checking(std::uint64_t seed) : rng(seed) {}
    AgentId choose(const Runtime& rt) override {
      for (AgentId id : rt.enabled()) {
        const Agent& a = rt.agent(id);
        if (a.op.kind == OpKind::wait && a.op.bar->is_live() && a.op.bar->phase <= a.op.arg) ++violations;
      }
      return rt.enabled()[rng.below(static_cast<std::uint32_t>(rt.enabled().size()))];
    }
  };
  LambdaProgram prog(3, [] {
    const auto t = P::thread_idx();
    if (t == 0) {
      smem_bar(0).init(2);
      smem_bar(1).init(1);
    }
    P::sync_threads();
    if (t == 1) {
      smem_bar(0).arrive();
      smem_bar(0).arrive();
      smem_bar(1).arrive();
    } else if (t == 0) {
      smem_bar(1).wait(0);
      smem_bar(0).inval();
      smem_bar(0).init(1);
      smem_bar(0).arrive();
    } else {
      smem_bar(0).wait(0);
    }
  });
  int completed = 0, invalidated = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Checking strategy(seed);
    Runtime rt;
    const Outcome out = rt.execute(prog, strategy);
    INFO("seed " << seed << ": " << out.message);
    CHECK(strategy.violations == 0);
    if (out.verdict == Verdict::completed) ++completed;
    if (out.verdict == Verdict::misuse && out.misuse == MisuseKind::invalidated) ++invalidated;
    CHECK((out.verdict == Verdict::completed || out.misuse == MisuseKind::invalidated));
  }
  CHECK(completed > 0);    // the wait ran in the old incarnation, or in the new one
  CHECK(invalidated > 0);  // the wait ran between inval and init
}

TEST_CASE("the same seed gives the same schedule, and replaying it gives it again", "[runtime][replay]") {
  LambdaProgram prog(6, one_shot_signal);
  Outcome a = run(prog, 42), b = run(prog, 42);
  CHECK(a.schedule == b.schedule);
  Runtime rt;
  ReplayStrategy replay(a.schedule);
  Outcome c = rt.execute(prog, replay);
  CHECK(c.verdict == Verdict::completed);
  CHECK(c.schedule == a.schedule);
}

TEST_CASE("deadlock: names each blocked thread, the barrier, the phase and the barrier state", "[runtime][deadlock]") {
  LambdaProgram prog(3, [] {
    if (P::thread_idx() == 0) {
      P::label(smem_bar(0).raw(), "ready", 0);
      smem_bar(0).init(2);  // expects two arrivals, gets one
    }
    P::sync_threads();
    if (P::thread_idx() == 0)
      smem_bar(0).arrive();
    else
      smem_bar(0).wait(0);
  });
  Outcome out = run(prog, 1);
  REQUIRE(out.verdict == Verdict::deadlock);
  CHECK(out.message ==
        "2 of 3 threads blocked, none can proceed: threads 1-2 (warp 0) wait ready[0] for phase 0 "
        "(parity 0); ready[0]: phase 0, pending 1/2, tx 0");
  REQUIRE(out.details.size() == 1);
}

TEST_CASE("a barrier misuse ends the execution with the culprit and the rule", "[runtime][misuse]") {
  LambdaProgram prog(2, [] {
    if (P::thread_idx() == 1) smem_bar(0).arrive();  // nobody initialised it
  });
  Outcome out = run(prog, 3);
  CHECK(out.verdict == Verdict::misuse);
  REQUIRE(out.misuse.has_value());
  CHECK(*out.misuse == MisuseKind::uninitialized);
  CHECK_THAT(out.message, Catch::StartsWith("thread 1 (warp 0 lane 1): arrive mbarrier@smem+0x0: arrive on an "
                                            "uninitialised mbarrier"));
}

TEST_CASE("phase aliasing is its own verdict", "[runtime][aliasing]") {
  LambdaProgram prog(1, [] {
    smem_bar(0).init(1);
    smem_bar(0).wait(1);  // phase 1 has not begun: parity 1 would pass at once
  });
  Outcome out = run(prog, 1);
  CHECK(out.verdict == Verdict::aliasing);
  CHECK(out.misuse == MisuseKind::phase_aliasing);
}

TEST_CASE("an exception in protocol code is a verdict, not a crash", "[runtime][exception]") {
  LambdaProgram prog(4, [] {
    one_shot_signal();
    if (P::thread_idx() == 2) throw std::runtime_error("index out of range");
  });
  Outcome out = run(prog, 5);
  CHECK(out.verdict == Verdict::exception);
  CHECK(out.message == "thread 2 (warp 0 lane 2) threw: index out of range");
}

TEST_CASE("a failed P::check is an assertion verdict", "[runtime][assertion]") {
  LambdaProgram prog(2, [] {
    one_shot_signal();
    P::check(P::thread_idx() != 1, "tile checksum");
  });
  Outcome out = run(prog, 1);
  CHECK(out.verdict == Verdict::assertion);
  CHECK(out.message == "thread 1 (warp 0 lane 1): check failed: tile checksum");
}

TEST_CASE("an unreleased pipeline handle is caught even while other threads are mid-protocol", "[runtime][assertion]") {
  // The check fires in a destructor; the other threads are unwound cleanly afterwards.
  LambdaProgram prog(3, [] {
    one_shot_signal();
    if (P::thread_idx() == 0) P::check(false, "ProducerStage destroyed without release()");
    smem_bar(1).init(1);  // never reached by thread 0
  });
  Outcome out = run(prog, 2);
  CHECK((out.verdict == Verdict::assertion || out.verdict == Verdict::misuse));
}

TEST_CASE("an endless protocol hits the step limit", "[runtime][step-limit]") {
  LambdaProgram prog(1, [] {
    smem_bar(0).init(1);
    for (std::int64_t phase = 0;; ++phase) {
      smem_bar(0).arrive();
      smem_bar(0).wait(phase);
    }
  });
  RunLimits limits;
  limits.max_steps = 1000;
  Outcome out = run(prog, 1, limits);
  CHECK(out.verdict == Verdict::step_limit);
  CHECK(out.steps == 1000);
}

TEST_CASE("a try_wait spin loop is not explored as spins: its repeated poll waits for the phase", "[runtime][spin]") {
  LambdaProgram prog(2, [] {
    if (P::thread_idx() == 0) smem_bar(0).init(1);
    P::sync_threads();
    if (P::thread_idx() == 0) {
      smem_bar(0).arrive();
    } else {
      while (!smem_bar(0).try_wait(0)) {}
    }
  });
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Outcome out = run(prog, seed);
    CHECK(out.verdict == Verdict::completed);
    // init, 2 syncs, arrive, at most 3 failed polls (the first two are made from states that
    // differ in dead stack slots) and the one that waits
    CHECK(out.steps <= 8);
  }
}

TEST_CASE("a spin loop on a phase that never completes is a livelock, not a hang", "[runtime][spin]") {
  LambdaProgram prog(1, [] {
    smem_bar(0).init(1);
    while (!smem_bar(0).try_wait(0)) {}
  });
  Outcome out = run(prog, 1);
  CHECK(out.verdict == Verdict::livelock);
  CHECK_THAT(out.message, Catch::Contains("spins forever on try_wait") &&
                              Catch::Contains("every poll fails and its loop changes nothing"));
}

TEST_CASE("sync_threads holds every thread until all live threads arrive", "[runtime][sync]") {
  LambdaProgram prog(5, [] {
    if (P::thread_idx() == 4) smem_bar(0).init(4);
    P::sync_threads();
    if (P::thread_idx() < 4) smem_bar(0).arrive();  // would be a misuse before init
  });
  for (std::uint64_t seed = 0; seed < 30; ++seed) CHECK(run(prog, seed).verdict == Verdict::completed);
}

TEST_CASE("a bulk copy lands in the configured number of pieces, each a complete_tx", "[runtime][copy]") {
  alignas(16) static float src[64];
  for (int i = 0; i < 64; ++i) src[i] = static_cast<float>(i);
  LambdaProgram prog(1, [] {
    auto bar = smem_bar(0);
    float* dst = reinterpret_cast<float*>(P::shared_memory() + 128);
    bar.init(1);
    bar.arrive_expect_tx(sizeof(src));
    P::cp_async_bulk_global_to_shared(dst, src, sizeof(src), bar.raw());
    bar.wait(0);
    P::check(std::memcmp(dst, src, sizeof(src)) == 0, "copied data");
  });
  prog.shape_.copy_pieces = 4;
  Runtime rt;
  RandomStrategy s(9);
  RunLimits limits;
  limits.record_trace = true;
  Outcome out = rt.execute(prog, s, limits);
  CHECK(out.verdict == Verdict::completed);
  int landings = 0;
  for (const auto& t : rt.trace()) landings += t.what.find("lands 64 B") != std::string::npos;
  CHECK(landings == 4);
}

TEST_CASE("a bulk copy whose size is not a multiple of 16 is a misuse", "[runtime][copy][misuse]") {
  alignas(16) static float src[4];
  LambdaProgram prog(1, [] {
    smem_bar(0).init(1);
    P::cp_async_bulk_global_to_shared(P::shared_memory() + 128, src, 12, smem_bar(0).raw());
  });
  Outcome out = run(prog, 1);
  CHECK(out.misuse == MisuseKind::tma_misaligned);
}

TEST_CASE("replay reports divergence when the protocol does something else", "[runtime][replay]") {
  LambdaProgram prog(4, one_shot_signal);
  Outcome a = run(prog, 3);
  std::vector<AgentId> wrong = a.schedule;
  std::swap(wrong.front(), wrong.back());  // thread 0's init must come first
  Runtime rt;
  ReplayStrategy replay(wrong);
  Outcome out = rt.execute(prog, replay);
  CHECK(out.verdict == Verdict::diverged);
  CHECK_THAT(out.message, Catch::Contains("not enabled"));
}

TEST_CASE("several CTAs each get their own shared memory and barriers", "[runtime]") {
  LambdaProgram prog(3, one_shot_signal, /*ctas=*/4);
  for (std::uint64_t seed = 0; seed < 10; ++seed) CHECK(run(prog, seed).verdict == Verdict::completed);
}

TEST_CASE("one runtime runs many executions back to back", "[runtime]") {
  LambdaProgram prog(32, one_shot_signal);
  Runtime rt;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    RandomStrategy s(seed);
    REQUIRE(rt.execute(prog, s).verdict == Verdict::completed);
  }
}

TEST_CASE("straight-line polls are not a spin loop: the third failed poll still answers", "[runtime][spin]") {
  LambdaProgram prog(1, [] {
    smem_bar(0).init(1);
    bool a = smem_bar(0).test_wait(std::int64_t{0});
    bool b = smem_bar(0).try_wait(std::int64_t{0});
    bool c = smem_bar(0).try_wait(std::int64_t{0});
    P::check(!a && !b && !c, "nothing arrived, so every poll fails");
  });
  Outcome out = run(prog, 1);
  CHECK(out.verdict == Verdict::completed);
}

TEST_CASE("a thread looping over data without a barrier operation ends as a step limit, not a hang",
          "[runtime][step-limit]") {
  static float word[4];
  LambdaProgram prog(2, [] {
    if (P::thread_idx() == 1)
      for (;;) P::store(&word[0], P::load(&word[1]));
  });
  RunLimits limits;
  limits.max_accesses_per_step = 100000;
  Outcome out = run(prog, 1, limits);
  CHECK(out.verdict == Verdict::step_limit);
  CHECK_THAT(out.message, Catch::Contains("thread 1 (warp 0 lane 1) made 100000 loads/stores without reaching a "
                                          "barrier operation"));
}

namespace {
// Runs `body` in a forked child (a crash that does not land would end the test binary) and
// returns what it wrote to stderr; the child must exit 0.
std::string stderr_of_child(const std::function<void()>& body) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(out[1], STDERR_FILENO);
    install_crash_reporter(
        [](const std::vector<AgentId>& s) {
          return encode_token({"demo", {}, s});
        },
        encode_schedule_to);
    body();
    _exit(0);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  INFO(text);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return text;
}
}  // namespace

TEST_CASE("a protocol that crashes is a crash verdict whose schedule replays the crash", "[runtime][crash]") {
  const std::string text = stderr_of_child([] {
    LambdaProgram prog(2, [] {
      one_shot_signal();
      // Stands in for a wild store in protocol code (a real one is undefined behaviour, which
      // the UBSan build would stop before any signal).
      if (P::thread_idx() == 1) std::raise(SIGSEGV);
    });
    const Outcome crashed = run(prog, 1);
    Runtime rt;
    ReplayStrategy replay(crashed.schedule);
    const Outcome again = rt.execute(prog, replay);
    fprintf(stderr, "%s: %s; replayed: %s, %s\n", to_string(crashed.verdict), crashed.message.c_str(),
            to_string(again.verdict), again.schedule == crashed.schedule ? "same schedule" : "another schedule");
  });
  // (Contains, not ==: a sanitizer build may add lines of its own.)
  CHECK_THAT(text, Catch::Contains("crash: thread 1 (warp 0 lane 1) crashed in protocol code: Segmentation fault "
                                   "(signal 11); replayed: crash, same schedule\n"));
}

TEST_CASE("check: a crash is a counterexample like any other bug, with one job or two", "[runtime][crash]") {
  const unsigned jobs = GENERATE(1u, 2u);
  const std::string text = stderr_of_child([jobs] {
    auto make = [] {
      return std::unique_ptr<Program>(new LambdaProgram(3, [] {
        one_shot_signal();
        if (P::thread_idx() == 2) std::raise(SIGSEGV);
      }));
    };
    auto program = make();
    CheckOptions o;
    o.jobs = jobs;
    o.make_program = make;
    const CheckResult r = check_program(*program, o);
    fprintf(stderr, "%s %s: %s\n", to_string(r.verdict), r.counterexample ? to_string(r.counterexample->kind) : "-",
            r.counterexample ? r.counterexample->cause.c_str() : "");
  });
  CHECK_THAT(text,
             Catch::Contains(
                 "bug crash: thread 2 (warp 0 lane 2) crashed in protocol code: Segmentation fault (signal 11)\n"));
}

TEST_CASE("every step of a counterexample names the protocol's source line and function", "[runtime][source]") {
  // Thread 0 expects two arrivals but only one comes: a deadlock at the wait below.
  static unsigned arrive_line = 0;
  LaunchShape shape;
  shape.threads_per_cta = 2;
  shape.smem_bytes = 64;
  auto kernel = [] {
    using P = HostPlatform;
    mbcheck::Mbarrier<P> bar(*reinterpret_cast<P::Barrier*>(P::shared_memory()));
    if (P::thread_idx() == 0) bar.init(2);
    P::sync_threads();
    arrive_line = __LINE__ + 1;
    if (P::thread_idx() == 1) bar.arrive();
    bar.wait(0);
  };
  mbcheck::sim::CheckResult r = mbcheck::sim::check(shape, kernel);
  REQUIRE(r.counterexample);
  CHECK(r.counterexample->kind == Verdict::deadlock);
  bool named = false;
  const std::string site = "tests/test_runtime.cpp:" + std::to_string(arrive_line) + ")";
  for (const auto& line : r.counterexample->timeline)
    named |= line.find("arrive") != std::string::npos && line.find(site) != std::string::npos;
  INFO(site);
  CHECK(named);
  // The replayed trace has file, line and function for each step.
  Runtime rt;
  ReplayStrategy replay(r.counterexample->schedule);
  RunLimits limits;
  limits.record_trace = true;
  FunctionProgram prog(shape, kernel);
  rt.execute(prog, replay, limits);
  for (const TraceEntry& t : rt.trace()) {
    INFO(t.what);
    CHECK(t.where.find("tests/test_runtime.cpp:") == 0);
    CHECK_FALSE(t.function.empty());
  }
}
