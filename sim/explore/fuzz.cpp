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
// Replays a schedule and counts its preemptions: switches away from an agent that could
// have gone on.
class CountingReplay final : public Strategy {
 public:
  explicit CountingReplay(const std::vector<AgentId>& s) : replay_(s) {}
  void begin_execution() override { replay_.begin_execution(); }
  AgentId choose(const Runtime& rt) override {
    AgentId pick = replay_.choose(rt);
    AgentId last = rt.last_agent();
    if (last != kNoAgent && pick != last && pick < rt.agent_count() && rt.agent(last).enabled_pos != ~0u) ++preemptions;
    return pick;
  }
  int preemptions = 0;

 private:
  ReplayStrategy replay_;
};
}  // namespace

namespace {
// The failing schedule's first `prefix` steps, then no preemption at all: the agent that ran
// last goes on while it can, else the lowest enabled one (FirstScheduleStrategy).
class PrefixThenSequential final : public Strategy {
 public:
  PrefixThenSequential(const std::vector<AgentId>& schedule, std::size_t prefix)
      : schedule_(schedule), prefix_(prefix) {}
  void begin_execution() override { pos_ = 0; }
  AgentId choose(const Runtime& rt) override {
    if (pos_ < prefix_) return schedule_[pos_++];
    return sequential_.choose(rt);
  }

 private:
  const std::vector<AgentId>& schedule_;
  std::size_t prefix_, pos_ = 0;
  FirstScheduleStrategy sequential_;
};

// The shortest prefix of the failing schedule (tried at 0, 1, 2, 4, ... steps: a few dozen
// executions however long the run) after which a schedule without preemptions still ends in
// a bug of the same kind; its outcome, if any such prefix has fewer preemptions.
std::optional<Outcome> shrink_by_prefix(Program& program, const Outcome& failing, int original, double budget_s) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = failing.schedule.size();
  for (std::size_t prefix = 0;; prefix = prefix == 0 ? 1 : std::min(n, prefix * 2)) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget_s || stop_requested())
      return std::nullopt;
    Runtime rt;
    PrefixThenSequential strategy(failing.schedule, prefix);
    RunLimits limits;
    limits.max_steps = std::max<std::uint64_t>(failing.steps * 4, 1000);  // a sequential tail may loop longer
    Outcome out = rt.execute(program, strategy, limits);
    if (out.verdict == failing.verdict && count_preemptions(program, out.schedule) < original) return out;
    if (prefix >= n) return std::nullopt;
  }
}
}  // namespace

int count_preemptions(Program& program, const std::vector<AgentId>& schedule) {
  Runtime rt;
  CountingReplay counter(schedule);
  RunLimits limits;
  limits.max_steps = schedule.size();
  rt.execute(program, counter, limits);
  return counter.preemptions;
}

Counterexample shrink(Program& program, const Outcome& failing, std::size_t timeline_lines, int* preemptions_out,
                      double budget_s) {
  const auto start = std::chrono::steady_clock::now();
  const int original = count_preemptions(program, failing.schedule);
  // First a prefix of the failing run with a preemption-free tail (cheap; it also makes the
  // token short: long runs of one agent encode in a few bytes); then fewer preemptions still
  // by bounded search, for a bug within 4 of them.
  std::optional<Outcome> shortened;
  if (original > 0) shortened = shrink_by_prefix(program, failing, original, budget_s / 3);
  const int best = shortened ? count_preemptions(program, shortened->schedule) : original;
  // Iterative context bounding, for a bug of the same kind; a shrinker, not a proof: it
  // spends at most about 6 s in all, and bounds above 4 are not tried.
  for (int bound = 0; bound < std::min(best, 5); ++bound) {
    const double left = budget_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left <= 0.01 || stop_requested()) break;
    ExploreOptions o;
    o.preemption_bound = bound;
    o.max_executions = 1000;
    o.time_limit_s = std::min(1.2, left);
    o.stop_at_first_bug = false;  // a bug of another kind must not end the search
    std::optional<Outcome> same_kind;
    explore(program, o, [&](const Outcome& out) {
      if (!same_kind && out.verdict == failing.verdict) same_kind = out;
    });
    if (same_kind) {
      if (preemptions_out) *preemptions_out = count_preemptions(program, same_kind->schedule);
      return make_counterexample(program, *same_kind, timeline_lines);
    }
  }
  if (preemptions_out) *preemptions_out = best;
  return make_counterexample(program, shortened ? *shortened : failing, timeline_lines);
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
    if (!bugs_.empty()) take_first_bug();
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
    limits.stop = &stop_flag();
    if (options_.time_limit_s > 0)
      limits.deadline =
          start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.time_limit_s));
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

  // The next run index this job should take, or none when the campaign is over for it.
  std::optional<std::uint64_t> next_run() {
    if (failed_.load() || stop_requested()) return std::nullopt;
    // The k-th run this process takes is run index shard_index + k * shard_count.
    const std::uint64_t i = options_.shard_index + next_.fetch_add(1) * stride();
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
    while (const std::optional<std::uint64_t> index = next_run()) {
      const std::uint64_t i = *index;
      const std::uint64_t seed = run_seed(options_.seed, i);
      Outcome out;
      try {
        if (options_.kind == FuzzKind::pct) {
          PctStrategy s(seed, options_.depth, result_.steps_estimate);
          out = rt.execute(*program, s, limits);
        } else {
          RandomStrategy s(seed);
          out = rt.execute(*program, s, limits);
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
      if (out.cut_short) break;  // stopped inside the run: it counts for nothing
      runs_.fetch_add(1);
      transitions_.fetch_add(out.steps);
      if (out.verdict == Verdict::step_limit) step_limited_.fetch_add(1);  // proves nothing: not a bug
      if (is_bug(out.verdict) && out.verdict != Verdict::step_limit) {
        std::lock_guard lock(mu_);
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

  void take_first_bug() {
    // With several jobs, runs above the first bug may have run too: the result is the same
    // as one job's, which stops at the first bug.
    const auto& [index, outcome] = *bugs_.begin();
    result_.runs = std::min<std::uint64_t>(result_.runs, (index - options_.shard_index) / stride() + 1);
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
