// The DPOR's dependency relation and its bookkeeping: the per-barrier phase histories races
// are looked up in, the search's nodes, and the relation sleep sets use (events and their
// clocks: sim/explore/dpor_clocks.hpp).
// Internal to the exhaustive search (sim/explore/dpor.hpp, sim/explore/explore.cpp).
#pragma once

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "sim/explore/dpor_clocks.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim::dpor {

// ---------------------------------------------------------------------------------------
// DPOR
//
// Events and the dependency relation. Every step becomes an event with a vector clock of
// the happens-before relation that DPOR reasons about (program order + dependencies). On one
// mbarrier the relation follows what each operation reads and writes:
//  - the phase is written only by completions. A completion is an event of its own, after
//    all the counter ops of its phase (it happens atomically with the last one, whichever
//    that is): running before it means running before the newest of them not yet ordered.
//  - a wait or poll reads the phase only: an observer of phase q is dependent with the
//    completions of q-1 (before it, it aliases), q (it decides its answer) and q+1 (it makes
//    it alias), and with nothing else. A counter op that does not complete a phase commutes
//    with every observer. A blocking wait (or a spin iteration) cannot run before q completes:
//    it is ordered after it, with no race. A completion does not race with an observer that
//    some counter op of its phase already follows (that op cannot move before the observer).
//  - arrivals (arrive, arrive_drop, arrive.expect_tx) and the complete_tx / copy landings
//    that leave tx-count >= 0 ("dec") commute within a phase: pending only falls, and while
//    every tx decrement leaves tx >= 0 no order of them can reach pending 0 with tx 0 before
//    the last (the remaining decrements would take tx below 0), so the phase completes once,
//    after all of them, whatever the order. The others ("inc": expect_tx, arrive.noComplete,
//    zero-byte or tx-negative decrements, ops past 2^20-1 bytes of tx in the phase) are
//    dependent with every counter op of their phase; they cut it into segments whose
//    boundaries see the same state in every order.
//  - a decrement that takes tx-count below 0 (a peer's bytes landed before the local
//    arrive.expect_tx armed the phase) is a "provisional dec": it commutes like a dec when its
//    phase completes with no inc among its ops, which is known only at the end (see
//    provisional_counter); an execution where that did not hold runs again with it an inc.
//  - a counter op of phase p ran after the completion of p-1 (before it, it would be an op
//    of p-1); an arrive-on of p > 0 also reads the "a wait saw p-1 complete" flag (PTX's
//    missing-wait rule): it is dependent with the waits of p-1 unless one of them is
//    already before it in program order or by other dependencies.
//  - init/inval are dependent with everything on the barrier; observers commute.
//  - cp.async.mbarrier.arrive.noinc's issue reads only whether the barrier is live (its
//    arrive-on is an arrival of the agent it spawns): dependent with init/inval only. The form
//    without .noinc raises pending at issue: a "provisional increment", which commutes like a
//    dec when every increment of its phase is followed there by an arrival of its thread and by
//    its own arrive-on, known only at the end (see provisional_increment); else an inc.
//  - an expect_tx by a thread that still owes its own arrival in the phase is a "provisional
//    expect": it commutes like a dec when that thread does arrive later in the phase and the
//    phase holds no inc, known only at the end (see provisional_expect); else an inc.
// Plain atomics: the usual read/write conflicts per address. Different objects commute.
// The reference enumerator (tests/differential) is what this is tested against.

// Race candidates of one kind (e.g. the counter ops of one phase), with the join of their
// clocks when it is kept.
template <class List>
inline std::span<const std::uint32_t> all_of(const List& l) {
  return {l.data(), l.size()};
}

struct Group {
  std::span<const std::uint32_t> members;
  const Summary* summary;  // may be null: then every member is checked
};

// Event indices; most phases hold a few of each kind, so keep them inline.
using EventList = boost::container::small_vector<std::uint32_t, 4>;

struct PhaseEvents {
  EventList counters, incs, obs_true, obs_false;
  std::int64_t completer = -1;  // the counter op that completed the phase
  std::int64_t tx_volume = 0;   // bytes moved by the phase's tx ops so far (|expect| + |complete|)
  std::int64_t first_provisional = -1, last_provisional = -1;  // its provisional decs (events)
  Summary counter_summary;                                     // join of all counter ops of the phase
  Summary obs_summary;                                         // join of all successful observers of the phase
  // Its provisional decs did not commute after all: it did not complete after them, or holds
  // an inc. (A barrier re-initialised starts again at phase 0 in the same history: a
  // completion before them, or an init/inval since the first, is of another incarnation.)
  bool provision_failed(std::int64_t last_lifecycle) const {
    return first_provisional >= 0 &&
           (completer < last_provisional || !incs.empty() || last_lifecycle > first_provisional);
  }
};

// The provisional increments and expects of one phase (provisional_increment,
// provisional_expect), kept beside the phases (few phases have any): the first (event), how
// many of each, the checks they still wait for (an increment 2: a later arrival of the issuing
// thread in the phase, the arrive-on landing in it; an expect 1: the later arrival), and the
// newest event that settled one.
struct IncrementChecks {
  std::uint32_t bar = 0;
  std::int64_t phase = 0;
  std::int64_t first = -1, last_settler = -1;
  std::uint32_t increments = 0, expects = 0, unsettled = 0;
  // They did not commute after all: a check is unsettled, or was settled by `failed_step` (the
  // execution's last step, when it failed: it changed nothing), or a re-init came after the
  // first, or an order with all of them first could raise pending past its limit (pending
  // starts a phase at most at the init count), or the phase of an expect holds an inc.
  bool failed(std::int64_t last_lifecycle, std::int64_t failed_step, std::int64_t init_count, bool has_inc) const {
    return unsettled > 0 || (failed_step >= 0 && last_settler == failed_step) || last_lifecycle > first ||
           init_count + increments > kMaxArriveCount || (expects > 0 && has_inc);
  }
};

struct BarrierHistory {
  std::vector<std::uint32_t> lifecycle;   // init/inval events
  std::int64_t init_count = 0;            // the count of its newest init
  std::vector<std::uint32_t> live_reads;  // events that read only whether it is live
  std::vector<PhaseEvents> phases;        // phases[p + 1] for phase p (-1: before init)
  std::size_t sealed = 0;                 // phases[0, sealed) have sealed summaries
  // Initialised at most once: its phases are of one incarnation (a re-init starts again at
  // phase 0 in the same history, so phase q-1 and q may be of two incarnations).
  bool one_incarnation() const { return lifecycle.size() <= 1; }
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

// The search's stack of nodes, one per step of the current execution (a deque: it grows
// without copying itself, see PagedWords).
using NodeStack = std::deque<DporNode>;

template <class Set>
inline bool contains(const Set& v, AgentId a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

// Does this counter op commute with the other commuting counter ops of its phase (a "dec"
// event)? Arrivals do; a complete_tx or copy landing does when it leaves tx-count >= 0 (then
// no order of the phase's ops can complete it before its last op: see the header). `tx_after`
// is tx-count after the op, `volume` the bytes the phase's tx ops moved before it.
inline bool commuting_counter(const Op& op, std::int64_t tx_after, std::int64_t volume) {
  switch (op.info().dependence) {
    case Dependence::arrival: return !op.no_complete;
    case Dependence::tx_arrival: return volume + op.arg <= kMaxTxCount;
    case Dependence::tx_decrement: return op.arg > 0 && tx_after >= 0 && volume + op.arg <= kMaxTxCount;
    default: return false;  // ordered_counter (expect_tx), pending_increment, liveness_read
  }
}

// May this decrement, which takes tx-count below 0, commute as a dec provisionally? It does
// if its phase completes with no inc among its ops: pending then reaches 0 only once every
// arrival is in, and with them every expected byte, so tx-count reaches 0 only when the last
// decrement is in too (decrements are > 0): the phase completes once, after all its ops, in
// every order. In a phase that does not complete, or holds an inc, the order of a negative
// decrement and the arrivals decides whether and where it completes (decrements of 8 and 8,
// then arrive.expect_tx(8) leave it open; the arrive first completes it at the first 8).
inline bool provisional_counter(const Op& op, std::int64_t volume) {
  return op.info().dependence == Dependence::tx_decrement && op.arg > 0 && volume + op.arg <= kMaxTxCount;
}

// May this pending increment (cp.async.mbarrier.arrive without .noinc) commute as a dec
// provisionally? It does if, at the end, every increment of its phase is followed in program
// order by an arrival of its thread in the phase and has its arrive-on land in the phase
// (IncrementChecks::failed). Then from any point of any order, the phase's ops still to
// run take pending down by at least 1 while one of them is an increment or an arrival (each
// increment's +1 is paid back by its own arrive-on, and its thread's arrival is still to come),
// so pending stays > 0 until the last of them: the phase completes where it did, after all of
// them, and the other rules' premise (pending > 0 while an arrival is still to run) holds.
// Checking an increment's pair alone is not enough: count 1, I1 by t, an arrive X by u, an
// increment I2 whose arrive-on lands in the next phase, t's arrive, I1's arrive-on. I1 then
// meets both checks and the phase completes at I1's arrive-on; X before I1 completes it at
// once (pending 1 - 1), and I1 falls into the next phase.
inline bool provisional_increment(const Op& op) { return op.info().dependence == Dependence::pending_increment; }

// May this expect_tx commute as a dec provisionally? It does if, at the end, its thread arrived
// later in the same phase (an arrive-on that takes pending down) and the phase holds no inc
// (IncrementChecks::failed). An order of the phase's ops in which that arrival has not run has
// pending > 0 (the other rules' premise: pending > 0 while an arrival is still to run), so the
// phase cannot complete before the expect_tx; one in which pending reached 0 holds every
// arrival, hence every expect_tx before its arrival, so tx-count there is the bytes expected
// minus those landed so far, as in the rules above with every byte expected by an arrival:
// the phase completes once, after all its ops, in every order, or in none. Nor can the order
// make a misuse of it: pending > 0 rules out expect_tx bringing tx to 0 with no arrival
// pending, and the phase's volume bounds tx-count. A thread that never arrives there (or only
// in another phase) leaves the phase free to complete before its expect_tx, which then falls
// into the next phase: count 2, expect_tx by t, arrivals by u and v; u, v completes at once.
inline bool provisional_expect(const Op& op, std::int64_t volume) {
  return op.info().effect == Effect::expect_tx && op.arg > 0 && volume + op.arg <= kMaxTxCount;
}

// How far this op takes its phase's pending count down (arrivals; 0 for the others).
inline std::int64_t pending_taken(const Op& op) {
  switch (op.info().effect) {
    case Effect::arrive:
    case Effect::arrive_drop: return op.arg;
    case Effect::arrive_expect_tx: return 1;
    default: return 0;
  }
}

// Would this counter op complete the barrier's phase if it ran now?
inline bool would_complete(const Op& op, const MbarrierState& b) {
  switch (op.info().effect) {
    case Effect::arrive:
    case Effect::arrive_drop: return b.pending == op.arg && b.tx == 0;
    case Effect::arrive_expect_tx: return b.pending == 1 && b.tx + op.arg == 0;
    case Effect::complete_tx: return b.pending == 0 && b.tx == op.arg;
    default: return false;
  }
}

// Bytes a counter op adds to its phase's tx volume (expect or complete).
inline bool moves_tx(const Op& op) {
  const Effect e = op.info().effect;
  return e == Effect::arrive_expect_tx || e == Effect::expect_tx || e == Effect::complete_tx;
}

// May a sleeping agent `q` stay asleep when `p` runs now? The relation above, judged in the
// state both are about to run from.
// An await that also waits for words its loop read (Agent::await_reads) is enabled or
// disabled by a write to one of them.
inline bool wakes_read_await(const Agent& writer, const Agent& waiter) {
  if (!is_atomic(writer.op.kind) || writer.op.kind == OpKind::atomic_load || !waiter.op.await) return false;
  for (const auto& r : waiter.await_reads)
    if (r.first == writer.op.addr) return true;
  return false;
}

inline bool independent_now(const Agent& p, const Agent& q) {
  if (wakes_read_await(p, q) || wakes_read_await(q, p)) return false;
  if (is_atomic(p.op.kind) || is_atomic(q.op.kind)) {
    if (!is_atomic(p.op.kind) || !is_atomic(q.op.kind) || p.op.addr != q.op.addr) return true;
    return p.op.kind == OpKind::atomic_load && q.op.kind == OpKind::atomic_load;
  }
  if (p.op.info().dependence == Dependence::block_arrive || q.op.info().dependence == Dependence::block_arrive) {
    // bar.arrive 0 against another use of its CTA's barrier 0: one of them may complete the
    // generation the other arrives in.
    const auto is_block = [](const Op& o) {
      return o.info().dependence == Dependence::block_arrive || o.info().dependence == Dependence::block_sync;
    };
    return !(is_block(p.op) && is_block(q.op) && p.cta == q.cta);
  }
  if (!on_barrier(p.op) || !on_barrier(q.op) || p.op.bar != q.op.bar) return true;
  const MbarrierState& b = *p.op.bar;
  if (!b.is_live()) return false;
  const Op& x = p.op;
  const Op& y = q.op;
  if (x.info().dependence == Dependence::lifecycle || y.info().dependence == Dependence::lifecycle) return false;
  // A liveness read commutes with everything but init/inval.
  if (x.info().dependence == Dependence::liveness_read || y.info().dependence == Dependence::liveness_read) return true;
  if (is_observer(x) && is_observer(y)) return true;
  if (is_observer(x) || is_observer(y)) {
    const Op& o = is_observer(x) ? x : y;
    const Op& c = is_observer(x) ? y : x;
    if (would_complete(c, b)) return false;  // it moves the phase the observer reads
    // The observer would set the "a wait saw phase-1 complete" flag the arrival checks.
    return !(is_arrival(c) && b.phase > 0 && !b.phase_observed && o.arg == b.phase - 1);
  }
  if (would_complete(x, b) || would_complete(y, b)) return false;
  const std::int64_t both_dec = (is_tx_decrement(x) ? x.arg : 0) + (is_tx_decrement(y) ? y.arg : 0);
  return commuting_counter(x, b.tx - both_dec, 0) && commuting_counter(y, b.tx - both_dec, 0);
}

}  // namespace mbcheck::sim::dpor
