// The DPOR's dependency relation and its bookkeeping: events with vector clocks, the
// per-barrier phase histories races are looked up in, and the relation sleep sets use.
// Internal to the exhaustive search (sim/dpor.hpp, sim/explore.cpp).
#pragma once

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/runtime.hpp"

namespace mbcheck::sim::dpor {

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

inline bool covers_all(const VClock& c, const VClock& other) {
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
inline std::span<const std::uint32_t> all_of(const List& l) {
  return {l.data(), l.size()};
}

struct Group {
  std::span<const std::uint32_t> members;
  const std::vector<std::uint32_t>* summary;  // may be null: then every member is checked
};

inline void join(VClock& into, const VClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}
inline bool covers(const VClock& c, AgentId agent, std::uint32_t seq) { return agent < c.size() && c[agent] >= seq; }

enum class Cat : std::uint8_t { other, init, dec, inc, obs_true, obs_false, read, write };

struct Event {
  AgentId agent = 0;
  std::uint32_t seq = 0;  // 1-based position among the agent's events
  Cat cat = Cat::other;
  std::int64_t phase = 0;  // counter ops: phase it ran in; observers: phase awaited
  bool completed = false;
  bool poll = false;        // test_wait/try_wait (it could also have run before the phase completed)
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
inline bool contains(const Set& v, AgentId a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

// What an operation would be if it ran now (for sleep sets).
struct Meta {
  Cat cat = Cat::other;
  std::int64_t phase = 0;  // counter ops: the phase it runs in; observers: the phase awaited
};

inline bool is_arrival(const Op& op) {
  return op.kind == OpKind::arrive || op.kind == OpKind::arrive_drop || op.kind == OpKind::arrive_expect_tx;
}

inline Meta meta_now(const Agent& a) {
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
inline bool dependent(const Meta& a, const Meta& b) {
  if (a.cat == Cat::init || b.cat == Cat::init) return true;
  const bool a_obs = a.cat == Cat::obs_true, b_obs = b.cat == Cat::obs_true;
  if (a_obs && b_obs) return false;
  if (!a_obs && !b_obs) return a.phase != b.phase || a.cat == Cat::inc || b.cat == Cat::inc;
  const Meta& o = a_obs ? a : b;
  const Meta& c = a_obs ? b : a;
  return c.phase >= o.phase - 1 && c.phase <= o.phase + 1;
}

// May a sleeping agent `q` stay asleep when `p` runs now?
inline bool independent_now(const Agent& p, const Agent& q) {
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

}  // namespace mbcheck::sim::dpor
