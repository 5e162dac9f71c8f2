// The DPOR's step observer: each step becomes an event with its clock, its races are found
// against the per-barrier histories, and their reversals go into the backtrack sets
// (source-set DPOR; the strategy side and the class: sim/explore/dpor.hpp).
#include "sim/explore/dpor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace mbcheck::sim::dpor {

void DporSearch::on_step(const Runtime& rt, const StepInfo& step) {
  if (step.spin_noop) return spin_noop_event(rt, step);
  const std::uint32_t index = start_event(step);
  Event& e = events_[index];
  // Dependent earlier events, newest first: forced ones are joined; a race candidate not yet
  // covered by acc_ is a race (e ⋖ this).
  early_.clear();
  groups_.clear();
  forced_.clear();
  singles_.clear();
  parity_early_.clear();
  watch_.clear();
  watch_base_ = nullptr;
  classify(rt, step, e, early_, groups_, forced_);
  find_races(index, e);
  // acc_'s own entry stays what the event acquired of its own agent (see ClockArena): the
  // record keeps that; the summaries record() adds the event to take e.seq.
  record(step, e, index);
  if (step.spawned != kNoAgent)
    for (std::uint32_t i = 0; i < std::max<std::uint32_t>(1, step.spawned_count); ++i)
      spawned_by_[step.spawned + i] = index;
  e.clock = arena_.store(acc_, kNoAgent, 0, prev_clock_);
  last_event_[step.agent] = index;
}

// A failed poll its thread's next poll showed to be a spin iteration: in the program where
// that loop is one wait (which is what the search explores), the step does not exist. It
// keeps its slot (slots and nodes are one per step) but takes part in nothing, and it commutes
// with every step: what slept before it (or was explored there) sleeps after it. Run where a
// reversal put it, its thread is then that program's disabled wait, and the execution ends
// sleep-set blocked (redundant) unless something else is left to run.
void DporSearch::spin_noop_event(const Runtime& rt, const StepInfo& step) {
  ++spin_noops;
  const std::uint32_t index = new_slot(step.agent);
  Event& e = events_[index];
  e.cat = Cat::spin_noop;
  e.detail = 0;
  e.seq = 0;
  e.clock = kNoClock;
  if (index >= nodes.size() || depth_ != index + 1) return;
  const DporNode& n = nodes[index];
  pending_sleep_.clear();
  auto keep = [&](AgentId q) {
    if (q != n.chosen && !contains(pending_sleep_, q) && q < rt.agent_count() && rt.agent(q).enabled_pos != ~0u)
      pending_sleep_.push_back(q);
  };
  for (AgentId q : n.sleep) keep(q);
  for (AgentId q : n.done) keep(q);
}

// The next event slot (slots and their clocks' storage are reused from execution to execution).
std::uint32_t DporSearch::new_slot(AgentId agent) {
  const auto index = static_cast<std::uint32_t>(n_events_);
  if (n_events_ == events_.size()) events_.emplace_back();
  ++n_events_;
  Event& e = events_[index];
  e.agent = agent;
  e.cat = Cat::other;
  e.phase = 0;
  e.completed = e.poll = e.provisional = false;
  return index;
}

// The step's event; acc_ starts as its agent's previous clock, or its spawner's.
std::uint32_t DporSearch::start_event(const StepInfo& step) {
  if (step.op.await) ++spin_iterations;
  if (step.op.await && step.op.backoff) ++backoff_merges;
  const std::uint32_t index = new_slot(step.agent);
  Event& e = events_[index];
  e.detail = is_atomic(step.op.kind) ? step.value : step.result;
  if (last_event_.size() <= step.agent) last_event_.resize(step.agent + 1, -1);
  prev_clock_ = kNoClock;
  acc_.clear();
  if (last_event_[step.agent] >= 0) {
    const Event& prev = events_[static_cast<std::size_t>(last_event_[step.agent])];
    e.seq = prev.seq + 1;
    arena_.assign_raw(prev.clock, acc_);
    prev_clock_ = prev.clock;
  } else {
    e.seq = 1;
    if (auto it = spawned_by_.find(step.agent); it != spawned_by_.end()) arena_.expand(events_[it->second], acc_);
  }
  return index;
}

// Races, newest first: each one found joins its clock, so older events it covers are not
// races. A reversal is computed with the clock that holds all of them (its first step depends
// on whatever this event depends on).
void DporSearch::check_races(std::vector<std::uint32_t>& list, const Event& e) {
  std::sort(list.begin(), list.end(), std::greater<>());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  for (std::uint32_t c : list) {
    const Event& other = events_[c];
    if (other.agent == e.agent || arena_.covers(acc_, other.agent, other.seq)) continue;
    arena_.join_into(other, acc_);
    races_found_.push_back(c);
  }
}

void DporSearch::find_races(std::uint32_t index, const Event& e) {
  // A group that stands for one event made of all its members ("some wait saw the phase
  // complete"): running before any one member is not yet running before it, so its newest
  // member not ordered before this event is its one race (the next execution finds the next).
  for (std::span<const std::uint32_t> s : singles_)
    for (std::size_t i = s.size(); i-- > 0;) {
      const Event& other = events_[s[i]];
      if (other.agent == e.agent || arena_.covers(acc_, other.agent, other.seq)) continue;
      early_.push_back(s[i]);
      break;
    }
  // Races the forced orderings below would hide: before init every op on the barrier is
  // enabled (it reports the misuse), and an observer of phase q is enabled before phase q-1
  // completes (it aliases). Their reversals put this event before those ops, so they are
  // computed without the forced orderings.
  for (std::uint32_t c : parity_early_) {  // before any join: one may order another
    const Event& other = events_[c];
    if (other.agent != e.agent && !arena_.covers(acc_, other.agent, other.seq)) add_race(c, index, e, acc_);
  }
  races_found_.clear();
  check_races(early_, e);
  for (std::uint32_t c : races_found_) add_race(c, index, e, acc_);  // acc_: no own entry yet
  // acc_ is still its agent's previous clock when no race was found: a summary that holds the
  // previous event holds all of acc_ (a wait joining its completed phase, the usual case).
  const Event* prev = races_found_.empty() && prev_clock_ != kNoClock
                          ? &events_[static_cast<std::size_t>(last_event_[e.agent])]
                          : nullptr;
  for (const Summary* f : forced_) {
    if (prev && arena_.covers(*f, prev->agent, prev->seq))
      arena_.join_dominating(acc_, *f);
    else
      arena_.join(acc_, *f);
    prev = nullptr;
  }
  races_found_.clear();
  // A group whose summary acc_ already covers holds no race: skip it whole.
  candidates_.clear();
  for (const Group& g : groups_)
    if (!g.summary || !arena_.covered(acc_, *g.summary))
      candidates_.insert(candidates_.end(), g.members.begin(), g.members.end());
  check_races(candidates_, e);
  completion_races(e);
  for (std::uint32_t c : races_found_) add_race(c, index, e, acc_);
}

// This op completed its phase: the completion is an event after all the phase's counter ops.
// Observers it changes (polls that found the phase open, observers of the phase before, which
// alias after it) race with it unless one of those ops is already after them.
void DporSearch::completion_races(const Event& e) {
  if (watch_.empty()) return;
  WorkClock& done = completion_clock_;
  done.assign(acc_);
  if (watch_base_) arena_.join(done, *watch_base_);
  std::sort(watch_.begin(), watch_.end(), std::greater<>());
  for (std::uint32_t c : watch_) {
    const Event& other = events_[c];
    if (other.agent == e.agent || arena_.covers(done, other.agent, other.seq)) continue;
    arena_.join_into(other, done);
    arena_.join_into(other, acc_);
    races_found_.push_back(c);
  }
}

// A wait still blocked at the end never ran, so it has no event; but it could have run
// while the phase before the one it awaits was open (and aliased), or, read by parity, while a
// later phase of the other parity was: its races with the counter ops of those phases are
// reversed as if it ran now.
void DporSearch::on_blocked(const Runtime& rt) {
  for (std::size_t id = 0; id < rt.agent_count(); ++id) {
    const Agent& a = rt.agent(static_cast<AgentId>(id));
    if (a.kind != Agent::Kind::thread || a.state != Agent::State::blocked || !is_blocking_wait(a.op)) continue;
    // Read by parity (OnMisuse::proceed) it also returns in phases k + 1, k + 3, ...: one phase
    // at a time (a later phase's ops, ordered after an earlier one's, would hide them).
    const bool by_parity = rt.launch().on_misuse == OnMisuse::proceed && !a.op.bar->named;
    for (std::int64_t open = a.op.arg - 1; open < (by_parity ? a.op.bar->phase : a.op.arg); open += 2) {
      PhaseEvents* ph = history(a.op.bar->id).find(open);
      if (!ph || ph->counters.empty()) continue;
      Event& w = blocked_event_;
      WorkClock& wc = blocked_clock_;
      w.agent = a.id;
      wc.clear();
      w.seq = 1;
      if (id < last_event_.size() && last_event_[id] >= 0) {
        arena_.expand(events_[static_cast<std::size_t>(last_event_[id])], wc);
        w.seq = events_[static_cast<std::size_t>(last_event_[id])].seq + 1;
      }
      std::vector<std::uint32_t> list(ph->counters.begin(), ph->counters.end());
      std::sort(list.begin(), list.end(), std::greater<>());
      std::vector<std::uint32_t> found;
      for (std::uint32_t c : list) {
        const Event& other = events_[c];
        if (other.agent == w.agent || arena_.covers(wc, other.agent, other.seq)) continue;
        arena_.join_into(other, wc);
        found.push_back(c);
      }
      for (std::uint32_t c : found) add_race(c, static_cast<std::uint32_t>(n_events_), w, wc);
    }
  }
}

// The execution's equivalence class: every event with its happens-before clock. Two
// executions with the same key are the same partial order of the same operations.
std::string DporSearch::trace_key() const {
  std::vector<std::string> parts;
  parts.reserve(n_events_);
  for (std::size_t i = 0; i < n_events_; ++i) {
    const Event& e = events_[i];
    if (e.cat == Cat::spin_noop) continue;
    std::string part = fmt::format("{}.{}:{}:{}:{}|", e.agent, e.seq, static_cast<int>(e.cat), e.phase, e.detail);
    WorkClock clock;
    arena_.expand(e, clock);
    VClock dense;
    arena_.to_dense(clock, dense);
    while (!dense.empty() && dense.back() == 0) dense.pop_back();
    for (auto c : dense) part += fmt::format("{},", c);
    parts.push_back(std::move(part));
  }
  std::sort(parts.begin(), parts.end());
  std::string key;
  for (auto& p : parts) key += p + ";";
  return key;
}

// The races and forced orderings of one step, by its operation's dependence class (the
// relation: sim/explore/dpor_relation.hpp).
void DporSearch::classify(const Runtime& rt, const StepInfo& step, Event& e, std::vector<std::uint32_t>& early,
                          std::vector<Group>& groups, std::vector<const Summary*>& forced) {
  const Op& op = step.op;
  if (is_atomic(op.kind)) {
    // A load loop's await runs after the write that enabled it (it could not run before): that
    // write is forced, not a race. Any later write to its words is an ordinary race (the await
    // was enabled before it, and may read what it overwrote).
    std::int64_t enabling = -1;
    if (op.await && rt.agent(step.agent).woken_at != 0) {
      enabling = static_cast<std::int64_t>(rt.agent(step.agent).woken_at) - 1;  // one event per step
      read_join_.clear();
      arena_.join_into(events_[static_cast<std::size_t>(enabling)], read_join_.dense);
      forced.push_back(&read_join_);
    }
    return classify_atomic(step, e, early, groups, enabling);
  }
  if (op.info().dependence == Dependence::block_sync) return classify_block_sync(rt, step, forced);
  if (op.info().dependence == Dependence::block_arrive) return classify_block_arrive(rt, step, groups);
  if (op.info().dependence == Dependence::group_wait) return classify_group_wait(rt, step, forced);
  if (!on_barrier(op)) return;
  if (const Agent& me = rt.agent(step.agent); !me.tracked.empty()) {
    // The arrive-on of cp.async.mbarrier.arrive runs after the copies it tracks landed.
    arrive_join_.clear();
    for (AgentId t : me.tracked)
      if (t < last_event_.size() && last_event_[t] >= 0) arena_.join_into(events_[last_event_[t]], arrive_join_.dense);
    forced.push_back(&arrive_join_);
  }
  BarrierHistory& h = history(op.bar->id);
  early.insert(early.end(), h.lifecycle.begin(), h.lifecycle.end());
  switch (op.info().dependence) {
    case Dependence::liveness_read: e.cat = Cat::live_read; return;
    case Dependence::lifecycle:
      e.cat = Cat::init;
      groups.push_back({all_of(h.live_reads), nullptr});
      for (PhaseEvents& pe : h.phases) {
        groups.push_back({all_of(pe.counters), &pe.counter_summary});
        groups.push_back({all_of(pe.obs_true), &pe.obs_summary});
        groups.push_back({all_of(pe.obs_false), nullptr});
      }
      return;
    case Dependence::observer:
      // Its await ran because a word its loop read changed: after the write that changed it.
      if (step.read_woken) forced.push_back(&join_await_writes(rt, step));
      return classify_observer(h, step, e, early, groups, forced);
    default: return classify_counter(h, step, e, groups);
  }
}

// The last writes of the words the step's await read (Agent::await_reads), joined.
const Summary& DporSearch::join_await_writes(const Runtime& rt, const StepInfo& step) {
  read_join_.clear();
  for (const auto& [addr, value] : rt.agent(step.agent).await_reads)
    if (auto it = addresses_.find(addr); it != addresses_.end() && it->second.last_write >= 0)
      arena_.join_into(events_[static_cast<std::size_t>(it->second.last_write)], read_join_.dense);
  return read_join_;
}

void DporSearch::classify_atomic(const StepInfo& step, Event& e, std::vector<std::uint32_t>& early,
                                 std::vector<Group>& groups, std::int64_t forced_write) {
  const bool writes = step.wrote;
  e.cat = writes ? Cat::write : Cat::read;
  AddressHistory& h = addresses_[step.op.addr];
  if (h.last_write >= 0 && h.last_write != forced_write) early.push_back(static_cast<std::uint32_t>(h.last_write));
  if (writes) groups.push_back({all_of(h.reads_since), nullptr});
  // a failed cas still read: it conflicts with writes only (handled above)
}

// An observer reads the phase only, and only completions change it.
void DporSearch::classify_observer(BarrierHistory& h, const StepInfo& step, Event& e, std::vector<std::uint32_t>& early,
                                   std::vector<Group>& groups, std::vector<const Summary*>& forced) {
  const std::int64_t q = step.op.arg;
  e.phase = q;
  e.poll = !is_blocking_wait(step.op);
  // A blocking wait only runs once its phase is over (one that reports aliasing comes here
  // with no answer): it is an observer that saw q complete.
  const bool saw_complete = step.result || !e.poll;
  e.cat = saw_complete ? Cat::obs_true : Cat::obs_false;
  PhaseEvents* const this_phase = h.find(q);
  if (PhaseEvents* it = h.find(q - 1)) {
    // It could have run while phase q-1 was open (it aliases then): races with the counter
    // ops of q-1, checked before the forced ordering below covers them. None is a race when
    // its past already holds them all (its own arrival in q came after q-1 completed): the
    // summary says so without a look at each (a cluster barrier's phase holds one per thread).
    if (!own_counter_in(h, step.agent, step.op.bar->id, q) && !arena_.covered(acc_, it->counter_summary))
      early.insert(early.end(), it->counters.begin(), it->counters.end());
    // A blocking wait is ordered after phase q's counter ops (below), and each of those after
    // every counter op of q-1 (they race with them, find_races joins them): joining q-1's is
    // then a no-op that costs a look at every chunk. (Not across a re-init.)
    if (!(saw_complete && !e.poll && this_phase && !this_phase->counters.empty() && h.one_incarnation()))
      forced.push_back(&it->counter_summary);
  }
  if (PhaseEvents* it = this_phase) {
    // A blocking wait cannot run before phase q completes; a poll can (it answers false
    // then), and a poll that found q open reads the state the counter ops of q wrote: either
    // way it races with the counter ops of q.
    if (saw_complete && !e.poll)
      forced.push_back(&it->counter_summary);
    else
      groups.push_back({all_of(it->counters), &it->counter_summary});
  }
  // Counter ops of q+1 race with it only by completing q+1 (it aliases after that): the
  // completing op finds that race (see on_step).
  // Answered by parity after the barrier lapped it (OnMisuse::proceed): it could have run in
  // any phase between, and answered otherwise, so it races with their counter ops.
  const MbarrierState& bar = *step.op.bar;
  if (step.result && bar.is_live() && !bar.named)
    for (std::int64_t open = q + 1; open < bar.phase; ++open)
      if (PhaseEvents* it = h.find(open))
        parity_early_.insert(parity_early_.end(), it->counters.begin(), it->counters.end());
}

void DporSearch::classify_counter(BarrierHistory& h, const StepInfo& step, Event& e, std::vector<Group>& groups) {
  const Op& op = step.op;
  const std::int64_t p = step.phase_before;
  e.phase = p;
  e.completed = step.completed;
  PhaseEvents* pe = h.find(p);
  const std::int64_t volume = pe ? pe->tx_volume : 0;
  bool commuting = op.bar->is_live() && commuting_counter(op, op.bar->tx, volume);
  if (!commuting && op.bar->is_live() && !failed_before(op.bar->id, p)) {
    if (provisional_counter(op, volume)) {
      commuting = true;
      e.provisional = true;
      ++provisional;
    } else if (provisional_increment(op)) {
      commuting = true;  // record() opens its checks
      ++provisional_incs;
    } else if (provisional_expect(op, volume)) {
      commuting = true;  // record() opens its check
      ++provisional_expects;
    }
  }
  e.cat = commuting ? Cat::dec : Cat::inc;
  if (pe) {
    if (!commuting)
      groups.push_back({all_of(pe->counters), &pe->counter_summary});
    else
      groups.push_back({all_of(pe->incs), nullptr});
    // Polls of this phase (they would answer otherwise with this op before them).
    groups.push_back({all_of(pe->obs_false), nullptr});
  }
  PhaseEvents* it = h.find(p - 1);
  if (!it) return;
  // Counter ops of different phases are dependent (the order decides which phase is which),
  // and so are the polls that found p-1 open.
  groups.push_back({all_of(it->counters), &it->counter_summary});
  groups.push_back({all_of(it->obs_false), nullptr});
  // PTX's missing-wait rule: an arrive-on in phase p > 0 needs some wait to have seen p-1
  // complete before it. One already in its past settles it (in every order); else it races
  // with the newest such wait (run before all of them, it is a misuse).
  if (is_arrival(op) && p > 0) {
    // None of them yet, and this one did not complete p (that would be the misuse): an early
    // arrive-on, a warning (ExploreStats::early_arrive_ons).
    if (it->obs_true.empty() && !step.completed && !op.bar->named) ++early_arrive_ons;
    bool settled = false;
    for (std::uint32_t o : it->obs_true)
      if (events_[o].agent == e.agent || arena_.covers(acc_, events_[o].agent, events_[o].seq)) {
        settled = true;
        break;
      }
    if (!settled) singles_.push_back(all_of(it->obs_true));
  }
  // Completing p makes every later observer of p-1 alias: the completion races with the
  // observers of p-1 that no counter op of p already follows.
  if (step.completed) {
    watch_.insert(watch_.end(), it->obs_true.begin(), it->obs_true.end());
    if (pe) watch_base_ = &pe->counter_summary;
  }
}

void DporSearch::record(const StepInfo& step, const Event& e, std::uint32_t index) {
  const Op& op = step.op;
  if (is_atomic(op.kind)) {
    AddressHistory& h = addresses_[op.addr];
    if (e.cat == Cat::write) {
      h.last_write = index;
      h.reads_since.clear();
    } else {
      h.reads_since.push_back(index);
    }
    return;
  }
  if (!op.bar || e.cat == Cat::other) return;
  BarrierHistory& h = history(op.bar->id);
  switch (e.cat) {
    case Cat::init:
      h.lifecycle.push_back(index);
      if (op.info().effect == Effect::init) h.init_count = op.arg;
      break;
    case Cat::live_read: h.live_reads.push_back(index); break;
    case Cat::obs_true: {
      PhaseEvents& pe = h.at(e.phase);
      pe.obs_true.push_back(index);
      arena_.add(pe.obs_summary, acc_, e);
      break;
    }
    case Cat::obs_false: h.at(e.phase).obs_false.push_back(index); break;
    case Cat::inc:
    case Cat::dec: {
      PhaseEvents& pe = h.at(e.phase);
      if (moves_tx(op)) pe.tx_volume += op.arg;
      if (any_increment_) settle_increments(step, e, index);
      if (e.cat == Cat::dec && provisional_increment(op)) add_increment(step, index, 2);
      if (e.cat == Cat::dec && op.info().effect == Effect::expect_tx) add_increment(step, index, 1);
      pe.counters.push_back(index);
      if (e.completed) pe.completer = index;
      if (e.cat == Cat::inc) pe.incs.push_back(index);
      if (e.provisional) {
        if (pe.first_provisional < 0) pe.first_provisional = index;
        pe.last_provisional = index;
        any_provisional_ = true;
      }
      arena_.add(pe.counter_summary, acc_, e);
      // A completed phase takes no more counter ops (until a re-init, which unseals it):
      // stored now, its waiters copy it instead of comparing it entry by entry.
      if (e.completed) arena_.seal(pe.counter_summary);
      if (last_counter_.size() <= e.agent) last_counter_.resize(e.agent + 1, {~0u, 0});
      last_counter_[e.agent] = {op.bar->id, e.phase};
      seal_before(h, e.phase - 1);
      break;
    }
    default: break;
  }
}

// Race earlier -> later: make sure some initial step of the reversal is in the backtrack
// set of the node before `earlier` (source-set DPOR).
// `later_clock`: the later event's clock as built so far (it is not stored yet).
void DporSearch::add_race(std::uint32_t earlier, std::uint32_t later, const Event& later_event,
                          const WorkClock& later_clock) {
  ++races;
  const Event& e1 = events_[earlier];
  if (earlier >= nodes.size()) return;
  DporNode& node = nodes[earlier];
  // v = the events after e1 that do not depend on it, then the later event. For each agent
  // in v: the seq of its first event there (flat buffers, reused: races are frequent).
  std::vector<std::uint32_t>& v = race_v_;
  v.clear();
  for (AgentId a : first_agents_) first_seq_[a] = 0;
  first_agents_.clear();
  for (std::uint32_t j = earlier + 1; j < later; ++j) {
    const Event& ej = events_[j];
    if (ej.cat == Cat::spin_noop || arena_.covers(ej, e1.agent, e1.seq)) continue;
    v.push_back(j);
    if (first_seq_.size() <= ej.agent) first_seq_.resize(ej.agent + 1, 0);
    if (first_seq_[ej.agent] == 0) {
      first_seq_[ej.agent] = ej.seq;
      first_agents_.push_back(ej.agent);
    }
  }
  const AgentId later_agent = later_event.agent;
  auto in_v = [&](AgentId q) { return q < first_seq_.size() && first_seq_[q] != 0; };
  auto is_initial = [&](AgentId q) {
    const Event* stored = nullptr;  // null: the later event's (dense) clock
    if (!in_v(q)) {
      if (q != later_agent) return false;
    } else {
      for (auto j : v)
        if (events_[j].agent == q) {
          stored = &events_[j];
          break;
        }
    }
    for (AgentId a : first_agents_)
      if (a != q && (stored ? arena_.covers(*stored, a, first_seq_[a]) : arena_.covers(later_clock, a, first_seq_[a])))
        return false;
    return true;
  };
  AgentId add = v.empty() ? later_agent : events_[v.front()].agent;
  if (earlier < floor) {
    Deferred d{earlier, {}, add};
    for (AgentId a : first_agents_)
      if (is_initial(a)) d.initials.push_back(a);
    if (!in_v(later_agent) && is_initial(later_agent)) d.initials.push_back(later_agent);
    defer(std::move(d));
    return;
  }
  for (AgentId q : node.backtrack)
    if (is_initial(q)) return;
  node.backtrack.push_back(add);
}

bool DporSearch::defer(Deferred d) {
  std::vector<AgentId> sorted = d.initials;
  std::sort(sorted.begin(), sorted.end());
  auto& kept = deferred_kept[d.node];
  for (const auto& [initials, fallback] : kept) {
    if (initials == sorted && fallback == d.fallback) return false;
    if (std::binary_search(sorted.begin(), sorted.end(), fallback) &&
        std::includes(sorted.begin(), sorted.end(), initials.begin(), initials.end()))
      return false;
  }
  kept.emplace_back(std::move(sorted), d.fallback);
  deferred.push_back(std::move(d));
  return true;
}

}  // namespace mbcheck::sim::dpor
