#include "sim/explore.hpp"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <boost/container/small_vector.hpp>
#include <span>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

namespace mbcheck::sim {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

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

// ---------------------------------------------------------------------------------------
// DPOR
//
// Events and the dependency relation. Every step becomes an event with a vector clock of
// the happens-before relation that DPOR reasons about (program order + dependencies). The
// relation is static: whether two events are dependent follows from their kinds and phases
// alone, never from the order of other events (which one completes a phase, whether tx is
// negative), because a rule that depends on another pair's order is not preserved by the
// reversals DPOR makes, and then classes are lost. On one mbarrier:
//  - a wait or poll reads the barrier's phase; counter ops write it: an observer of phase q
//    is dependent with every counter op of phases q-1 (run after them, it aliases), q (they
//    decide its answer) and q+1 (run before it, they can make it alias or break "missing
//    wait"). A blocking wait (or a spin iteration) of q cannot run before q completes: it is
//    ordered after all counter ops of q, so it has no race with them;
//  - arrivals (arrive, arrive_drop, arrive.expect_tx: "dec") of one phase commute: none of
//    them can complete the phase while another is still to come, whichever comes last
//    completes it with the same result, and what they return is the same;
//  - tx ops (expect_tx, complete_tx, copy landings) and arrive.noComplete ("inc") can move
//    the completion or change a token: dependent on every counter op of their phase;
//  - counter ops of different phases are dependent (the order decides which phase is which);
//  - init/inval are dependent with everything on the barrier; observers commute.
// Plain atomics: the usual read/write conflicts per address. Different objects commute.
// The reference enumerator (tests/differential) is what this is tested against.

using VClock = std::vector<std::uint32_t>;

bool covers_all(const VClock& c, const VClock& other) {
  const std::size_t n = std::min(c.size(), other.size());
  for (std::size_t i = 0; i < n; ++i)
    if (other[i] > c[i]) return false;
  for (std::size_t i = n; i < other.size(); ++i)
    if (other[i] != 0) return false;
  return true;
}

// Race candidates of one kind (e.g. the counter ops of one phase), with the join of their
// clocks when it is kept.
template <class List>
std::span<const std::uint32_t> all_of(const List& l) {
  return {l.data(), l.size()};
}

struct Group {
  std::span<const std::uint32_t> members;
  const std::vector<std::uint32_t>* summary;  // may be null: then every member is checked
};

void join(VClock& into, const VClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}
bool covers(const VClock& c, AgentId agent, std::uint32_t seq) { return agent < c.size() && c[agent] >= seq; }

enum class Cat : std::uint8_t { other, init, dec, inc, obs_true, obs_false, read, write };

struct Event {
  AgentId agent = 0;
  std::uint32_t seq = 0;  // 1-based position among the agent's events
  Cat cat = Cat::other;
  std::int64_t phase = 0;  // counter ops: phase it ran in; observers: phase awaited
  bool completed = false;
  bool poll = false;        // test_wait/try_wait (it could also have run before the phase completed)
  const void* object = nullptr;  // barrier of a barrier op
  std::int64_t detail = 0;  // what the thread observed (value read, wait answer)
  VClock clock;
};

// Event indices; most phases hold a few of each kind, so keep them inline.
using EventList = boost::container::small_vector<std::uint32_t, 4>;

struct PhaseEvents {
  EventList counters, incs, obs_true, obs_false;
  std::int64_t completer = -1;  // the counter op that completed the phase
  VClock counter_summary;  // join of all counter ops of the phase
  VClock obs_summary;      // join of all successful observers of the phase
};

struct BarrierHistory {
  std::vector<std::uint32_t> lifecycle;  // init/inval events
  std::vector<PhaseEvents> phases;       // phases[p + 1] for phase p (-1: before init)
  PhaseEvents* find(std::int64_t phase) {
    const std::int64_t i = phase + 1;
    return i >= 0 && static_cast<std::size_t>(i) < phases.size() ? &phases[static_cast<std::size_t>(i)] : nullptr;
  }
  PhaseEvents& at(std::int64_t phase) {
    const auto i = static_cast<std::size_t>(std::max<std::int64_t>(phase + 1, 0));
    if (phases.size() <= i) phases.resize(i + 1);
    return phases[i];
  }
};

struct AddressHistory {
  std::int64_t last_write = -1;
  std::vector<std::uint32_t> reads_since;
};

// Most nodes hold one or two agents in each set: keep them inline, no allocation per step.
using AgentSet = boost::container::small_vector<AgentId, 4>;

struct DporNode {
  AgentSet sleep;      // asleep on entry
  AgentSet backtrack;  // to explore from here
  AgentSet done;       // explored from here
  AgentId chosen = kNoAgent;
  // For the preemption bound: who ran before this step, whether it could have gone on,
  // and the preemptions of the schedule up to (not including) this step.
  AgentId prev = kNoAgent;
  bool prev_enabled = false;
  int preemptions_before = 0;
  int preemptions_with(AgentId q) const { return preemptions_before + (prev_enabled && q != prev ? 1 : 0); }
};

template <class Set>
bool contains(const Set& v, AgentId a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

// What an operation would be if it ran now (for sleep sets).
struct Meta {
  Cat cat = Cat::other;
  std::int64_t phase = 0;  // counter ops: the phase it runs in; observers: the phase awaited
};

bool is_arrival(const Op& op) {
  return op.kind == OpKind::arrive || op.kind == OpKind::arrive_drop || op.kind == OpKind::arrive_expect_tx;
}

Meta meta_now(const Agent& a) {
  const Op& op = a.op;
  Meta m;
  switch (op.kind) {
    case OpKind::init:
    case OpKind::inval: m.cat = Cat::init; return m;
    case OpKind::wait:
    case OpKind::test_wait:
    case OpKind::try_wait:
      m.phase = op.arg;
      m.cat = Cat::obs_true;  // observers commute with observers, whatever their answer
      return m;
    default: break;
  }
  // On a barrier that is not live the op reports a misuse: dependent with everything.
  m.cat = !op.bar->is_live() ? Cat::init : is_arrival(op) && !op.no_complete ? Cat::dec : Cat::inc;
  m.phase = op.bar->phase;
  return m;
}

// The relation at the top, for two operations about to run from the same state.
bool dependent(const Meta& a, const Meta& b) {
  if (a.cat == Cat::init || b.cat == Cat::init) return true;
  const bool a_obs = a.cat == Cat::obs_true, b_obs = b.cat == Cat::obs_true;
  if (a_obs && b_obs) return false;
  if (!a_obs && !b_obs) return a.phase != b.phase || a.cat == Cat::inc || b.cat == Cat::inc;
  const Meta& o = a_obs ? a : b;
  const Meta& c = a_obs ? b : a;
  return c.phase >= o.phase - 1 && c.phase <= o.phase + 1;
}

// May a sleeping agent `q` stay asleep when `p` runs now?
bool independent_now(const Agent& p, const Agent& q) {
  if (is_atomic(p.op.kind) || is_atomic(q.op.kind)) {
    if (!is_atomic(p.op.kind) || !is_atomic(q.op.kind) || p.op.addr != q.op.addr) return true;
    return p.op.kind == OpKind::atomic_load && q.op.kind == OpKind::atomic_load;
  }
  auto on_barrier = [](const Op& op) {
    return op.bar && op.kind != OpKind::bulk_copy && op.kind != OpKind::block_sync && op.kind != OpKind::bulk_store;
  };
  if (!on_barrier(p.op) || !on_barrier(q.op) || p.op.bar != q.op.bar) return true;
  return !dependent(meta_now(p), meta_now(q));
}

class DporSearch final : public Strategy, public StepObserver {
 public:
  std::vector<DporNode> nodes;
  std::uint64_t races = 0;
  int bound = -1;
  std::uint64_t bound_cut = 0;
  std::uint64_t fallbacks = 0;  // alternatives not enabled where a reversal put them
  std::uint64_t spin_iterations = 0;

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
  void apply(const Deferred& d) {
    DporNode& n = nodes[d.node];
    for (AgentId q : n.backtrack)
      if (std::find(d.initials.begin(), d.initials.end(), q) != d.initials.end()) return;
    n.backtrack.push_back(d.fallback);
  }

  void begin_execution() override {
    depth_ = 0;
    n_events_ = 0;
    last_event_.clear();
    first_clock_.clear();
    barriers_.clear();
    addresses_.clear();
    sync_join_.clear();
  }

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
        for (AgentId id : rt.enabled())
          if (!contains(n.sleep, id) && (pick == kNoAgent || id < pick)) pick = id;
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
      if (q != n.chosen && !contains(pending_sleep_, q) && q < rt.agent_count() &&
          rt.agent(q).enabled_pos != ~0u && independent_now(chosen, rt.agent(q)))
        pending_sleep_.push_back(q);
    };
    for (AgentId q : n.sleep) keep(q);
    for (AgentId q : n.done) keep(q);
    ++depth_;
    return n.chosen;
  }

  void on_step(const Runtime& rt, const StepInfo& step) override {
    // Event slots (and their clocks' storage) are reused from execution to execution.
    const auto index = static_cast<std::uint32_t>(n_events_);
    if (step.op.await) ++spin_iterations;
    if (n_events_ == events_.size()) events_.emplace_back();
    ++n_events_;
    Event& e = events_[index];
    e.agent = step.agent;
    e.cat = Cat::other;
    e.phase = 0;
    e.completed = e.poll = false;
    e.detail = is_atomic(step.op.kind) ? step.value : step.result;
    if (last_event_.size() <= step.agent) last_event_.resize(step.agent + 1, -1);
    VClock& acc = e.clock;  // built in place
    if (last_event_[step.agent] >= 0) {
      const Event& prev = events_[static_cast<std::size_t>(last_event_[step.agent])];
      e.seq = prev.seq + 1;
      acc.assign(prev.clock.begin(), prev.clock.end());
    } else {
      e.seq = 1;
      acc.clear();
      if (auto it = first_clock_.find(step.agent); it != first_clock_.end()) acc = it->second;
    }
    // Dependent earlier events, newest first: forced ones are joined; a race candidate
    // not yet covered by acc is a race (e ⋖ this).
    early_.clear();
    groups_.clear();
    forced_.clear();
    classify(rt, step, e, early_, groups_, forced_);
    // Races, newest first: each one found joins its clock, so older events it covers are
    // not races. A reversal is computed with the clock that holds all of them (its first
    // step depends on whatever this event depends on).
    races_found_.clear();
    auto check = [&](std::vector<std::uint32_t>& list) {  // newest first
      std::sort(list.begin(), list.end(), std::greater<>());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      for (std::uint32_t c : list) {
        const Event& other = events_[c];
        if (other.agent == e.agent || covers(acc, other.agent, other.seq)) continue;
        join(acc, other.clock);
        races_found_.push_back(c);
      }
    };
    // Races the forced orderings below would hide: before init every op on the barrier is
    // enabled (it reports the misuse), and an observer of phase q is enabled before phase q-1
    // completes (it aliases). Their reversals put this event before those ops, so they are
    // computed without the forced orderings.
    check(early_);
    for (std::uint32_t c : races_found_) add_race(c, index, e);  // e.clock (= acc): no own entry yet
    races_found_.clear();
    for (const VClock* f : forced_) join(acc, *f);
    // A group whose summary acc already covers holds no race: skip it whole.
    candidates_.clear();
    for (const Group& g : groups_)
      if (!g.summary || !covers_all(acc, *g.summary))
        candidates_.insert(candidates_.end(), g.members.begin(), g.members.end());
    check(candidates_);
    for (std::uint32_t c : races_found_) add_race(c, index, e);
    if (acc.size() <= e.agent) acc.resize(e.agent + 1, 0);
    acc[e.agent] = e.seq;
    record(step, e, index);
    if (step.spawned != kNoAgent) first_clock_[step.spawned] = e.clock;
    last_event_[step.agent] = index;
  }

  // A wait still blocked at the end never ran, so it has no event; but it could have run
  // while the phase before the one it awaits was open (and aliased): its races with the
  // counter ops of that phase are reversed as if it ran now.
  void on_blocked(const Runtime& rt) override {
    for (std::size_t id = 0; id < rt.agent_count(); ++id) {
      const Agent& a = rt.agent(static_cast<AgentId>(id));
      if (a.kind != Agent::Kind::thread || a.state != Agent::State::blocked || !is_blocking_wait(a.op)) continue;
      Event& w = blocked_event_;
      w.agent = a.id;
      w.clock.clear();
      w.seq = 1;
      if (id < last_event_.size() && last_event_[id] >= 0) {
        w.clock = events_[static_cast<std::size_t>(last_event_[id])].clock;
        w.seq = events_[static_cast<std::size_t>(last_event_[id])].seq + 1;
      }
      PhaseEvents* prev = history(a.op.bar->id).find(a.op.arg - 1);
      if (!prev) continue;
      std::vector<std::uint32_t> list(prev->counters.begin(), prev->counters.end());
      std::sort(list.begin(), list.end(), std::greater<>());
      std::vector<std::uint32_t> found;
      for (std::uint32_t c : list) {
        const Event& other = events_[c];
        if (other.agent == w.agent || covers(w.clock, other.agent, other.seq)) continue;
        join(w.clock, other.clock);
        found.push_back(c);
      }
      for (std::uint32_t c : found) add_race(c, static_cast<std::uint32_t>(n_events_), w);
    }
  }

  // The execution's equivalence class: every event with its happens-before clock. Two
  // executions with the same key are the same partial order of the same operations.
  std::string trace_key() const {
    std::vector<std::string> parts;
    parts.reserve(n_events_);
    for (std::size_t i = 0; i < n_events_; ++i) {
      const Event& e = events_[i];
      std::string part = fmt::format("{}.{}:{}:{}:{}|", e.agent, e.seq, static_cast<int>(e.cat), e.phase, e.detail);
      for (auto c : e.clock) part += fmt::format("{},", c);
      parts.push_back(std::move(part));
    }
    std::sort(parts.begin(), parts.end());
    std::string key;
    for (auto& p : parts) key += p + ";";
    return key;
  }

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
  void classify(const Runtime& rt, const StepInfo& step, Event& e, std::vector<std::uint32_t>& early,
                std::vector<Group>& groups, std::vector<const VClock*>& forced) {
    const Op& op = step.op;
    if (is_atomic(op.kind)) {
      bool writes = step.wrote;
      e.cat = writes ? Cat::write : Cat::read;
      AddressHistory& h = addresses_[op.addr];
      if (h.last_write >= 0) early.push_back(static_cast<std::uint32_t>(h.last_write));
      if (writes) groups.push_back({all_of(h.reads_since), nullptr});
      // a failed cas still read: it conflicts with writes only (handled above)
      return;
    }
    if (op.kind == OpKind::block_sync) {
      // Every thread leaves the sync after every live thread arrived: join their clocks, and
      // those of the threads whose exit let it go (they had to finish first).
      const Agent& me = rt.agent(step.agent);
      auto& sj = sync_join_[me.cta];
      if (sj.remaining == 0) {
        sj.clock.clear();
        sj.remaining = 0;
        const std::uint64_t release = rt.sync_release_step(me.cta);
        for (std::size_t id = 0; id < rt.agent_count(); ++id) {
          const Agent& a = rt.agent(static_cast<AgentId>(id));
          if (a.kind != Agent::Kind::thread || a.cta != me.cta) continue;
          const bool finished = a.state == Agent::State::finished;
          if (!finished && a.op.kind != OpKind::block_sync) continue;
          if (!finished) ++sj.remaining;
          if (id < last_event_.size() && last_event_[id] >= 0 &&
              static_cast<std::uint64_t>(last_event_[id]) < release)
            join(sj.clock, events_[last_event_[id]].clock);
        }
      }
      forced.push_back(&sj.clock);
      --sj.remaining;
      return;
    }
    if (op.kind == OpKind::bulk_wait_read) {
      // It waits for the landing of this thread's committed bulk stores.
      wait_join_.clear();
      for (std::size_t id = 0; id < rt.agent_count(); ++id) {
        const Agent& a = rt.agent(static_cast<AgentId>(id));
        if (a.kind == Agent::Kind::copy && a.thread_agent == step.agent && a.op.kind == OpKind::store_land &&
            a.committed && a.state == Agent::State::finished && id < last_event_.size() && last_event_[id] >= 0)
          join(wait_join_, events_[last_event_[id]].clock);
      }
      forced.push_back(&wait_join_);
      return;
    }
    if (!op.bar || op.kind == OpKind::bulk_copy) return;
    BarrierHistory& h = history(op.bar->id);
    early.insert(early.end(), h.lifecycle.begin(), h.lifecycle.end());
    switch (op.kind) {
      case OpKind::init:
      case OpKind::inval:
        e.cat = Cat::init;
        for (PhaseEvents& pe : h.phases) {
          groups.push_back({all_of(pe.counters), &pe.counter_summary});
          groups.push_back({all_of(pe.obs_true), &pe.obs_summary});
          groups.push_back({all_of(pe.obs_false), nullptr});
        }
        return;
      case OpKind::wait:
      case OpKind::test_wait:
      case OpKind::try_wait: {
        const std::int64_t q = op.arg;
        e.phase = q;
        e.poll = !is_blocking_wait(op);
        // A blocking wait only runs once its phase is over (one that reports aliasing comes
        // here with no answer): it is an observer that saw q complete.
        const bool saw_complete = step.result || !e.poll;
        e.cat = saw_complete ? Cat::obs_true : Cat::obs_false;
        if (PhaseEvents* it = h.find(q - 1)) {
          // It could have run while phase q-1 was open (it aliases then): races with the
          // counter ops of q-1, checked before the forced ordering below covers them.
          early.insert(early.end(), it->counters.begin(), it->counters.end());
          forced.push_back(&it->counter_summary);
        }
        if (saw_complete) {
          if (PhaseEvents* it = h.find(q)) {
            // A blocking wait cannot run before phase q completes; a poll can (it answers
            // false then): it races with the counter ops of q.
            if (!e.poll)
              forced.push_back(&it->counter_summary);
            else
              groups.push_back({all_of(it->counters), &it->counter_summary});
          }
          // Counter ops of q+1 before it: run after it, they could make it alias.
          if (PhaseEvents* it = h.find(q + 1)) groups.push_back({all_of(it->counters), &it->counter_summary});
        } else if (PhaseEvents* it = h.find(q)) {
          // A poll that found q open reads the state the counter ops of q wrote.
          groups.push_back({all_of(it->counters), &it->counter_summary});
        }
        return;
      }
      default: break;
    }
    // a counter op
    const std::int64_t p = step.phase_before;
    e.phase = p;
    e.completed = step.completed;
    const bool inc = !(is_arrival(op) && !op.no_complete);
    e.cat = inc ? Cat::inc : Cat::dec;
    if (PhaseEvents* it = h.find(p)) {
      PhaseEvents& pe = *it;
      if (inc)
        groups.push_back({all_of(pe.counters), &pe.counter_summary});
      else
        groups.push_back({all_of(pe.incs), nullptr});
    }
    // Polls of this phase (they would answer otherwise with this op before them).
    if (PhaseEvents* it = h.find(p)) groups.push_back({all_of(it->obs_false), nullptr});
    if (PhaseEvents* it = h.find(p - 1)) {
      // Counter ops of the previous phase, and its observers (this op completing the phase
      // before them makes them alias; an arrival before them may break "missing wait").
      groups.push_back({all_of(it->counters), &it->counter_summary});
      groups.push_back({all_of(it->obs_true), &it->obs_summary});
      groups.push_back({all_of(it->obs_false), nullptr});
    }
  }

  void record(const StepInfo& step, const Event& e, std::uint32_t index) {
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
      case Cat::init: h.lifecycle.push_back(index); break;
      case Cat::obs_true: {
        PhaseEvents& pe = h.at(e.phase);
        pe.obs_true.push_back(index);
        join(pe.obs_summary, e.clock);
        break;
      }
      case Cat::obs_false: h.at(e.phase).obs_false.push_back(index); break;
      case Cat::inc:
      case Cat::dec: {
        PhaseEvents& pe = h.at(e.phase);
        pe.counters.push_back(index);
        if (e.completed) pe.completer = index;
        if (e.cat == Cat::inc) pe.incs.push_back(index);
        join(pe.counter_summary, e.clock);
        break;
      }
      default: break;
    }
  }

  // Race earlier -> later: make sure some initial step of the reversal is in the backtrack
  // set of the node before `earlier` (source-set DPOR).
  void add_race(std::uint32_t earlier, std::uint32_t later, const Event& later_event) {
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
      if (covers(ej.clock, e1.agent, e1.seq)) continue;
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
      const VClock* clock = nullptr;
      if (!in_v(q)) {
        if (q != later_agent) return false;
        clock = &later_event.clock;
      } else {
        for (auto j : v)
          if (events_[j].agent == q) {
            clock = &events_[j].clock;
            break;
          }
      }
      for (AgentId a : first_agents_)
        if (a != q && covers(*clock, a, first_seq_[a])) return false;
      return true;
    };
    AgentId add = v.empty() ? later_agent : events_[v.front()].agent;
    if (earlier < floor) {
      Deferred d{earlier, {}, add};
      for (AgentId a : first_agents_)
        if (is_initial(a)) d.initials.push_back(a);
      if (!in_v(later_agent) && is_initial(later_agent)) d.initials.push_back(later_agent);
      deferred.push_back(std::move(d));
      return;
    }
    for (AgentId q : node.backtrack)
      if (is_initial(q)) return;
    node.backtrack.push_back(add);
  }

  struct SyncJoin {
    VClock clock;
    std::uint32_t remaining = 0;
  };

  std::size_t depth_ = 0;
  AgentSet pending_sleep_;
  std::vector<Event> events_;  // slots; the first n_events_ are this execution's
  std::size_t n_events_ = 0;
  std::vector<std::uint32_t> early_, candidates_, races_found_;
  VClock wait_join_;
  Event blocked_event_;
  std::vector<std::uint32_t> race_v_, first_seq_;  // add_race's buffers (first_seq_: 0 = absent)
  std::vector<AgentId> first_agents_;
  std::vector<Group> groups_;
  std::vector<const VClock*> forced_;
  std::vector<std::int64_t> last_event_;
  std::unordered_map<AgentId, VClock> first_clock_;
  std::vector<BarrierHistory> barriers_;  // by barrier id (dense, from 1)
  BarrierHistory& history(std::uint32_t id) {
    if (barriers_.size() <= id) barriers_.resize(id + 1);
    return barriers_[id];
  }
  std::unordered_map<const void*, AddressHistory> addresses_;
  std::unordered_map<std::uint32_t, SyncJoin> sync_join_;
};

}  // namespace

namespace {

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
};

WaveResult run_subtree(Program& program, Runtime& rt, const std::vector<DporNode>& prefix, const WaveItem& item,
                       const ExploreOptions& options, bool keep_outcomes) {
  DporSearch local;
  local.bound = options.preemption_bound;
  local.nodes = prefix;
  local.nodes.back().chosen = item.alternative;
  local.nodes.back().done = item.done;
  local.floor = prefix.size();
  RunLimits limits;
  limits.max_steps = options.max_steps;
  WaveResult res;
  for (;;) {
    Outcome out = rt.execute(program, local, limits, &local);
    res.stats.transitions += out.steps;
    if (out.verdict == Verdict::pruned) {
      ++res.stats.redundant;
    } else {
      ++res.stats.executions;
      if (out.verdict == Verdict::deadlock || out.verdict == Verdict::livelock) ++res.stats.blocked;
      const bool bug = is_bug(out.verdict) && !res.bug;
      if (keep_outcomes) res.outcomes.push_back(out);
      if (bug) {
        res.bug = std::move(out);
        if (options.stop_at_first_bug) {
          res.stopped = true;
          break;
        }
      }
    }
    if (!local.advance()) break;
  }
  res.stats.races = local.races;
  res.stats.bound_cut = local.bound_cut;
  res.stats.fallbacks = local.fallbacks;
  res.stats.spin_iterations = local.spin_iterations;
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
    for (std::size_t i; (i = next_.fetch_add(1)) < n;) fn(own_program, own_runtime, i);
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return busy_ == 0; });
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
      for (std::size_t i; (i = next_.fetch_add(1)) < n;) (*fn)(program, rt, i);
      std::lock_guard lock(mu_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

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

// --- sharding: wave subtrees shared through files ----------------------------------------

nlohmann::json to_json(const Outcome& o) {
  return {{"verdict", static_cast<int>(o.verdict)},
          {"misuse", o.misuse ? static_cast<int>(*o.misuse) : -1},
          {"message", o.message},
          {"details", o.details},
          {"schedule", o.schedule},
          {"steps", o.steps},
          {"culprits", o.culprits}};
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  o.verdict = static_cast<Verdict>(j.at("verdict").get<int>());
  if (int m = j.at("misuse").get<int>(); m >= 0) o.misuse = static_cast<MisuseKind>(m);
  o.message = j.at("message").get<std::string>();
  o.details = j.at("details").get<std::vector<std::string>>();
  o.schedule = j.at("schedule").get<std::vector<AgentId>>();
  o.steps = j.at("steps").get<std::uint64_t>();
  o.culprits = j.at("culprits").get<std::vector<AgentId>>();
  return o;
}

nlohmann::json to_json(const WaveResult& w) {
  nlohmann::json deferred = nlohmann::json::array();
  for (const auto& d : w.deferred) deferred.push_back({d.node, d.initials, d.fallback});
  nlohmann::json j = {{"executions", w.stats.executions}, {"redundant", w.stats.redundant},
                      {"blocked", w.stats.blocked},       {"transitions", w.stats.transitions},
                      {"races", w.stats.races},           {"bound_cut", w.stats.bound_cut},
                      {"fallbacks", w.stats.fallbacks},   {"spin_iterations", w.stats.spin_iterations},
                      {"stopped", w.stopped},             {"deferred", deferred}};
  if (w.bug) j["bug"] = to_json(*w.bug);
  return j;
}

WaveResult wave_result_from_json(const nlohmann::json& j) {
  WaveResult w;
  w.stats.executions = j.at("executions");
  w.stats.redundant = j.at("redundant");
  w.stats.blocked = j.at("blocked");
  w.stats.transitions = j.at("transitions");
  w.stats.races = j.at("races");
  w.stats.bound_cut = j.at("bound_cut");
  w.stats.fallbacks = j.at("fallbacks");
  w.stats.spin_iterations = j.at("spin_iterations");
  w.stopped = j.at("stopped");
  for (const auto& d : j.at("deferred"))
    w.deferred.push_back({d.at(0).get<std::size_t>(), d.at(1).get<std::vector<AgentId>>(), d.at(2).get<AgentId>()});
  if (j.contains("bug")) w.bug = outcome_from_json(j.at("bug"));
  return w;
}

// Runs a wave's items across shard processes: each item is computed by the shard whose
// exclusive create of its lock file succeeds; the others wait for its result file.
class ShardExchange {
 public:
  ShardExchange(std::string dir, unsigned index, unsigned count) : dir_(std::move(dir)), index_(index), count_(count) {}

  std::vector<WaveResult> run(std::size_t n, const std::function<WaveResult(std::size_t)>& compute,
                              std::uint64_t* own_executions) {
    const std::uint64_t wave = waves_++;
    std::vector<WaveResult> results(n);
    std::vector<bool> have(n, false);
    // Start at this shard's own offset, so concurrent shards claim different items first.
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + index_ * n / count_) % n;
      if (load(wave, i, results[i])) {
        have[i] = true;
      } else if (claim(wave, i)) {
        results[i] = compute(i);
        *own_executions += results[i].stats.executions;
        store(wave, i, results[i]);
        have[i] = true;
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      while (!have[i]) {
        if (load(wave, i, results[i]))
          have[i] = true;
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    return results;
  }

 private:
  std::string path(std::uint64_t wave, std::size_t i, const char* ext) const {
    return fmt::format("{}/w{}-{}.{}", dir_, wave, i, ext);
  }
  bool claim(std::uint64_t wave, std::size_t i) const {
    const int fd = ::open(path(wave, i, "lock").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }
  void store(std::uint64_t wave, std::size_t i, const WaveResult& r) const {
    const std::string tmp = path(wave, i, "tmp"), final_path = path(wave, i, "json");
    std::ofstream(tmp) << to_json(r).dump();
    std::rename(tmp.c_str(), final_path.c_str());  // atomic: readers see all or nothing
  }
  bool load(std::uint64_t wave, std::size_t i, WaveResult& out) const {
    std::ifstream in(path(wave, i, "json"));
    if (!in) return false;
    out = wave_result_from_json(nlohmann::json::parse(in));
    return true;
  }

  std::string dir_;
  unsigned index_, count_;
  std::uint64_t waves_ = 0;
};

}  // namespace

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
  const bool sharded = options.kind == SearchKind::dpor && options.shard_count > 1;
  const bool parallel = options.kind == SearchKind::dpor && options.max_executions == 0 &&
                        (sharded || (options.jobs > 1 && options.make_program));
  std::unique_ptr<WavePool> pool;
  if (parallel && !sharded) pool = std::make_unique<WavePool>(options.jobs - 1, options.make_program);
  std::unique_ptr<ShardExchange> exchange;
  if (sharded) exchange = std::make_unique<ShardExchange>(options.shard_dir, options.shard_index, options.shard_count);
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
    const std::vector<DporNode> prefix = dpor.nodes;
    const bool keep = static_cast<bool>(on_execution);
    if (exchange)
      results = exchange->run(
          items.size(), [&](std::size_t i) { return run_subtree(program, rt, prefix, items[i], options, false); },
          &result.stats.own_executions);
    else
      pool->run(items.size(), program, rt, [&](Program& p, Runtime& r, std::size_t i) {
        results[i] = run_subtree(p, r, prefix, items[i], options, keep);
      });
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
      if (on_execution)
        for (const Outcome& o : w.outcomes) on_execution(o);
      for (const auto& d : w.deferred) dpor.apply(d);
      if (w.bug && !result.bug) {
        result.bug = std::move(w.bug);
        if (w.stopped) return true;  // one search would not have gone past this subtree
      }
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
    if (options.progress && std::chrono::duration<double>(Clock::now() - last_progress).count() >= 0.5) {
      last_progress = Clock::now();
      result.stats.seconds = seconds_since(start);
      options.progress(result.stats, options.kind == SearchKind::dpor ? dpor.covered() : 0.0);
    }
    Outcome out = options.kind == SearchKind::dpor
                      ? rt.execute(program, dpor, limits, &dpor)
                      : rt.execute(program, brute, limits, options.count_classes ? &classifier : nullptr);
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
      if (options.time_limit_s > 0 && seconds_since(start) >= options.time_limit_s) break;
    }
    if (stopped) break;
    if (!more) {
      result.stats.complete = (!result.bug || !options.stop_at_first_bug) && dpor.bound_cut == 0;
      break;
    }
    if (options.max_executions && result.stats.executions >= options.max_executions) break;
    if (options.time_limit_s > 0 && seconds_since(start) >= options.time_limit_s) break;
  }
  result.stats.seconds = seconds_since(start);
  result.stats.classes = classes.size();
  result.stats.races = dpor.races;
  result.stats.bound_cut = dpor.bound_cut;
  result.stats.fallbacks = dpor.fallbacks;
  result.stats.spin_iterations = dpor.spin_iterations;
  return result;
}

}  // namespace mbcheck::sim
