// Schedule fuzzing for shapes too large to exhaust: uniform random walk and PCT. Run i uses
// the seed run_seed(base, i), so any run can be re-run alone; with several jobs the result
// is the same as with one (the bug of the lowest run index is reported).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "sim/check.hpp"

namespace mbcheck::sim {

enum class FuzzKind : std::uint8_t { random, pct };

struct FuzzOptions {
  FuzzKind kind = FuzzKind::random;
  int depth = 3;              // pct: bug depth d
  std::uint64_t runs = 1000;  // 0: until the time limit
  double time_limit_s = 0;    // 0: none
  std::uint64_t seed = 1;     // base seed
  unsigned jobs = 1;          // worker threads
  std::uint64_t max_steps = 1'000'000;
  bool shrink = true;  // shrink the failing schedule (fewest preemptions first)
  // A campaign split across processes by run index: this one runs the indices i with
  // i mod shard_count == shard_index (of the first `runs`, when runs > 0).
  std::uint64_t shard_index = 0, shard_count = 1;
  std::size_t timeline_lines = 40;
  std::function<void(std::uint64_t runs, std::uint64_t transitions, double seconds)> progress;  // ~2 per second
};

struct FuzzResult {
  CheckVerdict verdict = CheckVerdict::incomplete;  // bug, or incomplete (fuzzing proves nothing)
  std::uint64_t runs = 0;                           // runs executed
  std::uint64_t transitions = 0;
  double seconds = 0;
  std::uint64_t agents = 0;  // n and k of PCT's bound, from the first run
  std::uint64_t steps_estimate = 0;
  double pct_bound = 0;                          // 1/(n k^(d-1)) per run
  std::optional<std::uint64_t> bug_run;          // index of the first failing run
  std::optional<Counterexample> counterexample;  // shrunk unless shrink = false
  std::optional<Counterexample> original;        // the run's own schedule, when shrunk
  int original_preemptions = 0, shrunk_preemptions = 0;
  bool interrupted = false;             // stopped by request_stop()
  std::uint64_t step_limited_runs = 0;  // runs that ran past max_steps (inconclusive, not bugs)
  bool shrink_cut = false;              // the time limit left no time to shrink (the run's own schedule)
};

std::uint64_t run_seed(std::uint64_t base, std::uint64_t index);
int count_preemptions(Program& program, const std::vector<AgentId>& schedule);

// `make_program` builds one Program per worker thread (a Program holds its own memory).
FuzzResult fuzz(const std::function<std::unique_ptr<Program>()>& make_program, const FuzzOptions& options);

// A schedule that fails the same way with fewer preemptions, if the shrinker finds one within
// `budget_s` (> 0) seconds (sim/explore/shrink.cpp: a prefix with a preemption-free tail,
// preemptions dropped from a relaxed replay, then bounded search), else the original.
Counterexample shrink(Program& program, const Outcome& failing, std::size_t timeline_lines, int* preemptions_out,
                      double budget_s = 6.0);

}  // namespace mbcheck::sim
