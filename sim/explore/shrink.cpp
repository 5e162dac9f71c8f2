// Shrinking a failing schedule: fewer preemptions for a bug of the same kind, so that the
// counterexample is easier to read and its token short (long runs of one agent encode in a
// few bytes). Three passes, cheapest first, within one time budget:
//   1. a prefix of the failing run with a preemption-free tail (a few dozen executions);
//   2. preemptions dropped in ever smaller groups (delta debugging) from a relaxed replay of
//      the failing run, which keeps its order wherever a dropped preemption allows;
//   3. iterative context bounding (bounded search) for a bug within 4 preemptions.
// A shrinker, not a proof: whatever it returns replays to a bug of the failing run's kind.
#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "sim/explore/explore.hpp"
#include "sim/explore/strategy.hpp"
#include "sim/fuzz.hpp"

namespace mbcheck::sim {

namespace {
// Replays a schedule and counts its preemptions: switches away from an agent that could
// have gone on.
class CountingReplay final : public Strategy {
 public:
  explicit CountingReplay(const std::vector<AgentId>& s) : replay_(s) {}
  void begin_execution() override {
    replay_.begin_execution();
    preemptions = 0;
  }
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

namespace {
bool enabled(const Runtime& rt, AgentId id) { return id < rt.agent_count() && rt.agent(id).enabled_pos != ~0u; }

// Replays `schedule` loosely: each step takes the earliest unused entry whose agent is
// enabled, so that the run keeps the failing run's order where it still can. Points are
// numbered as they come: at the n-th point where that would preempt the agent that ran last
// (still enabled), the preemption is dropped if n is in `drop` (the last agent goes on,
// taking its own earliest unused entry); at the n-th switch the last agent cannot go on
// (blocked, finished), the lowest enabled agent is taken instead if n is in `canonical`
// (FirstScheduleStrategy's choice: such schedules encode in far fewer bytes). Counts the
// preemptions the run makes.
struct PointWindow {
  std::size_t from = 0, to = 0;  // [from, to)
  bool holds(std::size_t n) const { return n >= from && n < to; }
};

class RelaxedReplay final : public Strategy {
 public:
  RelaxedReplay(const std::vector<AgentId>& schedule, PointWindow drop, PointWindow canonical)
      : schedule_(schedule), drop_(drop), canonical_(canonical) {}
  void begin_execution() override {
    used_.assign(schedule_.size(), 0);
    head_ = 0;
    preemption_points_ = switch_points_ = 0;
    preemptions = 0;
  }
  AgentId choose(const Runtime& rt) override {
    while (head_ < used_.size() && used_[head_]) ++head_;
    const AgentId last = rt.last_agent();
    const bool last_enabled = last != kNoAgent && enabled(rt, last);
    AgentId chosen = kNoAgent;
    std::size_t pick = earliest([&](AgentId id) { return enabled(rt, id); });
    if (last_enabled && (pick == used_.size() || schedule_[pick] != last)) {
      if (drop_.holds(preemption_points_++)) chosen = last;
    } else if (!last_enabled && canonical_.holds(switch_points_++)) {
      chosen = *std::min_element(rt.enabled().begin(), rt.enabled().end());
    }
    if (chosen != kNoAgent) pick = earliest([&](AgentId id) { return id == chosen; });
    if (pick < used_.size()) {
      used_[pick] = 1;
      chosen = schedule_[pick];
    } else if (chosen == kNoAgent) {  // past the failing run's steps of every enabled agent: no preemption
      chosen = last_enabled ? last : rt.enabled().front();
    }
    if (last_enabled && chosen != last) ++preemptions;
    return chosen;
  }
  int preemptions = 0;

 private:
  template <class Pred>
  std::size_t earliest(Pred ok) const {
    for (std::size_t i = head_; i < used_.size(); ++i)
      if (!used_[i] && ok(schedule_[i])) return i;
    return used_.size();
  }
  const std::vector<AgentId>& schedule_;
  PointWindow drop_, canonical_;
  std::vector<char> used_;
  std::size_t head_ = 0, preemption_points_ = 0, switch_points_ = 0;
};

// Delta debugging over numbered points of a relaxed replay of `current`: tries windows of
// ever smaller size (all points first, then halves, ...); `accept` judges each run. Windows
// that are accepted replace `current` and are tried again over the new run's points;
// `points()` is how many the best run so far has.
template <class Points, class MakeStrategy, class Accept>
std::optional<Outcome> shrink_windows(Program& program, std::vector<AgentId>& current, Points points,
                                      std::uint64_t max_steps, double budget_s, MakeStrategy make, Accept accept) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<Outcome> found;
  RunLimits limits;
  limits.max_steps = max_steps;
  for (std::size_t group = points(); group >= 1; group /= 2) {
    for (std::size_t from = 0; from < points();) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget_s ||
          stop_requested())
        return found;
      Runtime rt;
      RelaxedReplay strategy = make(current, PointWindow{from, from + group});
      Outcome out = rt.execute(program, strategy, limits);
      if (accept(out, strategy)) {
        current = out.schedule;
        found = std::move(out);
        continue;  // the same window again, over the new run's points
      }
      from += group;
    }
  }
  return found;
}

// Pass 2: drops preemptions in groups; keeps any run of the same kind with fewer. Then, at
// the switches where the thread that ran last cannot go on, takes the lowest enabled thread
// wherever that keeps the kind and adds no preemption (a shorter token). `best` becomes the
// preemptions of what it returns.
std::optional<Outcome> shrink_by_dropping(Program& program, const Outcome& failing, int& best, double budget_s) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<AgentId> current = failing.schedule;
  const std::uint64_t max_steps = std::max<std::uint64_t>(failing.steps * 4, 1000);
  std::optional<Outcome> found = shrink_windows(
      program, current, [&] { return static_cast<std::size_t>(best); }, max_steps, budget_s * 0.6,
      [](const std::vector<AgentId>& s, PointWindow w) { return RelaxedReplay(s, w, {}); },
      [&](const Outcome& out, const RelaxedReplay& r) {
        if (out.verdict != failing.verdict || r.preemptions >= best) return false;
        best = r.preemptions;
        return true;
      });
  if (!found) return found;
  // Only for a schedule that switches often (a long token): it costs many executions.
  std::size_t switches = 0;
  for (std::size_t i = 1; i < current.size(); ++i) switches += current[i] != current[i - 1];
  if (switches < 400) return found;
  const double left =
      std::min(1.5, budget_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (auto canonical = shrink_windows(
          program, current, [&] { return current.size(); }, max_steps, left,
          [](const std::vector<AgentId>& s, PointWindow w) { return RelaxedReplay(s, {}, w); },
          [&](const Outcome& out, const RelaxedReplay& r) {
            return out.verdict == failing.verdict && r.preemptions <= best && out.schedule != current;
          }))
    found = canonical;
  return found;
}
}  // namespace

Counterexample shrink(Program& program, const Outcome& failing, std::size_t timeline_lines, int* preemptions_out,
                      double budget_s) {
  const auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return budget_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const int original = count_preemptions(program, failing.schedule);
  std::optional<Outcome> shortened;
  if (original > 0) shortened = shrink_by_prefix(program, failing, original, budget_s / 3);
  int best = shortened ? count_preemptions(program, shortened->schedule) : original;
  if (best > 0 && !shortened)
    if (auto dropped = shrink_by_dropping(program, failing, best, std::max(left() / 2, 0.0))) shortened = dropped;
  // Iterative context bounding, for a bug of the same kind; spends what is left, and bounds
  // above 4 are not tried.
  for (int bound = 0; bound < std::min(best, 5); ++bound) {
    if (left() <= 0.01 || stop_requested()) break;
    ExploreOptions o;
    o.preemption_bound = bound;
    o.max_executions = 1000;
    o.time_limit_s = std::min(1.2, left());
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

}  // namespace mbcheck::sim
