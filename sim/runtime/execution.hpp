// What one execution is made of and gives back, as the strategies, observers and reports see
// it: the verdict and outcome, the trace, the launch shape and Program, the Strategy and
// StepObserver interfaces and the run limits (the runtime that drives them: runtime.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/runtime/mbarrier.hpp"
#include "sim/runtime/ops.hpp"
#include "spec/platform.hpp"

namespace mbcheck::sim {

inline constexpr AgentId kNoAgent = ~AgentId{0};

// What try_wait_status returns: which deferred try_wait it was (Runtime's table of them).
struct TryWaitStatus {
  std::uint64_t id = 0;  // 0: no try_wait made it
};

// How one execution ended.
enum class Verdict : std::uint8_t {
  completed,   // every thread finished (the protocol's own result check may still fail)
  deadlock,    // no agent enabled, some unfinished
  livelock,    // as deadlock, but some thread spins on test_wait/try_wait forever
  race,        // two accesses to one word, one a write, not ordered by happens-before
  misuse,      // a barrier rule was broken (see misuse kind)
  aliasing,    // a wait for a phase that is neither current nor preceding
  assertion,   // P::check failed, or the output differs from the reference
  lifetime,    // a CTA can exit while a peer still arrives on its barriers or touches its smem
  exception,   // protocol code threw
  step_limit,  // more steps than allowed
  diverged,    // replay: the protocol did not do what the schedule recorded
  pruned,      // the strategy stopped the execution (redundant for the search): not a bug
  // Last, so that the numbers shard-exchange files store for the verdicts above stay as they were.
  crash,  // protocol code died of a fatal signal (a wild pointer, abort()) or overflowed its stack
  hang,   // a thread ran protocol code longer than RunLimits::watchdog_seconds without calling in
};
const char* to_string(Verdict v);
inline bool is_bug(Verdict v) { return v != Verdict::completed && v != Verdict::pruned; }

// Under OnMisuse::proceed (LaunchShape::on_misuse): the first misuse of an execution that the
// emulator answered as the hardware does and went on past, the root of what followed.
struct RootMisuse {
  MisuseKind kind = MisuseKind::missing_wait;
  Verdict verdict = Verdict::misuse;  // the verdict it has alone: misuse, or aliasing
  std::string message;                // as the misuse alone is reported
  std::uint64_t step = 0;             // the step that made it
  std::vector<AgentId> culprits;
};

struct Outcome {
  Verdict verdict = Verdict::completed;
  std::optional<MisuseKind> misuse;
  std::string message;               // one line, the cause
  std::vector<std::string> details;  // e.g. one line per group of blocked threads
  std::vector<AgentId> schedule;     // the agent chosen at each step: replays this execution
  std::uint64_t steps = 0;
  std::vector<AgentId> culprits;  // the agents the cause names (for the timeline)
  // Stopped by RunLimits::stop or the deadline before its end: proves nothing (its verdict
  // is `pruned`, its schedule a prefix).
  bool cut_short = false;
  // The source lines the cause is about, most important first: a race's two accesses (the
  // one that completed it first), a deadlock's blocked waits (one per group of threads
  // waiting alike). Reports put the error at the first and notes at the others.
  struct Located {
    std::string where;     // "file:line" ("" if unknown)
    std::string function;  // the function that made the access or call
    std::string text;      // what happened there
  };
  std::vector<Located> located;
  // OnMisuse::proceed: the misuse the execution went on past. With a consequence (a deadlock,
  // livelock, race, wrong result, a trap) the verdict and message are the consequence's and
  // name it; with none, `root_only` and the verdict is the misuse's own.
  std::optional<RootMisuse> root;
  bool root_only = false;

  // Every field to its default, the buffers kept (a runtime's next execution reuses them:
  // Runtime::execute_in_place). A field added above is reset here too.
  void clear() {
    verdict = Verdict::completed;
    misuse.reset();
    message.clear();
    details.clear();
    schedule.clear();
    steps = 0;
    culprits.clear();
    cut_short = false;
    located.clear();
    root.reset();
    root_only = false;
  }
};
// A bug that ends a search that stops at its first: under OnMisuse::proceed a misuse with no
// consequence in its execution does not (another schedule may show the consequence).
inline bool stops_search(const Outcome& o) { return is_bug(o.verdict) && !o.root_only; }

// One step of a recorded execution (RunLimits::record_trace).
struct TraceEntry {
  std::uint64_t step = 0;
  AgentId agent = kNoAgent;
  std::string who;       // "thread 37 (warp 1 lane 5)"
  std::string barrier;   // name of the barrier it touched, if any
  std::string what;      // "arrive empty[1]  => phase 0, pending 127/128, tx 0"
  std::string where;     // the protocol's source line: "spec/kernels/tma_pipeline.hpp:97" ("" if unknown)
  std::string function;  // the function that made the call
};

// A source file as reports show it (relative to the working directory or mbcheck's tree).
std::string source_path(const char* file);
// Fills a trace entry's source line from the call site its agent announced (none: left empty).
void name_site(TraceEntry& t, const CallSite& site);

// --on-misuse: stop at a misuse, or answer the ones the hardware answers and go on.
enum class OnMisuse : std::uint8_t { stop, proceed };

// --proxy-fences: which generic accesses need fence.proxy.async before the async proxy touches
// their bytes (docs/semantics.md, "A generic read followed by an async write").
enum class ProxyFences : std::uint8_t { writes, strict };

// What one execution launches: a grid of CTAs of threads, each CTA with its own zeroed
// dynamic shared memory.
struct LaunchShape {
  std::uint32_t ctas = 1;
  std::uint32_t threads_per_cta = 1;
  std::uint32_t warp_size = 32;
  std::size_t smem_bytes = 0;
  std::uint32_t copy_pieces = 1;  // each bulk copy lands in this many pieces (complete_tx each)
  // Thread block clusters of cluster_x by cluster_y CTAs (at most 16, dividing ctas): CTA c is
  // rank c % size of cluster c / size, at (rank % cluster_x, rank / cluster_x) in it.
  std::uint32_t cluster_x = 1, cluster_y = 1;
  std::uint32_t cluster_size() const { return cluster_x * cluster_y; }
  // wgmma.fence / mma_async / commit_group / wait_group: `.sync` makes the executing thread
  // wait for its warp (PTX ISA 9.1, 9.7.15.5.2, 9.7.15.7), so by default a warp converges
  // alone. True: the whole warp group converges at each, as the H200 was measured to do
  // (device/RESULTS.md): a mode, since PTX does not promise it.
  bool warpgroup_converges = false;
  // A `.acquire.cta` mbarrier wait (every wait but the `_cluster` forms) acquires what peer CTAs
  // released into the phase with `.release.cluster` arrives. PTX does not promise it (such a
  // pair is not morally strong: docs/semantics.md, "Scopes"); the H100 showed no stale word in
  // 3,200,000 (device/RESULTS.md, cta-acquire-of-peer-release), and CUTLASS's multicast
  // pipelines rely on it (their producers wait for peers' releases at .cta): a mode.
  bool cta_waits_acquire_peers = false;
  // What a misuse the hardware answers does (missing-wait: the arrive counts; phase-aliasing:
  // the wait is answered by parity): stop there (a misuse verdict), or proceed as the hardware
  // does, to the deadlock, race or wrong result it leads to (Outcome::root names the misuse).
  OnMisuse on_misuse = OnMisuse::stop;
  // strict (the default): a generic write read next by the async proxy needs the writer's
  // fence.proxy.async, and a generic read overwritten next by the async proxy needs one too
  // (PTX's memory model makes either unfenced pair a data race; Triton ConSan requires both);
  // writes: the first only (mbcheck's rule before 0.3).
  ProxyFences proxy_fences = ProxyFences::strict;
};
// Why `shape` cannot be launched (a cluster that does not divide the grid, ...), or nullopt.
std::optional<std::string> launch_shape_error(const LaunchShape& shape);

// A protocol as the runtime sees it. The same object runs many executions.
class Program {
 public:
  virtual ~Program() = default;
  virtual LaunchShape shape() const = 0;
  // Fresh global memory before each execution, and before each time the runtime runs one
  // again from its start (Runtime::execute: a feature first used mid-run).
  virtual void reset() = 0;
  virtual void thread_main() = 0;  // the kernel, for the current thread (HostPlatform)
  // After a completed execution: an error message if the output is wrong.
  virtual std::optional<std::string> check_result() { return std::nullopt; }
  // Whether thread_main is device code: besides registers and its stack, it writes only shared
  // and global memory, and those writes reach the runtime (a platform call, or the access
  // instrumentation: cmake/mbcheckCutlassTracking.cmake) or, uninstrumented, are not made
  // between a bool try_wait and the thread's next platform call. Then each such try's two paths
  // are probed from its state (sim/runtime/guarded_tries.cpp: a write seen on a path ends the
  // probe; the assumption is the spin recognition's, and is printed with a proof). Otherwise (a
  // host program that logs into its own objects) a probe's path could repeat a write the
  // runtime does not see, and the tries are learnt by runs of their own.
  virtual bool device_code() const { return false; }
};

class Runtime;

// Returned by Strategy::choose to end the execution as "pruned" (e.g. sleep-set blocked).
inline constexpr AgentId kStopExecution = kNoAgent - 1;

// Picks the agent that runs next. The runtime asks at every scheduling point with at least
// one enabled agent; the choice must be one of rt.enabled() (or kStopExecution).
class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual void begin_execution() {}
  // Before the execution runs again from its start (Runtime::execute: a feature first used
  // mid-run): the choices must be the same as the first time up to where it ended (a seed's, a
  // recorded prefix's), and what the first attempt counted is taken back.
  virtual void restart_execution() { begin_execution(); }
  virtual AgentId choose(const Runtime& rt) = 0;
  // Whether choose() asks Runtime::lowest_enabled at many steps: the runtime then keeps the
  // enabled set as bits too (asked once, at each execution's start).
  virtual bool wants_lowest_enabled() const { return false; }
};

// What one step did, reported right after it (the explorer builds its events from these).
// An arrival at a CTA's barrier 0 by bar.arrive (it goes on): who, and in which step (1-based).
struct BlockArrival {
  AgentId agent;
  std::uint64_t step;
};

struct StepInfo {
  AgentId agent = kNoAgent;
  Op op;                            // the operation performed
  std::int64_t phase_before = 0;    // barrier ops: the barrier's phase when it ran
  bool completed = false;           // it completed the barrier's phase
  bool result = false;              // test_wait/try_wait: the answer
  std::int64_t value = 0;           // atomics: the value read (load/fetch_add/cas)
  bool wrote = false;               // atomics: whether it wrote (cas may not)
  AgentId spawned = kNoAgent;       // bulk_copy: the first copy agent it created
  std::uint32_t spawned_count = 0;  // how many (a multicast makes one per destination CTA)
  // A failed poll that its thread's next poll showed to be a spin iteration (runtime.hpp):
  // it changed nothing anyone can observe, so the search treats it as no event at all.
  bool spin_noop = false;
  // A failed poll of an await that ran because a word its loop read changed
  // (Agent::await_reads): it could not run before the write that changed it.
  bool read_woken = false;
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void on_step(const Runtime& rt, const StepInfo& step) = 0;
  // The execution starts again from its beginning (Runtime::execute reruns one that needed
  // what the runtime had not kept from its first step: a deeper stack scrub, phase knowledge,
  // count-down records): forget its steps so far.
  virtual void restart_execution() {}
  // The execution ends with threads blocked (deadlock or livelock); they are still there.
  virtual void on_blocked(const Runtime&) {}
};

// The fiber stack size every RunLimits starts with: 64 KiB unless set_default_stack_bytes
// changed it (the CLI's --stack-size sets it once, so that the search, the shrinker and every
// replay of a counterexample run with the same stacks).
std::size_t default_stack_bytes();
void set_default_stack_bytes(std::size_t bytes);  // throws std::invalid_argument, as below
// Why `bytes` is not a valid fiber stack size (a multiple of the page size, 16 KiB to
// 16 MiB), or nullopt.
std::optional<std::string> stack_size_error(std::size_t bytes);
// The watchdog limit every RunLimits starts with: 10 s unless set (the CLI's --watchdog, so
// that the search, the shrinker and every replay run under the same one; 0: none).
double default_watchdog_seconds();
void set_default_watchdog_seconds(double seconds);

struct RunLimits {
  std::uint64_t max_steps = 10'000'000;
  bool record_trace = false;  // keep a line per step (replay output)
  // Loads and stores one thread may make between two visible operations before the step
  // counts as endless (a loop that never reaches a barrier operation).
  std::uint64_t max_accesses_per_step = 50'000'000;
  // Each thread's fiber stack, with a guard region below it: overflowing it ends the
  // process with a report naming the thread (sim/runtime/crash.hpp). execute() throws
  // std::invalid_argument for a size stack_size_error rejects.
  std::size_t stack_bytes = default_stack_bytes();
  // Wall-clock seconds one thread may run protocol code without calling into the runtime
  // (no visible operation, P::load or P::store: a loop that max_accesses_per_step cannot
  // end): past it a watchdog names the thread and ends the process with status 1
  // (sim/runtime/crash.hpp). 0: no limit.
  double watchdog_seconds = default_watchdog_seconds();
  // Ends the execution early (Outcome::cut_short) once *stop is true or the deadline has
  // passed, checked every kStopCheckSteps steps: --time-limit and SIGINT hold inside one long
  // execution too. The search or campaign then reports itself incomplete.
  const std::atomic<bool>* stop = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  static constexpr std::uint64_t kStopCheckSteps = 1024;
};

// Program::reset() threw: the harness, not a schedule, is broken (execute() throws this).
struct ProgramError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace mbcheck::sim
