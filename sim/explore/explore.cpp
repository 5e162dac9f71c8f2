// The exhaustive search's driver: brute force (every interleaving: the small-shape reference
// the DPOR's counts are checked against) and DPOR (sim/explore/dpor.hpp), run as one search, as waves
// on worker threads, or sharded between processes (sim/explore/waves.hpp).
#include "sim/explore/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_set>

#include <unistd.h>

#include "sim/explore/dpor.hpp"
#include "sim/explore/waves.hpp"
#include "sim/explore/shard_exchange.hpp"
#include "sim/explore/strategy.hpp"

namespace mbcheck::sim {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// ---------------------------------------------------------------------------------------
// brute force: every enabled agent at every step, in agent-id order

class BruteForceStrategy final : public Strategy {
 public:
  struct Node {
    std::vector<AgentId> enabled;  // sorted
    std::size_t choice = 0;
  };
  std::vector<Node> nodes;

  void begin_execution() override { depth_ = 0; }
  AgentId choose(const Runtime& rt) override {
    if (depth_ == nodes.size()) {
      Node n{rt.enabled(), 0};
      std::sort(n.enabled.begin(), n.enabled.end());
      nodes.push_back(std::move(n));
    }
    const Node& n = nodes[depth_++];
    return n.enabled[n.choice];
  }
  // Moves to the next schedule; false when all were run.
  bool advance() {
    while (!nodes.empty() && nodes.back().choice + 1 >= nodes.back().enabled.size()) nodes.pop_back();
    if (nodes.empty()) return false;
    ++nodes.back().choice;
    return true;
  }

 private:
  std::size_t depth_ = 0;
};

std::atomic<bool> g_stop{false};

// What the search keeps at the least for each step of its deepest execution: a node of its
// stack and an event (their clocks come on top, shared between steps: sim/explore/dpor_relation.hpp).
constexpr std::uint64_t kSearchBytesPerStep = sizeof(dpor::DporNode) + sizeof(dpor::Event);

std::uint64_t address_space_in_use() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long pages = 0;
  const bool ok = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  return ok ? pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

// Before a search that may run deeper than the memory budget can hold: one plain run of the
// search's first schedule (about a fifth of what that execution costs under the search, and
// memory for the protocol's state only), stopped once it is longer than the budget allows.
// Its depth times what the search keeps per step, on top of what the run itself took (the
// threads' stacks and guard pages count against the address-space limit), is a lower bound of
// what the search needs: a shape refused here would have run out of memory.
void refuse_if_too_large(Program& program, Runtime& rt, const RunLimits& limits, const ExploreOptions& options) {
  const std::uint64_t budget = options.memory_budget;
  const std::uint64_t before = address_space_in_use();
  if (budget == 0 || before >= budget) return;
  const std::uint64_t most_steps = (budget - before) / kSearchBytesPerStep;
  if (limits.max_steps <= most_steps) return;  // the step limit keeps every execution within it
  RunLimits probe = limits;
  probe.max_steps = most_steps;
  FirstScheduleStrategy first;
  const Outcome out = rt.execute(program, first, probe, nullptr);
  const std::uint64_t after = std::max(before, address_space_in_use());
  const bool too_deep = out.verdict == Verdict::step_limit;
  const std::uint64_t need = after + (too_deep ? most_steps : out.steps) * kSearchBytesPerStep;
  if (!too_deep && need <= budget) return;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  throw SearchTooLarge(fmt::format(
      "this shape is too large to search exhaustively within --memory-limit {:.2f} GiB: its first execution "
      "runs {}{} steps, the search keeps at least {} bytes for each step of an execution, and the run itself "
      "takes {:.2f} GiB of address space (the threads' stacks and their guard pages), so it needs {}{:.2f} GiB. "
      "Check a smaller shape, fuzz this one (--strategy pct or random keep nothing per step), bound the depth "
      "with --max-steps, or raise --memory-limit",
      static_cast<double>(budget) / kGiB, too_deep ? "more than " : "", too_deep ? most_steps : out.steps,
      kSearchBytesPerStep, static_cast<double>(after) / kGiB, too_deep ? "more than " : "at least ",
      static_cast<double>(need) / kGiB));
}

}  // namespace

void request_stop() { g_stop.store(true); }
const std::atomic<bool>& stop_flag() { return g_stop; }
bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }
void stop_within(RunLimits& limits, std::chrono::steady_clock::time_point start, double time_limit_s) {
  limits.stop = &stop_flag();
  if (time_limit_s > 0)
    limits.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(time_limit_s));
}

using namespace dpor;

namespace {

// One exhaustive search: its strategies, its parallel machinery and its result. explore()
// runs executions until the strategy has none left; a node with several alternatives left runs
// them as one wave when the search is parallel.
class Exploration {
 public:
  Exploration(Program& program, const ExploreOptions& options, const std::function<void(const Outcome&)>& on_execution)
      : program_(program), options_(options), on_execution_(on_execution), start_(Clock::now()) {
    limits_.max_steps = options.max_steps;
    stop_within(limits_, start_, options.time_limit_s);
    dpor_.bound = options.preemption_bound;
    sharded_ = options.kind == SearchKind::dpor && options.shard_count > 1;
    parallel_ = options.kind == SearchKind::dpor && options.max_executions == 0 &&
                (sharded_ || (options.jobs > 1 && options.make_program));
  }

  ExploreResult run();

 private:
  bool out_of_time() const {  // asked after every execution, in every worker
    return stop_requested() || (options_.time_limit_s > 0 && seconds_since(start_) >= options_.time_limit_s);
  }
  bool account(const Outcome& out);  // one finished execution; true: stop here
  bool run_wave();                   // true when a bug or an unfinished subtree stops the search
  bool merge(std::vector<WaveResult>& results);
  std::size_t pending_here() const;
  void report_progress();

  Program& program_;
  const ExploreOptions& options_;
  const std::function<void(const Outcome&)>& on_execution_;
  const Clock::time_point start_;
  Clock::time_point last_progress_ = start_;
  ExploreResult result_;
  Runtime rt_;
  RunLimits limits_;
  BruteForceStrategy brute_;
  DporSearch dpor_;
  DporSearch classifier_;  // brute force: only its events and clocks, no search state
  std::unordered_set<std::string> classes_;
  bool sharded_ = false;
  bool parallel_ = false;
  bool cut_short_ = false;  // a wave ended with a subtree unfinished
  std::unique_ptr<WavePool> pool_;
  std::unique_ptr<ShardExchange> exchange_;
};

bool Exploration::account(const Outcome& out) {
  result_.stats.transitions += out.steps;
  if (out.verdict != Verdict::pruned) ++result_.stats.own_executions;
  if (out.verdict == Verdict::pruned) {
    ++result_.stats.redundant;
    return false;
  }
  ++result_.stats.executions;
  if (out.verdict == Verdict::deadlock || out.verdict == Verdict::livelock) ++result_.stats.blocked;
  if (on_execution_) on_execution_(out);
  // The first bug, or under OnMisuse::proceed the first with a consequence over a misuse alone.
  if (is_bug(out.verdict) && (!result_.bug || (result_.bug->root_only && !out.root_only))) {
    result_.bug = out;
    return options_.stop_at_first_bug && !out.root_only;
  }
  return false;
}

// Runs every pending alternative of the deepest node as one wave, in parallel; merges in the
// order one search would have explored them.
bool Exploration::run_wave() {
  DporNode& n = dpor_.nodes.back();
  std::vector<WaveItem> items;
  AgentSet done = n.done;  // as when n.chosen's exploration begins
  auto add_item = [&](AgentId q) {
    items.emplace_back();
    items.back().alternative = q;
    items.back().done = done;
    done.push_back(q);
  };
  add_item(n.chosen);
  for (AgentId q : n.backtrack) {
    if (contains(done, q) || contains(n.sleep, q)) continue;
    if (dpor_.bound >= 0 && n.preemptions_with(q) > dpor_.bound) {
      done.push_back(q);
      ++dpor_.bound_cut;
      continue;
    }
    add_item(q);
  }
  std::vector<WaveResult> results(items.size());
  const NodeStack prefix = dpor_.nodes;
  const bool keep = static_cast<bool>(on_execution_);
  const auto stop = [this] { return out_of_time(); };
  bool whole = true;
  if (exchange_) {
    whole = exchange_->run(
        items.size(),
        [&](std::size_t i, const std::function<bool()>& until) {
          return run_subtree(program_, rt_, prefix, items[i], options_, false, until);
        },
        stop, results, &result_.stats.own_executions);
  } else {
    pool_->run(items.size(), program_, rt_, [&](Program& p, Runtime& r, std::size_t i) {
      results[i] = run_subtree(p, r, prefix, items[i], options_, keep, stop);
    });
    for (const WaveResult& w : results) whole &= !w.interrupted;
  }
  n.done = done;
  n.chosen = items.back().alternative;
  if (merge(results)) return true;
  if (!whole) {
    cut_short_ = true;  // some subtree is not done: the search is incomplete
    return true;
  }
  return false;
}

// Adds a wave's results in the order one search would have met them; true when a bug found
// in a subtree stops the search there.
bool Exploration::merge(std::vector<WaveResult>& results) {
  for (WaveResult& w : results) {
    if (!exchange_) result_.stats.own_executions += w.stats.executions;  // this process ran them
    result_.stats.transitions += w.stats.transitions;
    result_.stats.executions += w.stats.executions;
    result_.stats.redundant += w.stats.redundant;
    result_.stats.blocked += w.stats.blocked;
    dpor_.races += w.stats.races;
    dpor_.bound_cut += w.stats.bound_cut;
    dpor_.fallbacks += w.stats.fallbacks;
    dpor_.reruns += w.stats.reruns;
    dpor_.provisional += w.stats.provisional;
    dpor_.provisional_incs += w.stats.provisional_incs;
    dpor_.provisional_expects += w.stats.provisional_expects;
    dpor_.spin_iterations += w.stats.spin_iterations;
    dpor_.spin_noops += w.stats.spin_noops;
    dpor_.backoff_merges += w.stats.backoff_merges;
    dpor_.early_arrive_ons += w.stats.early_arrive_ons;
    dpor_.deepest = std::max(dpor_.deepest, w.stats.deepest);
    dpor_.clock_bytes = std::max(dpor_.clock_bytes, w.stats.clock_bytes);
    if (on_execution_)
      for (const Outcome& o : w.outcomes) on_execution_(o);
    for (const auto& d : w.deferred) dpor_.apply(d);
    if (w.bug && (!result_.bug || (result_.bug->root_only && !w.bug->root_only))) {
      result_.bug = std::move(w.bug);
      if (w.stopped) return true;  // one search would not have gone past this subtree
    }
  }
  return false;
}

std::size_t Exploration::pending_here() const {
  const DporNode& n = dpor_.nodes.back();
  std::size_t count = 0;
  for (AgentId q : n.backtrack)
    if (!contains(n.done, q) && !contains(n.sleep, q) && (dpor_.bound < 0 || n.preemptions_with(q) <= dpor_.bound))
      ++count;
  return count;
}

void Exploration::report_progress() {
  if (!options_.progress || std::chrono::duration<double>(Clock::now() - last_progress_).count() < 0.5) return;
  last_progress_ = Clock::now();
  result_.stats.seconds = seconds_since(start_);
  options_.progress(result_.stats, options_.kind == SearchKind::dpor ? dpor_.covered() : 0.0);
}

ExploreResult Exploration::run() {
  const bool is_dpor = options_.kind == SearchKind::dpor;
  if (is_dpor) refuse_if_too_large(program_, rt_, limits_, options_);
  if (parallel_ && !sharded_) pool_ = std::make_unique<WavePool>(options_.jobs - 1, options_.make_program);
  if (sharded_)
    exchange_ = std::make_unique<ShardExchange>(options_.shard_dir, options_.shard_index, options_.shard_count,
                                                options_.shard_identity);
  Outcome held;  // (execute_observed's: the outcome is the runtime's, not copied per execution)
  while (!out_of_time()) {
    report_progress();
    Outcome& out = is_dpor                  ? execute_observed(rt_, program_, dpor_, limits_, dpor_, held)
                   : options_.count_classes ? execute_observed(rt_, program_, brute_, limits_, classifier_, held)
                                            : rt_.execute_in_place(program_, brute_, limits_, nullptr);
    if (out.cut_short) {  // the time limit or an interrupt inside the execution: nothing to account
      cut_short_ = true;
      break;
    }
    explain_divergence(out);
    if (!is_dpor && options_.count_classes && out.verdict != Verdict::pruned) {
      classes_.insert(classifier_.trace_key() + to_string(out.verdict));
      classifier_.begin_execution();
    }
    if (account(out)) break;
    bool more = is_dpor ? dpor_.advance() : brute_.advance();
    // In parallel, a node with several alternatives left runs them as a wave. (Sharded, the
    // stretches in between run in every shard: handing single alternatives out too would give
    // the whole rest of the search to whichever shard claims the first one.)
    bool stopped = false;
    // A layer that follows the running CTA with process-wide state (the CUTLASS host layer's
    // shared-memory window) sees one OS thread's executions: the waves run here, one by one
    // (the same executions, in the same order).
    if (parallel_ && !sharded_ && Runtime::cta_hook_set_once()) {
      parallel_ = false;
      std::fprintf(stderr,
                   "mbcheck: --jobs %u: this program's plain shared-memory accesses reach the running CTA through a "
                   "process-wide window, so its executions run on one thread\n",
                   options_.jobs);
    }
    while (parallel_ && more && pending_here() >= 2 && !stopped) {
      stopped = run_wave();
      if (!stopped) more = dpor_.advance();
      if (out_of_time()) break;
    }
    if (stopped) break;
    if (!more) {
      result_.stats.complete =
          (!result_.bug || !options_.stop_at_first_bug || result_.bug->root_only) && dpor_.bound_cut == 0;
      break;
    }
    if (options_.max_executions && result_.stats.executions >= options_.max_executions) break;
  }
  if (cut_short_) result_.stats.complete = false;
  result_.stats.interrupted = stop_requested();
  result_.stats.seconds = seconds_since(start_);
  result_.stats.classes = classes_.size();
  take_search_figures(dpor_, result_.stats);
  return result_;
}

}  // namespace

ExploreResult explore(Program& program, const ExploreOptions& options,
                      const std::function<void(const Outcome&)>& on_execution) {
  Exploration search(program, options, on_execution);
  return search.run();
}

}  // namespace mbcheck::sim
