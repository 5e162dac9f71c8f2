#include "sim/fuzz.hpp"

#include "sim/explore/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/explore/strategy.hpp"

namespace mbcheck::sim {

// ---------------------------------------------------------------------------------------
// PCT

void PctStrategy::begin_execution() {
  rng_ = SplitMix64(seed_);
  priority_.clear();
  change_points_.clear();
  for (int i = 1; i < depth_; ++i) change_points_.push_back(1 + rng_.next() % std::max<std::uint64_t>(k_, 1));
  step_ = 0;
}

std::int64_t PctStrategy::priority(AgentId a) {
  if (priority_.size() <= a) priority_.resize(a + 1, 0);
  // Initial priorities are large and random; change points assign 1..d-1, below them all.
  if (priority_[a] == 0) priority_[a] = static_cast<std::int64_t>((rng_.next() >> 3) | (std::uint64_t{1} << 59));
  return priority_[a];
}

AgentId PctStrategy::choose(const Runtime& rt) {
  ++step_;
  auto highest = [&] {
    AgentId best = kNoAgent;
    std::int64_t best_p = 0;
    for (AgentId id : rt.enabled()) {
      std::int64_t p = priority(id);
      if (best == kNoAgent || p > best_p || (p == best_p && id < best)) {
        best = id;
        best_p = p;
      }
    }
    return best;
  };
  AgentId pick = highest();
  for (std::size_t i = 0; i < change_points_.size(); ++i) {
    if (change_points_[i] != step_) continue;
    priority_[pick] = static_cast<std::int64_t>(depth_) - 1 - static_cast<std::int64_t>(i);  // d-1, d-2, ..., 1
    pick = highest();
  }
  return pick;
}

// ---------------------------------------------------------------------------------------

std::uint64_t run_seed(std::uint64_t base, std::uint64_t index) {
  SplitMix64 mix(base ^ (index * 0x9e3779b97f4a7c15ull));
  return mix.next();
}

namespace {

using Clock = std::chrono::steady_clock;

// One fuzzing campaign: runs of independent seeds taken by index from a shared counter by
// every job; the lowest-index bug is the campaign's, as one job would have found it.
class FuzzCampaign {
 public:
  FuzzCampaign(const std::function<std::unique_ptr<Program>()>& make_program, const FuzzOptions& options)
      : make_program_(make_program), options_(options), start_(Clock::now()), main_program_(make_program()) {}

  FuzzResult run() {
    probe();
    run_jobs();
    rethrow_program_error();
    result_.runs = runs_.load();
    result_.transitions = transitions_.load();
    result_.step_limited_runs = step_limited_.load();
    if (!bugs_.empty())
      take_first_bug(*bugs_.begin(), true);
    else if (root_only_)
      take_first_bug(*root_only_, false);
    result_.interrupted = stop_requested();
    result_.seconds = elapsed();
    return std::move(result_);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  std::uint64_t stride() const { return std::max<std::uint64_t>(options_.shard_count, 1); }

  // Every run's limits: the step limit, and the campaign's time limit and interrupts, which
  // also stop a run in the middle (Outcome::cut_short).
  RunLimits run_limits() const {
    RunLimits limits;
    limits.max_steps = options_.max_steps;
    stop_within(limits, start_, options_.time_limit_s);
    return limits;
  }

  // A probe run measures n (agents) and k (steps) for PCT's change points and bound.
  void probe() {
    Runtime rt;
    RandomStrategy probe(run_seed(options_.seed, ~std::uint64_t{0}));
    RunLimits limits = run_limits();
    Outcome out = rt.execute(*main_program_, probe, limits);
    result_.agents = rt.agent_count();
    result_.steps_estimate = std::max<std::uint64_t>(out.steps, 1);
    if (options_.kind == FuzzKind::pct)
      result_.pct_bound = 1.0 / (static_cast<double>(result_.agents) *
                                 std::pow(static_cast<double>(result_.steps_estimate), options_.depth - 1));
  }

  // A job's share of the campaign: runs are claimed kClaim at a time and counted in the job
  // until the block is done, so that the jobs do not write the same counters at every run
  // (a cache line passed between the cores each run cost 2-3% with two jobs). Within a block
  // the runs go in index order, so every index below the first bug's is still run.
  static constexpr std::uint64_t kClaim = 16;
  struct JobShare {
    std::uint64_t next = 0, end = 0;  // claimed, not yet taken: [next, end) of this process's runs
    std::uint64_t runs = 0, transitions = 0;
  };
  void publish(JobShare& share) {
    runs_.fetch_add(share.runs);
    transitions_.fetch_add(share.transitions);
    share.runs = share.transitions = 0;
  }

  // The next run index this job should take, or none when the campaign is over for it.
  std::optional<std::uint64_t> next_run(JobShare& share) {
    if (failed_.load(std::memory_order_relaxed) || stop_requested()) return std::nullopt;
    if (share.next == share.end) {
      publish(share);
      share.next = next_.fetch_add(kClaim);
      share.end = share.next + kClaim;
    }
    // The k-th run this process takes is run index shard_index + k * shard_count.
    const std::uint64_t i = options_.shard_index + share.next++ * stride();
    if (options_.runs && i >= options_.runs) return std::nullopt;
    if (i > first_bug_.load()) return std::nullopt;  // a lower-index bug exists: later runs cannot matter
    if (options_.time_limit_s > 0 && elapsed() >= options_.time_limit_s) return std::nullopt;
    return i;
  }

  void worker(Program* program) {
    struct Active {
      std::atomic<unsigned>& n;
      explicit Active(std::atomic<unsigned>& c) : n(c) {}
      ~Active() { --n; }
    } active_guard(active_);
    Runtime rt;
    const RunLimits limits = run_limits();
    JobShare share;
    struct Published {  // however the loop ends
      FuzzCampaign& campaign;
      JobShare& share;
      ~Published() { campaign.publish(share); }
    } published{*this, share};
    while (const std::optional<std::uint64_t> index = next_run(share)) {
      const std::uint64_t i = *index;
      const std::uint64_t seed = run_seed(options_.seed, i);
      Outcome* run = nullptr;  // the runtime's, until its next execution
      try {
        if (options_.kind == FuzzKind::pct) {
          PctStrategy s(seed, options_.depth, result_.steps_estimate);
          run = &rt.execute_in_place(*program, s, limits);
        } else {
          RandomStrategy s(seed);
          run = &rt.execute_in_place(*program, s, limits);
        }
      } catch (...) {
        // A Program that cannot run (its reset() threw: ProgramError) ends the campaign: every
        // worker stops, and fuzz() rethrows the error of the lowest run index that had one (an
        // exception escaping a worker thread would std::terminate the process).
        std::lock_guard lock(mu_);
        if (i < error_run_) {
          error_run_ = i;
          error_ = std::current_exception();
        }
        failed_ = true;
        break;
      }
      Outcome& out = *run;
      if (out.cut_short) break;  // stopped inside the run: it counts for nothing
      ++share.runs;
      share.transitions += out.steps;
      if (out.verdict == Verdict::step_limit) step_limited_.fetch_add(1);  // proves nothing: not a bug
      if (is_bug(out.verdict) && out.verdict != Verdict::step_limit) {
        std::lock_guard lock(mu_);
        if (out.root_only) {  // OnMisuse::proceed, a misuse with no consequence: runs go on
          if (!root_only_ || i < root_only_->first) root_only_.emplace(i, std::move(out));
          continue;
        }
        bugs_.emplace(i, std::move(out));
        std::uint64_t cur = first_bug_.load();
        while (i < cur && !first_bug_.compare_exchange_weak(cur, i)) {}
      }
    }
  }

  void run_jobs() {
    const unsigned jobs = std::max(1u, options_.jobs);
    std::vector<std::unique_ptr<Program>> programs;
    std::vector<std::thread> threads;
    active_ = jobs;
    for (unsigned j = 1; j < jobs; ++j) {
      programs.push_back(make_program_());
      threads.emplace_back([this, p = programs.back().get()] { worker(p); });
    }
    if (options_.progress) {
      // Every job runs on a thread of its own; this thread reports progress until they end.
      programs.push_back(make_program_());
      threads.emplace_back([this, p = programs.back().get()] { worker(p); });
      auto last = Clock::now();
      while (active_.load() > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (std::chrono::duration<double>(Clock::now() - last).count() >= 0.5) {
          last = Clock::now();
          options_.progress(runs_.load(), transitions_.load(), elapsed());
        }
      }
    } else {
      worker(main_program_.get());
    }
    for (auto& t : threads) t.join();
  }

  void rethrow_program_error() const {
    if (!error_) return;
    try {
      std::rethrow_exception(error_);
    } catch (const ProgramError& e) {
      throw ProgramError(
          fmt::format("fuzz run {} (seed {}): {}", error_run_, run_seed(options_.seed, error_run_), e.what()));
    }
  }

  void take_first_bug(const std::pair<const std::uint64_t, Outcome>& bug, bool stopped) {
    // With several jobs, runs above the first bug may have run too: the result is the same
    // as one job's, which stops at the first bug (not at a misuse alone: OnMisuse::proceed).
    const auto& [index, outcome] = bug;
    if (stopped) result_.runs = std::min<std::uint64_t>(result_.runs, (index - options_.shard_index) / stride() + 1);
    result_.bug_run = index;
    result_.verdict = CheckVerdict::bug;
    result_.original_preemptions = count_preemptions(*main_program_, outcome.schedule);
    // Shrinking stays inside the time limit (what is left of it), else its own 6 s.
    const double left = options_.time_limit_s > 0 ? options_.time_limit_s - elapsed() : 6.0;
    if (options_.shrink && left > 0.01 && !stop_requested()) {
      result_.counterexample =
          shrink(*main_program_, outcome, options_.timeline_lines, &result_.shrunk_preemptions, std::min(left, 6.0));
      result_.original = make_counterexample(*main_program_, outcome, options_.timeline_lines);
    } else {
      result_.shrink_cut = options_.shrink;
      result_.counterexample = make_counterexample(*main_program_, outcome, options_.timeline_lines);
      result_.shrunk_preemptions = result_.original_preemptions;
    }
  }

  const std::function<std::unique_ptr<Program>()>& make_program_;
  const FuzzOptions& options_;
  const Clock::time_point start_;
  std::unique_ptr<Program> main_program_;
  FuzzResult result_;
  std::atomic<std::uint64_t> next_{0}, runs_{0}, transitions_{0}, step_limited_{0};
  std::atomic<std::uint64_t> first_bug_{~std::uint64_t{0}};
  std::mutex mu_;
  std::map<std::uint64_t, Outcome> bugs_;
  std::optional<std::pair<const std::uint64_t, Outcome>> root_only_;  // the lowest run's
  std::atomic<unsigned> active_{0};
  std::atomic<bool> failed_{false};
  std::uint64_t error_run_ = ~std::uint64_t{0};
  std::exception_ptr error_;
};

}  // namespace

FuzzResult fuzz(const std::function<std::unique_ptr<Program>()>& make_program, const FuzzOptions& options) {
  FuzzCampaign campaign(make_program, options);
  return campaign.run();
}

}  // namespace mbcheck::sim
