// Protocol code that breaks the process: crashes, stack overflows, exit(), endless local
// loops, a Program whose reset() throws. The fatal ones run in a forked child; the test reads
// the child's stderr through a pipe and checks its exit status.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>
#include <thread>

#include "sim/check.hpp"
#include "sim/runtime/crash.hpp"
#include "sim/fuzz.hpp"
#include "sim/host_platform.hpp"
#include "sim/report/replay_token.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/explore/strategy.hpp"
#include "spec/mbarrier.hpp"

using namespace mbcheck::sim;
using P = HostPlatform;
using Bar = mbcheck::Mbarrier<P>;

// Set in a child right before it crashes on purpose: any operator new on the alternate
// signal stack from then on (the signal handler's, if it allocates) ends the child with
// status 97. What runs after a crash lands back in the runtime may allocate.
static std::atomic<bool> g_forbid_alloc{false};

static bool on_signal_stack() {
  stack_t ss{};
  return sigaltstack(nullptr, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) != 0;
}

void* operator new(std::size_t n) {
  if (g_forbid_alloc.load(std::memory_order_relaxed) && on_signal_stack()) {
    static const char msg[] = "\noperator new called inside the crash handler\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(97);
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

struct Child {
  bool exited = false, signaled = false, timed_out = false;
  int code = -1, sig = 0;
  std::string err;  // what it wrote to stderr
};

// Runs `body` in a forked child with stderr on a pipe; kills it after `timeout_s`.
Child in_child(const std::function<void()>& body, double timeout_s = 30) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    body();
    _exit(0);
  }
  close(fds[1]);
  Child c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      c.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    c.err.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  c.exited = WIFEXITED(status);
  c.code = c.exited ? WEXITSTATUS(status) : -1;
  c.signaled = WIFSIGNALED(status);
  c.sig = c.signaled ? WTERMSIG(status) : 0;
  return c;
}

LaunchShape threads(std::uint32_t n) {
  LaunchShape s;
  s.threads_per_cta = n;
  s.smem_bytes = 1024;
  return s;
}

Bar smem_bar(int i) { return Bar(reinterpret_cast<P::Barrier*>(P::shared_memory())[i]); }

// Thread 0 inits barrier 0 and arrives; the others wait for phase 0.
void signal_once() {
  if (P::thread_idx() == 0) smem_bar(0).init(1);
  P::sync_threads();
  if (P::thread_idx() == 0)
    smem_bar(0).arrive();
  else
    smem_bar(0).wait(0);
}

Outcome run(Program& prog, std::uint64_t seed, RunLimits limits = {}) {
  Runtime rt;
  RandomStrategy s(seed);
  return rt.execute(prog, s, limits);
}

// One execution (seed 1) of `prog`: "verdict: message" on stderr.
void print_outcome(Program& prog) {
  const Outcome out = run(prog, 1);
  fprintf(stderr, "%s: %s\n", to_string(out.verdict), out.message.c_str());
}

void install_demo_reporter() {
  install_crash_reporter(
      [](const std::vector<AgentId>& s) {
        return encode_token_mb1({"demo", {}, s});
      },
      encode_schedule_to);
}

// A frame far bigger than a 64 KiB fiber stack: the call into memset touches its bottom
// first, far below the stack (a single guard page would be jumped).
[[gnu::noinline]] void big_frame() {
  char big[160 * 1024];
  std::memset(big, 1, sizeof big);
  asm volatile("" : : "r"(big) : "memory");
}

// Deep recursion: runs into the guard page by page.
[[gnu::noinline]] int recurse(int depth) {
  volatile char pad[512];
  pad[0] = static_cast<char>(depth);
  return depth > 0 ? recurse(depth - 1) + pad[0] : 0;
}

// The encoding as replay_token.cpp had it before encode_schedule_to (the reference).
std::string reference_encoding(const std::vector<AgentId>& schedule) {
  std::string bytes;
  auto varint = [&](std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) bytes.push_back(static_cast<char>((v & 0x7f) | 0x80));
    bytes.push_back(static_cast<char>(v));
  };
  for (std::size_t i = 0; i < schedule.size();) {
    std::size_t j = i;
    while (j < schedule.size() && schedule[j] == schedule[i]) ++j;
    varint(schedule[i]);
    varint(j - i);
    i = j;
  }
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    acc = (acc << 8) | b;
    for (bits += 8; bits >= 6;) out.push_back(alphabet[(acc >> (bits -= 6)) & 63]);
  }
  if (bits > 0) out.push_back(alphabet[(acc << (6 - bits)) & 63]);
  return out;
}

}  // namespace

TEST_CASE("a fatal signal in protocol code is a crash verdict; the signal handler allocates nothing",
          "[robustness][crash]") {
  const int sig = GENERATE(SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT);
  Child c = in_child([sig] {
    install_demo_reporter();
    FunctionProgram prog(threads(2), [sig] {
      signal_once();
      if (P::thread_idx() == 1) {
        g_forbid_alloc = true;
        if (sig == SIGABRT) std::abort();  // as a failed assert() does
        std::raise(sig);
      }
    });
    // The process goes on: the crash of the second execution lands as the first did.
    for (int round = 0; round < 2; ++round) print_outcome(prog);
  });
  INFO(c.err);
  CHECK(c.exited);
  CHECK(c.code == 0);
  const std::string line =
      fmt::format("crash: thread 1 (warp 0 lane 1) crashed in protocol code: {} (signal {})\n", strsignal(sig), sig);
  // (Contains, not ==: a sanitizer build may add lines of its own.)
  CHECK_THAT(c.err, Catch::Contains(line + line) && !Catch::Contains("mbcheck:"));
}

// (AddressSanitizer finds the double free itself, first.)
#if !defined(__SANITIZE_ADDRESS__)
TEST_CASE("a crash inside free() holding the heap's lock ends the process with its report within a second",
          "[robustness][crash]") {
  const auto start = std::chrono::steady_clock::now();
  Child c = in_child(
      [] {
        install_demo_reporter();
        // Another thread alive: glibc takes its arena locks (a lone thread skips them).
        std::thread([] { pause(); }).detach();
        FunctionProgram prog(threads(2), [] {
          signal_once();
          if (P::thread_idx() == 1) {
            char* volatile chunk = static_cast<char*>(std::malloc(4096));  // past the caches that take no lock
            std::free(chunk);
            std::free(chunk);  // glibc aborts holding the arena's lock
          }
        });
        const auto start = std::chrono::steady_clock::now();
        print_outcome(prog);  // what it allocates after landing would wait on that lock for good
        std::fprintf(stderr, "landed and went on after %.3f s\n",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      },
      10);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(c.err << "child ran " << seconds << " s");
  CHECK_FALSE(c.timed_out);
  CHECK(seconds < 1.5);
  CHECK(c.exited);
  CHECK(c.code == 1);
  CHECK_THAT(c.err, Catch::Contains("mbcheck: the protocol crashed (Aborted) in thread 1 (warp 0 lane 1), agent 1, at "
                                    "step ") &&
                        Catch::Contains("left the allocator locked or broken") &&
                        Catch::Contains("replay:  mb1:demo::") && !Catch::Contains("landed and went on"));
}
#endif

TEST_CASE("a fiber stack overflow is a crash verdict naming the thread and the stack size", "[robustness][stack]") {
  Child c = in_child([] {
    install_demo_reporter();
    FunctionProgram prog(threads(2), [] {
      signal_once();
      if (P::thread_idx() == 1) big_frame();
    });
    print_outcome(prog);
  });
  INFO(c.err);
  CHECK(c.exited);
  CHECK(c.code == 0);
  CHECK_THAT(c.err, Catch::StartsWith("crash: stack overflow in thread 1 (warp 0 lane 1): protocol code needed more "
                                      "than its fiber stack of 65536 bytes") &&
                        Catch::Contains("raise it with --stack-size"));
}

TEST_CASE("exit() in protocol code is reported with the thread and a replay token, exit status 1",
          "[robustness][exit]") {
  Child c = in_child([] {
    install_demo_reporter();
    FunctionProgram prog(threads(2), [] {
      signal_once();
      if (P::thread_idx() == 1) std::exit(0);
    });
    run(prog, 1);
  });
  INFO(c.err);
  CHECK(c.exited);
  CHECK(c.code == 1);
  CHECK_THAT(c.err, Catch::Contains("mbcheck: protocol code called exit() in thread 1 (warp 0 lane 1)") &&
                        Catch::Contains("replay: mb1:demo::"));
}

TEST_CASE("quick_exit() in protocol code is reported too", "[robustness][exit]") {
  Child c = in_child([] {
    install_demo_reporter();
    FunctionProgram prog(threads(2), [] {
      signal_once();
      if (P::thread_idx() == 1) std::quick_exit(0);
    });
    run(prog, 1);
  });
  INFO(c.err);
  CHECK(c.exited);
  CHECK(c.code == 1);
  CHECK_THAT(c.err, Catch::Contains("mbcheck: protocol code called quick_exit() in thread 1 (warp 0 lane 1)"));
}

TEST_CASE("fuzz: a Program whose reset() throws ends the campaign with an error naming it", "[robustness][fuzz]") {
  // One job on this thread; two, one of them here; two on threads of their own (progress).
  const int mode = GENERATE(0, 1, 2);
  Child c = in_child([mode] {
    auto calls = std::make_shared<std::atomic<int>>(0);
    FuzzOptions o;
    o.runs = 50;
    o.jobs = mode == 0 ? 1 : 2;
    if (mode == 2) o.progress = [](std::uint64_t, std::uint64_t, double) {};
    try {
      fuzz(
          [calls] {
            return std::make_unique<FunctionProgram>(threads(2), signal_once, [calls] {
              if (++*calls == 5) throw std::runtime_error("no device memory left");
            });
          },
          o);
    } catch (const std::exception& e) {
      fprintf(stderr, "caught: %s\n", e.what());
      _exit(3);
    }
  });
  INFO(c.err);
  CHECK(c.exited);
  CHECK(c.code == 3);
  CHECK_THAT(c.err,
             Catch::Contains("caught: fuzz run ") && Catch::Contains("Program::reset() threw: no device memory left"));
}

TEST_CASE("encode_schedule_to writes encode_schedule's text, snprintf-style, never past its buffer",
          "[robustness][token]") {
  SplitMix64 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::vector<AgentId> schedule(rng.below(300));
    const std::uint32_t agents = 1 + rng.below(round % 2 ? 4 : 100000);
    for (AgentId& a : schedule) a = rng.below(agents);
    const std::string want = reference_encoding(schedule);
    CHECK(encode_schedule(schedule) == want);
    CHECK(decode_schedule(want) == schedule);
    const std::size_t cap = rng.below(static_cast<std::uint32_t>(want.size() + 2));
    std::string buf(cap + 8, '#');
    const std::size_t need = encode_schedule_to(schedule.data(), schedule.size(), buf.data(), cap);
    CHECK(need == want.size());
    CHECK(buf.substr(0, std::min(cap, need)) == want.substr(0, std::min(cap, need)));
    CHECK(buf.substr(std::min(cap, need)) == std::string(buf.size() - std::min(cap, need), '#'));
  }
}

TEST_CASE("a crash report says so when the schedule so far does not fit its buffer", "[robustness][crash]") {
  Child c = in_child([] {
    install_demo_reporter();
    static std::int64_t counter = 0;
    // 4 million atomics by two threads, switching every other step: about 5 MB of token. The
    // crash is in check_result, off the fibers: no verdict, the report and the signal.
    FunctionProgram prog(
        threads(2),
        [] {
          for (int i = 0; i < 2'000'000; ++i) P::atomic_fetch_add(&counter, 1);
        },
        {},
        []() -> std::optional<std::string> {
          g_forbid_alloc = true;
          std::raise(SIGSEGV);
          return std::nullopt;
        });
    run(prog, 1);
  });
  INFO(c.err.substr(0, 2000));
  CHECK(c.signaled);
  CHECK(c.sig == SIGSEGV);
  CHECK_THAT(c.err, Catch::Contains("mbcheck: the protocol crashed (Segmentation fault)") &&
                        Catch::Contains("replay:  not printed: the schedule so far (") &&
                        Catch::Contains("more than the crash reporter's buffer of"));
  CHECK(c.err.size() < 4096);
}

TEST_CASE("a larger stack_bytes lets a big frame run; the size is validated", "[robustness][stack]") {
  FunctionProgram prog(threads(2), [] {
    signal_once();
    if (P::thread_idx() == 1) big_frame();
  });
  RunLimits limits;
  CHECK(limits.stack_bytes == 64 * 1024);
  limits.stack_bytes = 512 * 1024;
  CHECK(run(prog, 1, limits).verdict == Verdict::completed);
  for (std::size_t bad : {std::size_t{8 * 1024}, std::size_t{64 * 1024 + 100}, std::size_t{32} << 20}) {
    limits.stack_bytes = bad;
    CHECK_THROWS_WITH(run(prog, 1, limits), Catch::Contains("must be a multiple of the page size") &&
                                                Catch::Contains("from 16 KiB (16384) to 16 MiB (16777216)"));
    CHECK(stack_size_error(bad));
  }
  CHECK_FALSE(stack_size_error(16 * 1024));
  CHECK_FALSE(stack_size_error(16 * 1024 * 1024));
  CHECK_THROWS_AS(set_default_stack_bytes(1000), std::invalid_argument);
  set_default_stack_bytes(256 * 1024);
  CHECK(RunLimits{}.stack_bytes == 256 * 1024);
  CHECK(run(prog, 1).verdict == Verdict::completed);
  set_default_stack_bytes(64 * 1024);
}

TEST_CASE("a stack overflow on a worker thread, by deep recursion, is a crash verdict too", "[robustness][stack]") {
  const bool on_worker = GENERATE(false, true);
  Child c = in_child([on_worker] {
    install_demo_reporter();
    auto body = [] {
      FunctionProgram prog(threads(2), [] {
        signal_once();
        if (P::thread_idx() == 0) recurse(100000);
      });
      print_outcome(prog);
    };
    if (on_worker)
      std::thread(body).join();  // the worker's alternate signal stack comes from Runtime::execute
    else
      body();
  });
  INFO(c.err);
  CHECK(c.exited);
  CHECK(c.code == 0);
  CHECK_THAT(c.err, Catch::StartsWith("crash: stack overflow in thread 0 (warp 0 lane 0): protocol code needed more "
                                      "than its fiber stack of 65536 bytes"));
}

TEST_CASE("the watchdog ends a thread that loops without a visible operation as a hang verdict",
          "[robustness][watchdog]") {
  // In a child: should the thread not land, the watchdog's fallback ends the process.
  const auto start = std::chrono::steady_clock::now();
  Child c = in_child(
      [] {
        install_demo_reporter();
        FunctionProgram prog(threads(2), [] {
          signal_once();
          if (P::thread_idx() == 1) {
            volatile int spin = 0;
            while (spin == 0) {}
          }
        });
        RunLimits limits;
        limits.watchdog_seconds = 0.2;
        const Outcome out = run(prog, 1, limits);
        std::fprintf(stderr, "%s: %s\nschedule ends with %u after %zu steps\n", to_string(out.verdict),
                     out.message.c_str(), out.schedule.empty() ? 99u : out.schedule.back(), out.schedule.size());
        // The runtime goes on: the next execution, without the loop, completes.
        FunctionProgram good(threads(2), signal_once);
        std::fprintf(stderr, "next: %s\n", to_string(run(good, 1, limits).verdict));
      },
      20);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(c.err << "child ran " << seconds << " s");
  CHECK_FALSE(c.timed_out);
  CHECK(c.exited);
  CHECK(c.code == 0);
  CHECK_THAT(c.err, Catch::StartsWith("hang: thread 1 (warp 0 lane 1) ran protocol code for more than 0.2 s without a "
                                      "visible operation, load or store, since its operation at tests/") &&
                        Catch::Contains("raise --watchdog SECONDS") && Catch::Contains("schedule ends with 1 after") &&
                        Catch::Contains("next: completed"));
  CHECK(seconds < 5);
}

TEST_CASE("the watchdog counts neither time in the runtime nor a loop that loads and stores",
          "[robustness][watchdog]") {
  // A strategy slower than the limit: the runtime, not a protocol thread, is what waits.
  struct Slow final : Strategy {
    AgentId choose(const Runtime& rt) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      return rt.enabled().front();
    }
  };
  const bool slow_strategy = GENERATE(true, false);
  Child c = in_child(
      [slow_strategy] {
        static float data[64];
        // A long loop over data between two visible operations: max_accesses_per_step's to end.
        // 40,000,000 accesses (the step's limit is 50,000,000): about 0.4 s, where 10,000,000
        // loop iterations had come down to 0.18-0.20 s, under the 0.2 s this test needs to see.
        FunctionProgram prog(threads(2), [slow_strategy] {
          signal_once();
          if (!slow_strategy && P::thread_idx() == 1)
            for (int i = 0; i < 20'000'000; ++i) P::store(&data[i % 64], P::load(&data[(i + 1) % 64]) + 1);
        });
        RunLimits limits;
        limits.watchdog_seconds = 0.05;
        Runtime rt;
        Slow slow;
        RandomStrategy random(1);
        const auto start = std::chrono::steady_clock::now();
        const Outcome out = rt.execute(prog, slow_strategy ? static_cast<Strategy&>(slow) : random, limits);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (seconds < 0.2) _exit(6);  // too fast to show anything
        _exit(out.verdict == Verdict::completed ? 0 : 5);
      },
      20);
  INFO(c.err << (slow_strategy ? "slow strategy" : "data loop"));
  CHECK(c.exited);
  CHECK(c.code == 0);
}

TEST_CASE("Program::reset() throwing is a ProgramError, and no runtime stays current", "[robustness][reset]") {
  FunctionProgram prog(threads(2), signal_once, [] { throw std::runtime_error("fixture missing"); });
  Runtime rt;
  RandomStrategy s(1);
  CHECK_THROWS_AS(rt.execute(prog, s), ProgramError);
  CHECK_THROWS_WITH(rt.execute(prog, s), "Program::reset() threw: fixture missing");
  CHECK(Runtime::current_or_null() == nullptr);
  // The same runtime runs the next program normally.
  FunctionProgram good(threads(2), signal_once);
  CHECK(rt.execute(good, s).verdict == Verdict::completed);
}

TEST_CASE("Program::check_result() throwing is an exception verdict of that execution", "[robustness][reset]") {
  FunctionProgram prog(threads(2), signal_once, {},
                       []() -> std::optional<std::string> { throw std::out_of_range("vector::at"); });
  Outcome out = run(prog, 1);
  CHECK(out.verdict == Verdict::exception);
  CHECK(out.message == "Program::check_result() threw: vector::at");
}

TEST_CASE("explore: a Program whose reset() throws in a wave worker ends the search with that error",
          "[robustness][reset]") {
  Child c = in_child([] {
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto make = [calls] {
      // Three threads storing to and loading one word: enough classes for waves on two jobs.
      static std::int64_t word;
      return std::make_unique<FunctionProgram>(
          threads(3),
          [] {
            P::atomic_store(&word, P::thread_idx());
            (void)P::atomic_load(&word);
          },
          [calls] {
            word = 0;
            if (++*calls == 12) throw std::runtime_error("fixture gone");
          });
    };
    auto main_program = make();
    ExploreOptions o;
    o.jobs = 2;
    o.make_program = [&] { return std::unique_ptr<Program>(make()); };
    try {
      (void)explore(*main_program, o);
    } catch (const ProgramError& e) {
      fprintf(stderr, "caught: %s\n", e.what());
      _exit(3);
    }
    _exit(0);  // the throwing reset was never reached: a vacuous run
  });
  INFO(c.err);
  CHECK(c.exited);
  CHECK(c.code == 3);
  CHECK_THAT(c.err, Catch::Contains("Program::reset() threw: fixture gone"));
}

#if defined(__SANITIZE_ADDRESS__)
// The asan preset only (sim/runtime/asan_fibers.hpp): AddressSanitizer checks protocol code on fiber
// stacks, after switches and an exception unwound on the fiber, and names the frame.
namespace {
[[gnu::noinline]] void unwind_on_fiber() {
  try {
    throw std::runtime_error("unwound on a fiber stack");
  } catch (const std::exception&) {}
}
[[gnu::noinline]] void poke_stack_array(int k) {
  volatile char buf[16];
  volatile char* p = buf;
  asm volatile("" : "+r"(p));  // out of UBSan's sight (its bounds check would stop first): ASan's to find
  p[k] = 1;
  (void)p[k];
}
void switch_unwind_poke(int k) {
  signal_once();
  P::sync_threads();
  unwind_on_fiber();
  poke_stack_array(k);
}
}  // namespace

TEST_CASE("under AddressSanitizer, fiber switches and unwinds are clean and a stack overflow on a fiber is found",
          "[robustness][asan]") {
  Child clean = in_child([] {
    FunctionProgram prog(threads(4), [] { switch_unwind_poke(3); });
    (void)run(prog, 1);
  });
  INFO(clean.err);
  CHECK(clean.exited);
  CHECK(clean.code == 0);
  CHECK_THAT(clean.err, !Catch::Contains("AddressSanitizer") && !Catch::Contains("WARNING"));
  Child bad = in_child([] {
    FunctionProgram prog(threads(4), [] { switch_unwind_poke(P::thread_idx() == 2 ? 16 : 3); });
    (void)run(prog, 1);
  });
  INFO(bad.err);
  CHECK_FALSE(bad.code == 0);
  CHECK_THAT(bad.err, Catch::Contains("AddressSanitizer: stack-buffer-overflow") &&
                          Catch::Contains("poke_stack_array") && Catch::Contains("is located in stack of thread"));
}
#endif
