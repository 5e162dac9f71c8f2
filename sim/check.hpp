// Checking a protocol: the library API the CLI and user code share.
//
//   auto result = mbcheck::sim::check(shape, [&] { my_kernel<HostPlatform>(params); });
//   if (result.verdict != CheckVerdict::verified) std::cout << format_report(result);
//
// check() explores every distinct interleaving (DPOR) or a preemption-bounded part of them,
// and returns the verdict, what was explored, and for a bug a counterexample: the cause,
// a compact timeline of the threads involved, and the schedule that replays it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/explore/explore.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

enum class CheckStrategy : std::uint8_t { dpor, bounded };

// The protocol a replay token names (sim/report.hpp): its name as a binary built with
// cli::main registers it, and its shape flags, so that binary's `replay TOKEN` reruns the
// execution. A kernel checked only from C++ keeps the default.
struct ProtocolId {
  std::string name = "kernel";
  std::map<std::string, std::string> options;  // every shape flag, defaults filled in (CliProgram::options())
};

// The search's own options (limits, jobs, shards, progress: see ExploreOptions) plus what
// check() decides on top of them.
struct CheckOptions : ExploreOptions {
  CheckStrategy strategy = CheckStrategy::dpor;
  int preemptions = 2;              // bounded: the preemption bound
  std::size_t timeline_lines = 40;  // counterexample timeline length
  ProtocolId protocol;              // what the counterexample's replay token names
};

enum class CheckVerdict : std::uint8_t { verified, bug, incomplete };
const char* to_string(CheckVerdict v);

struct Counterexample {
  Verdict kind = Verdict::completed;
  std::optional<MisuseKind> misuse;
  // OnMisuse::proceed: the misuse the execution went on past, whose consequence `kind` is
  // (or, with kind misuse or aliasing and no consequence found, the misuse itself).
  std::optional<MisuseKind> root_misuse;
  std::string cause;
  std::vector<std::string> details;
  std::vector<AgentId> schedule;
  std::uint64_t steps = 0;
  std::vector<std::string> timeline;  // relevant steps, lanes that behave alike collapsed
  // Compiler-style lines for editors and CI logs: "file:line: error: <cause>" at the
  // failing thread's last step with a source line, then "file:line: note: ..." for the
  // other culprits' last steps.
  std::vector<std::string> diagnostics;
  std::uint64_t elided = 0;  // steps of other threads left out of the timeline
};

struct CheckResult {
  CheckVerdict verdict = CheckVerdict::incomplete;
  ExploreStats stats;
  std::optional<Counterexample> counterexample;
  int preemption_bound = -1;  // bounded: the bound that was covered
  bool step_limited = false;  // incomplete because an execution ran past the step limit
  ProtocolId protocol;        // CheckOptions::protocol: replay_token(result) (sim/report.hpp)
};

CheckResult check_program(Program& program, const CheckOptions& options = {});

// Re-runs one schedule (replay), optionally recording every step.
Outcome replay_schedule(Program& program, const std::vector<AgentId>& schedule, bool record_trace,
                        std::vector<TraceEntry>* trace = nullptr);

// The counterexample of `bug`: replays it and keeps the steps of the threads it names and
// of the barriers they used.
Counterexample make_counterexample(Program& program, const Outcome& bug, std::size_t timeline_lines);

// Text for people: the cause, the timeline, the statistics, and a last verdict line (with
// `replay_token`: its replay line; sim/report.hpp makes the token of a result).
std::string format_report(const CheckResult& result, const std::string& replay_token = "");

// A protocol given as a callable run by every thread: the user-facing form.
class FunctionProgram final : public Program {
 public:
  FunctionProgram(LaunchShape shape, std::function<void()> thread_main, std::function<void()> reset = {},
                  std::function<std::optional<std::string>()> check_result = {})
      : shape_(shape), main_(std::move(thread_main)), reset_(std::move(reset)), check_(std::move(check_result)) {}
  LaunchShape shape() const override { return shape_; }
  void reset() override {
    if (reset_) reset_();
  }
  void thread_main() override { main_(); }
  std::optional<std::string> check_result() override { return check_ ? check_() : std::nullopt; }

 private:
  LaunchShape shape_;
  std::function<void()> main_, reset_;
  std::function<std::optional<std::string>()> check_;
};

// Checks `kernel` (run by every thread of `shape`); `reset` re-initialises global memory
// before each execution and `check_result` judges the output of a completed one.
inline CheckResult check(const LaunchShape& shape, std::function<void()> kernel, const CheckOptions& options = {},
                         std::function<void()> reset = {},
                         std::function<std::optional<std::string>()> check_result = {}) {
  FunctionProgram program(shape, std::move(kernel), std::move(reset), std::move(check_result));
  return check_program(program, options);
}

}  // namespace mbcheck::sim
