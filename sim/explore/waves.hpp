// Parallel exhaustive search: the subtrees of one DPOR node ("a wave") run on worker threads
// (or in shard processes: sim/explore/shard_exchange.hpp); their effects merge in the order one
// search would have produced them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/explore/dpor.hpp"
#include "sim/explore/explore.hpp"

#include <nlohmann/json.hpp>

namespace mbcheck::sim::dpor {

// One subtree of a wave: below node `d` of `prefix`, alternative `alternative`, with `done`
// the alternatives explored before it at that node (they make its sleep set).
struct WaveItem {
  AgentId alternative;
  AgentSet done;
};

struct WaveResult {
  ExploreStats stats;
  std::vector<DporSearch::Deferred> deferred;
  std::optional<Outcome> bug;
  std::vector<Outcome> outcomes;  // only when someone wants to see every execution
  bool stopped = false;           // it stopped at its bug
  bool interrupted = false;       // a time limit or a stop request cut it short
};

// The search's own figures into `stats` (ends the search: the last execution's count too).
inline void take_search_figures(DporSearch& dpor, ExploreStats& stats) {
  stats.races = dpor.races;
  stats.bound_cut = dpor.bound_cut;
  stats.fallbacks = dpor.fallbacks;
  stats.reruns = dpor.reruns;
  stats.provisional = dpor.provisional;
  stats.provisional_incs = dpor.provisional_incs;
  stats.provisional_expects = dpor.provisional_expects;
  stats.spin_iterations = dpor.spin_iterations;
  stats.spin_noops = dpor.spin_noops;
  stats.backoff_merges = dpor.backoff_merges;
  stats.early_arrive_ons = dpor.early_arrive_ons;
  dpor.end_search();
  stats.deepest = dpor.deepest;
  stats.clock_bytes = dpor.clock_bytes;
}

// `stop` is asked after every execution (a time limit, an interrupt).
inline WaveResult run_subtree(Program& program, Runtime& rt, const NodeStack& prefix, const WaveItem& item,
                              const ExploreOptions& options, bool keep_outcomes, const std::function<bool()>& stop) {
  DporSearch local;
  local.bound = options.preemption_bound;
  local.nodes = prefix;
  local.nodes.back().chosen = item.alternative;
  local.nodes.back().done = item.done;
  local.floor = prefix.size();
  RunLimits limits;
  limits.max_steps = options.max_steps;
  WaveResult res;
  Outcome held;
  for (;;) {
    Outcome& out = execute_observed(rt, program, local, limits, local, held);
    explain_divergence(out);
    res.stats.transitions += out.steps;
    if (out.verdict == Verdict::pruned) {
      ++res.stats.redundant;
    } else {
      ++res.stats.executions;
      if (out.verdict == Verdict::deadlock || out.verdict == Verdict::livelock) ++res.stats.blocked;
      const bool bug = is_bug(out.verdict) && (!res.bug || (res.bug->root_only && !out.root_only));
      if (keep_outcomes) res.outcomes.push_back(out);
      if (bug) {
        res.bug = std::move(out);
        if (options.stop_at_first_bug && !res.bug->root_only) {
          res.stopped = true;
          break;
        }
      }
    }
    if (!local.advance()) break;
    if (stop()) {
      res.interrupted = true;
      break;
    }
  }
  take_search_figures(local, res.stats);
  res.deferred = std::move(local.deferred);
  return res;
}

// Worker threads, each with its own Program and Runtime, that run the items of one wave.
class WavePool {
 public:
  WavePool(unsigned threads, const std::function<std::unique_ptr<Program>()>& make_program) {
    for (unsigned i = 0; i < threads; ++i) programs_.push_back(make_program());
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this, i] { work(*programs_[i]); });
  }
  ~WavePool() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs fn(program, runtime, i) for every i < n on the workers and the calling thread.
  void run(std::size_t n, Program& own_program, Runtime& own_runtime,
           const std::function<void(Program&, Runtime&, std::size_t)>& fn) {
    {
      std::lock_guard lock(mu_);
      fn_ = &fn;
      n_ = n;
      next_ = 0;
      busy_ = threads_.size();
      ++generation_;
    }
    wake_.notify_all();
    guarded([&](std::size_t i) { fn(own_program, own_runtime, i); }, n);
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return busy_ == 0; });
    // An exception in any worker (Program::reset() throwing, say) ends the wave and reaches
    // the caller once every worker has stopped.
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void work(Program& program) {
    Runtime rt;
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(Program&, Runtime&, std::size_t)>* fn;
      std::size_t n;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
        fn = fn_;
        n = n_;
      }
      guarded([&](std::size_t i) { (*fn)(program, rt, i); }, n);
      std::lock_guard lock(mu_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  // Runs the items it takes until none is left; the first exception stops the others.
  template <class F>
  void guarded(F&& item, std::size_t n) {
    for (std::size_t i; (i = next_.fetch_add(1)) < n;) {
      try {
        item(i);
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
        next_ = n;
      }
    }
  }

  std::exception_ptr error_;
  std::vector<std::unique_ptr<Program>> programs_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(Program&, Runtime&, std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::size_t busy_ = 0;
  std::uint64_t generation_ = 0;
  bool quit_ = false;
};

}  // namespace mbcheck::sim::dpor
