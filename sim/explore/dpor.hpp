// Source-set DPOR with sleep sets (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014) over the
// relation of sim/explore/dpor_relation.hpp: the strategy that picks each step and the observer that
// turns each step into an event, finds its races and records the reversals to explore.
// Internal to the exhaustive search (sim/explore/explore.cpp, sim/explore/waves.hpp).
#pragma once

#include <fmt/format.h>

#include <string>
#include <tuple>
#include <unordered_map>

#include "sim/explore/dpor_relation.hpp"

namespace mbcheck::sim::dpor {

// The search only replays prefixes it has run and picks enabled agents, so an execution of
// its that diverges means the protocol did something else on the same schedule: it is
// nondeterministic (host time, addresses, uninitialised values, state outside its stack).
inline void explain_divergence(Outcome& out) {
  if (out.verdict != Verdict::diverged) return;
  out.message =
      "the protocol is nondeterministic: re-running a schedule prefix the search had already run, " + out.message;
}

class DporSearch final : public Strategy, public StepObserver {
 public:
  NodeStack nodes;
  std::uint64_t races = 0;
  int bound = -1;
  std::uint64_t bound_cut = 0;
  std::uint64_t fallbacks = 0;  // alternatives not enabled where a reversal put them
  std::uint64_t spin_iterations = 0;
  std::uint64_t spin_noops = 0;
  std::uint64_t backoff_merges = 0;
  std::uint64_t early_arrive_ons = 0;
  std::uint64_t deepest = 0, clock_bytes = 0;  // see ExploreStats

  // A worker explores the subtree below node floor-1 only; races it finds against nodes
  // above that are recorded, and the coordinator applies them in the order one search
  // would have (see explore()).
  std::size_t floor = 0;
  struct Deferred {
    std::size_t node;
    std::vector<AgentId> initials;  // of the reversal
    AgentId fallback;               // added when none of them is in the backtrack set yet
  };
  std::vector<Deferred> deferred;
  // A race found again and again (execution after execution) against the same node above is
  // recorded once; so is one that an earlier record makes a no-op: applied in order, d2
  // changes nothing after d1 when d1's initials are among d2's and so is d1's fallback (after
  // d1 the backtrack set holds one of d1's initials or its fallback, so one of d2's). 2 shards
  // of `readers --n 18` wrote 3.8 MB of such records for one subtree.
  std::unordered_map<std::size_t, std::vector<std::pair<std::vector<AgentId>, AgentId>>> deferred_kept;
  bool defer(Deferred d);  // false: a no-op after what is recorded
  void apply(const Deferred& d) {
    DporNode& n = nodes[d.node];
    for (AgentId q : n.backtrack)
      if (std::find(d.initials.begin(), d.initials.end(), q) != d.initials.end()) return;
    n.backtrack.push_back(d.fallback);
  }

  void begin_execution() override {
    end_search();  // the last execution's figures
    depth_ = 0;
    n_events_ = 0;
    arena_.clear();
    last_event_.clear();
    last_counter_.clear();
    spawned_by_.clear();
    barriers_.clear();
    addresses_.clear();
    sync_join_.clear();
    group_waits_.clear();
    group_members_.clear();
    scanned_agents_ = 0;
    any_provisional_ = any_increment_ = false;
    increment_checks_.clear();
    awaiting_arrival_.clear();
    awaiting_landing_.clear();
    counted_before_ = {races,       bound_cut,        spin_iterations,     spin_noops,      backoff_merges,
                       provisional, provisional_incs, provisional_expects, early_arrive_ons};
  }
  // The runtime runs the execution again from its start (Runtime::execute): the steps its first
  // attempt reported are reported again, so what they counted is taken back.
  void restart_execution() override {
    std::tie(races, bound_cut, spin_iterations, spin_noops, backoff_merges, provisional, provisional_incs,
             provisional_expects, early_arrive_ons) = counted_before_;
    begin_execution();
  }

  // After an execution: did a phase's provisional decs, increments or expects not hold up
  // (dpor_relation.hpp: provisional_counter, provisional_increment, provisional_expect)? Then its races are wrong,
  // and the same schedule runs again with those phases' provisional ops as incs
  // (execute_observed); end_rerun() after it. `last_step_failed`: the execution ended on a bug,
  // whose step may be a barrier op that failed (a misuse) and changed nothing.
  bool take_failed_provisions(bool last_step_failed);
  void end_rerun() { failed_.clear(); }
  std::uint64_t reruns = 0, provisional = 0, provisional_incs = 0, provisional_expects = 0;

  bool wants_lowest_enabled() const override { return true; }
  AgentId choose(const Runtime& rt) override {
    if (depth_ == nodes.size()) {
      DporNode n;
      n.sleep = pending_sleep_;
      // Default: let the agent that just ran go on (fewest preemptions), else the lowest id.
      AgentId pick = kNoAgent;
      AgentId last = rt.last_agent();
      if (last != kNoAgent && rt.agent(last).enabled_pos != ~0u && !contains(n.sleep, last)) {
        pick = last;
      } else {
        pick = rt.lowest_enabled([&](AgentId id) { return contains(n.sleep, id); });
      }
      if (pick == kNoAgent) return kStopExecution;  // sleep-set blocked: redundant
      n.backtrack.push_back(pick);
      n.chosen = pick;
      n.prev = last;
      n.prev_enabled = last != kNoAgent && rt.agent(last).enabled_pos != ~0u;
      n.preemptions_before = nodes.empty() ? 0 : nodes.back().preemptions_with(nodes.back().chosen);
      nodes.push_back(std::move(n));
    }
    DporNode& n = nodes[depth_];
    if (rt.agent_count() <= n.chosen || rt.agent(n.chosen).enabled_pos == ~0u) {
      // Replaying the recorded prefix, the agent is not where it was: the protocol is
      // nondeterministic (the runtime reports it as diverged). At the newest node the
      // alternative came from a reversal whose first step is not enabled here: that would
      // be a hole in the relation; stay safe by trying every enabled agent (counted, and
      // asserted to be 0 by the differential tests).
      if (depth_ + 1 == nodes.size() && depth_ >= floor) {
        ++fallbacks;
        for (AgentId id : rt.enabled())
          if (!contains(n.backtrack, id)) n.backtrack.push_back(id);
        return kStopExecution;
      }
      return n.chosen;
    }
    // The next node's sleep set: what sleeps here (incl. alternatives already explored)
    // and still commutes with the chosen step.
    pending_sleep_.clear();
    const Agent& chosen = rt.agent(n.chosen);
    auto keep = [&](AgentId q) {
      if (q != n.chosen && !contains(pending_sleep_, q) && q < rt.agent_count() && rt.agent(q).enabled_pos != ~0u &&
          independent_now(chosen, rt.agent(q)))
        pending_sleep_.push_back(q);
    };
    for (AgentId q : n.sleep) keep(q);
    for (AgentId q : n.done) keep(q);
    ++depth_;
    return n.chosen;
  }

  void on_step(const Runtime& rt, const StepInfo& step) override;

  // The figures of the execution just run join deepest and clock_bytes (also at the end).
  void end_search() {
    deepest = std::max<std::uint64_t>(deepest, n_events_);
    clock_bytes = std::max(clock_bytes, arena_.bytes_used());
  }

  // A wait still blocked at the end never ran, so it has no event; but it could have run
  // while the phase before the one it awaits was open (and aliased): its races with the
  // counter ops of that phase are reversed as if it ran now.
  void on_blocked(const Runtime& rt) override;

  // The execution's equivalence class: every event with its happens-before clock. Two
  // executions with the same key are the same partial order of the same operations.
  std::string trace_key() const;

  // The share of the tree explored, treating every node's alternatives as equal subtrees.
  double covered() const {
    double share = 0, weight = 1;
    for (const DporNode& n : nodes) {
      const double alternatives = static_cast<double>(std::max<std::size_t>(n.backtrack.size(), 1));
      share += weight * static_cast<double>(n.done.size()) / alternatives;
      weight /= alternatives;
    }
    return std::min(share, 1.0);
  }

  // Picks the next alternative; false when the search (of this worker's subtree) is complete.
  bool advance() {
    while (nodes.size() > floor) {
      DporNode& n = nodes.back();
      if (n.chosen != kNoAgent && !contains(n.done, n.chosen)) n.done.push_back(n.chosen);
      AgentId next = kNoAgent;
      for (AgentId q : n.backtrack) {
        if (contains(n.done, q) || contains(n.sleep, q)) continue;
        if (bound >= 0 && n.preemptions_with(q) > bound) {
          n.done.push_back(q);  // beyond the bound: counted, not explored
          ++bound_cut;
          continue;
        }
        next = q;
        break;
      }
      if (next != kNoAgent) {
        n.chosen = next;
        return true;
      }
      nodes.pop_back();
    }
    return false;
  }

 private:
  // The public counters as the execution began (restart_execution).
  std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
             std::uint64_t, std::uint64_t>
      counted_before_{};

  // The races and forced orderings of one step, by its operation's dependence class (the
  // relation: sim/explore/dpor_relation.hpp).
  void classify(const Runtime& rt, const StepInfo& step, Event& e, std::vector<std::uint32_t>& early,
                std::vector<Group>& groups, std::vector<const Summary*>& forced);

  const Summary& join_await_writes(const Runtime& rt, const StepInfo& step);
  // forced_write: the event of a load loop's enabling write (not a race of this read), or -1.
  void classify_atomic(const StepInfo& step, Event& e, std::vector<std::uint32_t>& early, std::vector<Group>& groups,
                       std::int64_t forced_write = -1);

  // Every thread leaves the sync after every live thread arrived: join their clocks, and those
  // of the threads whose exit let it go (they had to finish first).
  void classify_block_sync(const Runtime& rt, const StepInfo& step, std::vector<const Summary*>& forced);

  void classify_block_arrive(const Runtime& rt, const StepInfo& step, std::vector<Group>& groups);

  // It waits for the members of its owner's groups of its family (its bulk stores, its
  // cp.asyncs, its warp group's wgmma operand reads) in every committed group but the newest N.
  void classify_group_wait(const Runtime& rt, const StepInfo& step, std::vector<const Summary*>& forced);

  // An observer reads the phase only, and only completions change it.
  void classify_observer(BarrierHistory& h, const StepInfo& step, Event& e, std::vector<std::uint32_t>& early,
                         std::vector<Group>& groups, std::vector<const Summary*>& forced);

  void classify_counter(BarrierHistory& h, const StepInfo& step, Event& e, std::vector<Group>& groups);

  std::uint32_t new_slot(AgentId agent);  // the next event slot, reset but for seq/clock/detail
  std::uint32_t start_event(const StepInfo& step);
  void spin_noop_event(const Runtime& rt, const StepInfo& step);
  void find_races(std::uint32_t index, const Event& e);
  void check_races(std::vector<std::uint32_t>& list, const Event& e);
  void completion_races(const Event& e);
  void record(const StepInfo& step, const Event& e, std::uint32_t index);
  // A provisional increment (checks 2) or expect (checks 1) was recorded
  // (sim/explore/dpor_increments.cpp): its checks wait for their events. settle_increments: a
  // counter op that may settle some.
  void add_increment(const StepInfo& step, std::uint32_t index, std::uint32_t checks);
  void settle_increments(const StepInfo& step, const Event& e, std::uint32_t index);

  // A counter op of phase p ran: no more counter ops of the phases before p - 1 will (they
  // would be of phase p or later), nor, without aliasing, observers of them.
  void seal_before(BarrierHistory& h, std::int64_t phase) {
    const auto end = static_cast<std::size_t>(std::max<std::int64_t>(phase + 1, 0));
    for (; h.sealed < end && h.sealed < h.phases.size(); ++h.sealed) {
      arena_.seal(h.phases[h.sealed].counter_summary);
      arena_.seal(h.phases[h.sealed].obs_summary);
    }
  }

  // Is the agent's newest counter op one of phase q of this barrier? It ran after q-1
  // completed and was ordered after every counter op of q-1 (they race, find_races joins
  // them), so the agent's past holds them all. (Not across a re-init.)
  bool own_counter_in(const BarrierHistory& h, AgentId agent, std::uint32_t bar, std::int64_t q) const {
    return agent < last_counter_.size() && last_counter_[agent] == std::pair{bar, q} && h.one_incarnation();
  }

  // Race earlier -> later: make sure some initial step of the reversal is in the backtrack
  // set of the node before `earlier` (source-set DPOR).
  // `later_clock`: the later event's clock as built so far (it is not stored yet).
  void add_race(std::uint32_t earlier, std::uint32_t later, const Event& later_event, const WorkClock& later_clock);

  struct SyncJoin {
    Summary clock;
    std::uint64_t release = 0;  // the release step the clock was built for
  };

  std::size_t depth_ = 0;
  AgentSet pending_sleep_;
  EventSlots events_;  // slots; the first n_events_ are this execution's
  std::size_t n_events_ = 0;
  std::vector<std::uint32_t> early_, candidates_, races_found_;
  std::vector<std::span<const std::uint32_t>> singles_;  // see on_step
  // A wait answered by parity after its barrier lapped it (OnMisuse::proceed): the counter ops
  // of each phase it could have run in, each its own race (one covering another hides none).
  std::vector<std::uint32_t> parity_early_;
  std::vector<std::uint32_t> watch_;     // observers a completion races with
  const Summary* watch_base_ = nullptr;  // the completed phase's counter ops
  WorkClock completion_clock_;
  struct GroupWaitJoin {
    std::vector<std::uint8_t> joined;  // per member (of its owner's): an earlier wait of the thread joined it
    std::size_t next = 0;              // the first member not yet joined or passed over
  };
  Summary group_join_;  // a wait_group: the members it joins that no earlier wait of its thread did
  std::unordered_map<std::uint64_t, GroupWaitJoin> group_waits_;     // by waiting thread << 8 | family
  std::unordered_map<AgentId, std::vector<AgentId>> group_members_;  // by owner, in issue order
  std::size_t scanned_agents_ = 0;                                   // agents sorted into group_members_
  std::vector<std::uint32_t> block_prev_;                            // the completion of barrier 0's generation before
  Summary arrive_join_;  // an async arrive: the join of the copies it tracks
  Summary read_join_;    // a read-woken poll or a load loop's await: the writes that woke it
  Event blocked_event_;
  WorkClock blocked_clock_;
  WorkClock acc_;                                  // the clock of the event on_step is building
  ClockId prev_clock_ = kNoClock;                  // its agent's previous event's clock
  ClockArena arena_;                               // every stored event clock of this execution
  std::vector<std::uint32_t> race_v_, first_seq_;  // add_race's buffers (first_seq_: 0 = absent)
  std::vector<AgentId> first_agents_;
  std::vector<Group> groups_;
  std::vector<const Summary*> forced_;
  std::vector<std::int64_t> last_event_;
  std::vector<std::pair<std::uint32_t, std::int64_t>>
      last_counter_;                                       // per agent: (barrier id, phase) of its newest counter op
  std::unordered_map<AgentId, std::uint32_t> spawned_by_;  // a spawned agent starts with its spawner event's clock
  std::vector<BarrierHistory> barriers_;                   // by barrier id (dense, from 1)
  BarrierHistory& history(std::uint32_t id) {
    if (barriers_.size() <= id) barriers_.resize(id + 1);
    return barriers_[id];
  }
  std::unordered_map<const void*, AddressHistory> addresses_;
  bool any_provisional_ = false;  // this execution holds a provisional dec or increment
  bool any_increment_ = false;    // ... a provisional increment
  // The phases with provisional increments, and their checks still open (by index there): per
  // thread, those of its increments that wait for its arrival; per arrive agent, its spawner's.
  std::vector<IncrementChecks> increment_checks_;
  std::vector<boost::container::small_vector<std::uint32_t, 1>> awaiting_arrival_;
  std::unordered_map<AgentId, std::uint32_t> awaiting_landing_;
  std::vector<std::pair<std::uint32_t, std::int64_t>> failed_;  // (barrier id, phase) run as incs
  bool failed_before(std::uint32_t bar, std::int64_t phase) const {
    return std::find(failed_.begin(), failed_.end(), std::pair{bar, phase}) != failed_.end();
  }
  std::unordered_map<std::uint32_t, SyncJoin> sync_join_;
};

// One execution of a search. One whose provisional decs did not hold up runs again on the same
// schedule (the strategy replays its recorded choices), with them as incs: its races are
// then those of the relation proper. `observer` is the DPOR itself, or brute force's class
// counter; the outcome is the first run's (the rerun's if it diverged or was cut short). It
// is the runtime's, valid until its next execution (Runtime::execute_in_place: no allocation
// per execution), or, after a rerun, the first run's moved into `held`.
inline Outcome& execute_observed(Runtime& rt, Program& program, Strategy& strategy, const RunLimits& limits,
                                 DporSearch& observer, Outcome& held) {
  Outcome& out = rt.execute_in_place(program, strategy, limits, &observer);
  const bool last_step_failed =
      is_bug(out.verdict) && out.verdict != Verdict::deadlock && out.verdict != Verdict::livelock;
  if (out.cut_short || !observer.take_failed_provisions(last_step_failed)) return out;
  ++observer.reruns;
  held = std::move(out);
  observer.begin_execution();
  Outcome& again = rt.execute_in_place(program, strategy, limits, &observer);
  observer.end_rerun();
  if (again.cut_short || again.verdict == Verdict::diverged) return again;
  return held;
}

}  // namespace mbcheck::sim::dpor
