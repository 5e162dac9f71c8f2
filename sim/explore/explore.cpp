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
bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }

using namespace dpor;

ExploreResult explore(Program& program, const ExploreOptions& options,
                      const std::function<void(const Outcome&)>& on_execution) {
  ExploreResult result;
  Runtime rt;
  RunLimits limits;
  limits.max_steps = options.max_steps;
  const auto start = Clock::now();
  BruteForceStrategy brute;
  DporSearch dpor;
  dpor.bound = options.preemption_bound;
  DporSearch classifier;  // brute force: only its events and clocks, no search state
  std::unordered_set<std::string> classes;
  auto last_progress = start;
  if (options.kind == SearchKind::dpor) refuse_if_too_large(program, rt, limits, options);
  const bool sharded = options.kind == SearchKind::dpor && options.shard_count > 1;
  const bool parallel = options.kind == SearchKind::dpor && options.max_executions == 0 &&
                        (sharded || (options.jobs > 1 && options.make_program));
  std::unique_ptr<WavePool> pool;
  if (parallel && !sharded) pool = std::make_unique<WavePool>(options.jobs - 1, options.make_program);
  std::unique_ptr<ShardExchange> exchange;
  if (sharded)
    exchange = std::make_unique<ShardExchange>(options.shard_dir, options.shard_index, options.shard_count,
                                               options.shard_identity, options.shard_stale_s);
  // A time limit or a stop request: asked after every execution, in every worker.
  auto out_of_time = [&] {
    return stop_requested() || (options.time_limit_s > 0 && seconds_since(start) >= options.time_limit_s);
  };
  auto account = [&](const Outcome& out) {  // one finished execution; true: stop here
    result.stats.transitions += out.steps;
    if (out.verdict != Verdict::pruned) ++result.stats.own_executions;
    if (out.verdict == Verdict::pruned) {
      ++result.stats.redundant;
      return false;
    }
    ++result.stats.executions;
    if (out.verdict == Verdict::deadlock || out.verdict == Verdict::livelock) ++result.stats.blocked;
    if (on_execution) on_execution(out);
    if (is_bug(out.verdict) && !result.bug) {
      result.bug = out;
      return options.stop_at_first_bug;
    }
    return false;
  };
  // Runs every pending alternative of the deepest node as one wave, in parallel; merges in
  // the order one search would have explored them. Returns true when a bug stops the search.
  bool cut_short = false;  // a wave ended with a subtree unfinished
  auto run_wave = [&]() {
    DporNode& n = dpor.nodes.back();
    std::vector<WaveItem> items;
    AgentSet done = n.done;  // as when n.chosen's exploration begins
    auto add_item = [&](AgentId q) {
      items.emplace_back();
      items.back().alternative = q;
      items.back().done = done;
    };
    add_item(n.chosen);
    done.push_back(n.chosen);
    for (AgentId q : n.backtrack) {
      if (contains(done, q) || contains(n.sleep, q)) continue;
      if (dpor.bound >= 0 && n.preemptions_with(q) > dpor.bound) {
        done.push_back(q);
        ++dpor.bound_cut;
        continue;
      }
      add_item(q);
      done.push_back(q);
    }
    std::vector<WaveResult> results(items.size());
    const NodeStack prefix = dpor.nodes;
    const bool keep = static_cast<bool>(on_execution);
    bool whole = true;
    if (exchange) {
      whole = exchange->run(
          items.size(),
          [&](std::size_t i) { return run_subtree(program, rt, prefix, items[i], options, false, out_of_time); },
          out_of_time, results, &result.stats.own_executions);
    } else {
      pool->run(items.size(), program, rt, [&](Program& p, Runtime& r, std::size_t i) {
        results[i] = run_subtree(p, r, prefix, items[i], options, keep, out_of_time);
      });
      for (const WaveResult& w : results) whole &= !w.interrupted;
    }
    n.done = done;
    n.chosen = items.back().alternative;
    for (WaveResult& w : results) {
      if (!exchange) result.stats.own_executions += w.stats.executions;  // this process ran them
      result.stats.transitions += w.stats.transitions;
      result.stats.executions += w.stats.executions;
      result.stats.redundant += w.stats.redundant;
      result.stats.blocked += w.stats.blocked;
      dpor.races += w.stats.races;
      dpor.bound_cut += w.stats.bound_cut;
      dpor.fallbacks += w.stats.fallbacks;
      dpor.spin_iterations += w.stats.spin_iterations;
      dpor.deepest = std::max(dpor.deepest, w.stats.deepest);
      dpor.clock_bytes = std::max(dpor.clock_bytes, w.stats.clock_bytes);
      if (on_execution)
        for (const Outcome& o : w.outcomes) on_execution(o);
      for (const auto& d : w.deferred) dpor.apply(d);
      if (w.bug && !result.bug) {
        result.bug = std::move(w.bug);
        if (w.stopped) return true;  // one search would not have gone past this subtree
      }
    }
    if (!whole) {
      cut_short = true;  // some subtree is not done: the search is incomplete
      return true;
    }
    return false;
  };
  auto pending_here = [&] {
    const DporNode& n = dpor.nodes.back();
    std::size_t count = 0;
    for (AgentId q : n.backtrack)
      if (!contains(n.done, q) && !contains(n.sleep, q) && (dpor.bound < 0 || n.preemptions_with(q) <= dpor.bound))
        ++count;
    return count;
  };
  bool stopped = false;
  for (;;) {
    if (out_of_time()) break;
    if (options.progress && std::chrono::duration<double>(Clock::now() - last_progress).count() >= 0.5) {
      last_progress = Clock::now();
      result.stats.seconds = seconds_since(start);
      options.progress(result.stats, options.kind == SearchKind::dpor ? dpor.covered() : 0.0);
    }
    Outcome out = options.kind == SearchKind::dpor
                      ? rt.execute(program, dpor, limits, &dpor)
                      : rt.execute(program, brute, limits, options.count_classes ? &classifier : nullptr);
    explain_divergence(out);
    if (options.kind == SearchKind::brute_force && options.count_classes && out.verdict != Verdict::pruned) {
      classes.insert(classifier.trace_key() + to_string(out.verdict));
      classifier.begin_execution();
    }
    if (account(out)) {
      stopped = true;
      break;
    }
    bool more = options.kind == SearchKind::dpor ? dpor.advance() : brute.advance();
    // In parallel, a node with several alternatives left runs them as a wave. (Sharded, the
    // stretches in between run in every shard: handing single alternatives out too would give
    // the whole rest of the search to whichever shard claims the first one.)
    while (parallel && more && pending_here() >= 2) {
      if (run_wave()) {
        stopped = true;
        break;
      }
      more = dpor.advance();
      if (out_of_time()) break;
    }
    if (stopped) break;
    if (!more) {
      result.stats.complete = (!result.bug || !options.stop_at_first_bug) && dpor.bound_cut == 0;
      break;
    }
    if (options.max_executions && result.stats.executions >= options.max_executions) break;
  }
  if (cut_short) result.stats.complete = false;
  result.stats.interrupted = stop_requested();
  result.stats.seconds = seconds_since(start);
  result.stats.classes = classes.size();
  take_search_figures(dpor, result.stats);
  return result;
}

}  // namespace mbcheck::sim
