// Systematic exploration of a protocol's schedules.
//
//   brute_force  every interleaving, no reduction (small shapes; the reference that DPOR's
//                counts are checked against)
//   dpor         stateless DFS with source-set DPOR and sleep sets over the mbarrier-aware
//                dependency relation: one execution per equivalence class
//
// Every execution re-runs the program from the start, following a prefix of recorded
// choices, under the same Runtime the random and replay strategies use.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

enum class SearchKind : std::uint8_t { brute_force, dpor };

struct ExploreStats {
  std::uint64_t executions = 0;           // complete executions explored (one per class for dpor)
  std::uint64_t blocked = 0;              // executions that ended in deadlock or livelock
  std::uint64_t redundant = 0;            // executions cut short by sleep sets (dpor)
  std::uint64_t transitions = 0;          // steps executed, over all executions
  std::uint64_t classes = 0;              // brute_force with count_classes: distinct equivalence classes
  std::uint64_t races = 0;                // dpor: races found (reversals considered)
  std::uint64_t bound_cut = 0;            // dpor with a preemption bound: alternatives it skipped
  std::uint64_t own_executions = 0;       // executions this process ran (sharded: this shard's share)
  std::uint64_t fallbacks = 0;            // dpor: reversals whose first step was not enabled (should be 0)
  std::uint64_t provisional = 0;          // dpor: provisional decs (sim/explore/dpor_relation.hpp)
  std::uint64_t provisional_incs = 0;     // dpor: provisional pending increments (the same file)
  std::uint64_t provisional_expects = 0;  // dpor: provisional expect_tx ops (the same file)
  std::uint64_t reruns = 0;               // dpor: executions run again with provisional ops as incs
  // Polls recognised as spin iterations (made from exactly the state of the thread's
  // previous failed poll) and run as waits: the search relies on the thread's state being
  // its registers and stack.
  std::uint64_t spin_iterations = 0;
  // Failed polls (and loads of a one-load loop) shown to be spin iterations by the thread's next
  // poll, and so no events: the same reliance, also where no await then ran.
  std::uint64_t spin_noops = 0;
  // Of those, polls of back-off loops (their state changed from poll to poll) merged into a
  // wait after Runtime::kBackoffExplored ordinary re-polls: an exit that depends on how many
  // more polls failed is not explored (docs/model.md).
  std::uint64_t backoff_merges = 0;
  // Arrive-ons made before any wait saw their barrier's previous phase complete that did not
  // complete their own phase (DporSearch counts them): PTX's missing-wait rule breached with
  // no wait's answer changed, which synccheck does not report either: a warning.
  std::uint64_t early_arrive_ons = 0;
  // dpor, this process: the most steps one execution ran, and the most bytes of vector
  // clocks one execution kept (shared between steps: this stays far below steps x agents).
  std::uint64_t deepest = 0;
  std::uint64_t clock_bytes = 0;
  double seconds = 0;
  bool complete = false;     // the whole space was covered (no limit cut it short, no bug stop)
  bool interrupted = false;  // stopped by request_stop() (SIGINT/SIGTERM in the CLI)
};

struct ExploreOptions {
  SearchKind kind = SearchKind::dpor;
  std::uint64_t max_executions = 0;     // 0: no limit
  double time_limit_s = 0;              // 0: no limit
  std::uint64_t max_steps = 1'000'000;  // per execution
  bool stop_at_first_bug = true;
  bool count_classes = false;  // brute_force: also count distinct equivalence classes
  int preemption_bound = -1;   // dpor: skip schedules with more preemptions (-1: none)
  // dpor: worker threads; each needs its own Program from make_program. The result is the
  // same as with one job (sibling subtrees run in parallel, their effects merge in order).
  unsigned jobs = 1;
  std::function<std::unique_ptr<Program>()> make_program;
  // dpor, sharded across processes: shard `shard_index` of `shard_count` (0-based) shares the
  // subtrees of every wave with the other shards through files in `shard_dir` (a directory
  // all shards see, empty at the start). Each subtree is computed by the shard that owns or
  // claims it, and also by any shard that is idle while it is missing (sim/explore/
  // shard_exchange.hpp); every shard ends with the full, identical result. `on_execution` does not see
  // the executions of shared subtrees (they may have run in another process).
  std::string shard_dir;
  unsigned shard_index = 0, shard_count = 1;
  // What the shard directory's files must belong to (protocol, shape, options, version): a
  // directory holding another search's results is refused (dpor::ShardError).
  std::string shard_identity;
  // Called about twice a second with the statistics so far and (dpor) an estimate of the
  // share of the search tree covered, in [0, 1].
  std::function<void(const ExploreStats&, double covered)> progress;
  // dpor: the bytes the process may use (its address-space limit; 0: not checked). Before
  // searching, one plain run of the search's first schedule measures its depth; a shape whose
  // search state alone would provably pass the budget is refused (SearchTooLarge).
  std::uint64_t memory_budget = 0;
};

// A shape too large to search exhaustively within the memory budget; the message says what
// it needs and what to do instead.
struct SearchTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A shard directory that cannot be used (another search's files, unwritable, full, a file
// that is not a result): the message names the file and what is wrong.
struct ShardError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The directory belongs to one search: the first shard writes `identity` to its search.txt,
// every other must find the same there. Throws ShardError otherwise (or when it cannot).
void claim_shard_dir(const std::string& dir, unsigned index, const std::string& identity);

struct ExploreResult {
  ExploreStats stats;
  std::optional<Outcome> bug;  // the first execution whose verdict is a bug
};

// A request to stop, from a signal handler (an atomic store: async-signal-safe): searches and
// fuzzing campaigns end at the next execution with what they have, as incomplete.
void request_stop();
bool stop_requested();
const std::atomic<bool>& stop_flag();  // what RunLimits::stop points at
// Makes one execution under `limits` stop inside itself (Outcome::cut_short) on a stop request
// or `time_limit_s` (> 0) seconds after `start`.
void stop_within(RunLimits& limits, std::chrono::steady_clock::time_point start, double time_limit_s);

// Explores `program`; `on_execution` (optional) sees every finished, non-redundant execution.
ExploreResult explore(Program& program, const ExploreOptions& options,
                      const std::function<void(const Outcome&)>& on_execution = {});

}  // namespace mbcheck::sim
