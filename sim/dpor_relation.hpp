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
//  - a counter op of phase p ran after the completion of p-1 (before it, it would be an op
//    of p-1); an arrive-on of p > 0 also reads the "a wait saw p-1 complete" flag (PTX's
//    missing-wait rule): it is dependent with the waits of p-1 unless one of them is
//    already before it in program order or by other dependencies.
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

// An event's vector clock as it is kept: chunks of kClockChunk entries in the search's arena,
// shared with the agent's previous event wherever they are equal (almost all are: a step
// changes the components of the few agents it synchronises with). An execution of n steps
// over m agents keeps about n * m / kClockChunk indices and the chunks that changed, not
// n * m entries (measured in bench_cluster: cluster-gemm 4x2, 3,072 agents).
inline constexpr std::uint32_t kClockChunk = 32;
inline constexpr std::uint32_t kZeroChunk = ~0u;  // a chunk of zeros, not stored
struct StoredClock {
  std::vector<std::uint32_t> chunks;  // arena index of each chunk, or kZeroChunk
};
class ClockArena {
 public:
  void clear() { words_.clear(); }
  // Keeps `dense` as `out`, reusing the chunks of `like` (the agent's previous event) that equal it.
  void store(const VClock& dense, const StoredClock* like, StoredClock& out) {
    const std::size_t n = (dense.size() + kClockChunk - 1) / kClockChunk;
    out.chunks.resize(n);
    for (std::size_t c = 0; c < n; ++c) {
      const std::size_t begin = c * kClockChunk, end = std::min<std::size_t>(begin + kClockChunk, dense.size());
      bool zero = true;
      for (std::size_t i = begin; i < end && zero; ++i) zero = dense[i] == 0;
      if (zero) {
        out.chunks[c] = kZeroChunk;
        continue;
      }
      if (like && c < like->chunks.size() && like->chunks[c] != kZeroChunk &&
          std::equal(dense.begin() + static_cast<std::ptrdiff_t>(begin), dense.begin() + static_cast<std::ptrdiff_t>(end),
                     words_.begin() + static_cast<std::ptrdiff_t>(like->chunks[c]))) {
        out.chunks[c] = like->chunks[c];
        continue;
      }
      out.chunks[c] = static_cast<std::uint32_t>(words_.size());
      words_.insert(words_.end(), dense.begin() + static_cast<std::ptrdiff_t>(begin),
                    dense.begin() + static_cast<std::ptrdiff_t>(end));
      words_.resize(out.chunks[c] + kClockChunk, 0);
    }
  }
  std::uint32_t at(const StoredClock& s, std::size_t i) const {
    const std::size_t c = i / kClockChunk;
    if (c >= s.chunks.size() || s.chunks[c] == kZeroChunk) return 0;
    return words_[s.chunks[c] + i % kClockChunk];
  }
  bool covers(const StoredClock& s, AgentId agent, std::uint32_t seq) const { return at(s, agent) >= seq; }
  void join_into(const StoredClock& s, VClock& into) const {
    const std::size_t n = s.chunks.size() * kClockChunk;
    if (into.size() < n) into.resize(n, 0);
    for (std::size_t c = 0; c < s.chunks.size(); ++c) {
      if (s.chunks[c] == kZeroChunk) continue;
      const std::uint32_t* w = &words_[s.chunks[c]];
      std::uint32_t* d = &into[c * kClockChunk];
      for (std::uint32_t i = 0; i < kClockChunk; ++i) d[i] = std::max(d[i], w[i]);
    }
  }
  void expand(const StoredClock& s, VClock& into) const {
    into.assign(s.chunks.size() * kClockChunk, 0);
    join_into(s, into);
  }
  std::size_t words() const { return words_.size(); }

 private:
  std::vector<std::uint32_t> words_;
};

enum class Cat : std::uint8_t { other, init, dec, inc, obs_true, obs_false, read, write };

struct Event {
  AgentId agent = 0;
  std::uint32_t seq = 0;  // 1-based position among the agent's events
  Cat cat = Cat::other;
  std::int64_t phase = 0;  // counter ops: phase it ran in; observers: phase awaited
  bool completed = false;
  bool poll = false;        // test_wait/try_wait (it could also have run before the phase completed)
  std::int64_t detail = 0;  // what the thread observed (value read, wait answer)
  StoredClock clock;        // in the search's ClockArena
};

// Event indices; most phases hold a few of each kind, so keep them inline.
using EventList = boost::container::small_vector<std::uint32_t, 4>;

struct PhaseEvents {
  EventList counters, incs, obs_true, obs_false;
  std::int64_t completer = -1;  // the counter op that completed the phase
  std::int64_t tx_volume = 0;   // bytes moved by the phase's tx ops so far (|expect| + |complete|)
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

inline bool is_arrival(const Op& op) {
  return op.kind == OpKind::arrive || op.kind == OpKind::arrive_drop || op.kind == OpKind::arrive_expect_tx;
}
inline bool is_observer(const Op& op) {
  return op.kind == OpKind::wait || op.kind == OpKind::test_wait || op.kind == OpKind::try_wait;
}
inline bool is_tx_decrement(const Op& op) { return op.kind == OpKind::complete_tx || op.kind == OpKind::copy_land; }

// Does this counter op commute with the other commuting counter ops of its phase (a "dec"
// event)? Arrivals do; a complete_tx or copy landing does when it leaves tx-count >= 0 (then
// no order of the phase's ops can complete it before its last op: see the header). `tx_after`
// is tx-count after the op, `volume` the bytes the phase's tx ops moved before it.
inline bool commuting_counter(const Op& op, std::int64_t tx_after, std::int64_t volume) {
  switch (op.kind) {
    case OpKind::arrive: return !op.no_complete;
    case OpKind::arrive_drop: return true;
    case OpKind::arrive_expect_tx: return volume + op.arg <= kMaxTxCount;
    case OpKind::complete_tx:
    case OpKind::copy_land: return op.arg > 0 && tx_after >= 0 && volume + op.arg <= kMaxTxCount;
    default: return false;  // expect_tx, arrive.noComplete
  }
}

// Would this counter op complete the barrier's phase if it ran now?
inline bool would_complete(const Op& op, const MbarrierState& b) {
  switch (op.kind) {
    case OpKind::arrive:
    case OpKind::arrive_drop: return b.pending == op.arg && b.tx == 0;
    case OpKind::arrive_expect_tx: return b.pending == 1 && b.tx + op.arg == 0;
    case OpKind::complete_tx:
    case OpKind::copy_land: return b.pending == 0 && b.tx == op.arg;
    default: return false;
  }
}

// May a sleeping agent `q` stay asleep when `p` runs now? The relation above, judged in the
// state both are about to run from.
inline bool independent_now(const Agent& p, const Agent& q) {
  if (is_atomic(p.op.kind) || is_atomic(q.op.kind)) {
    if (!is_atomic(p.op.kind) || !is_atomic(q.op.kind) || p.op.addr != q.op.addr) return true;
    return p.op.kind == OpKind::atomic_load && q.op.kind == OpKind::atomic_load;
  }
  auto on_barrier = [](const Op& op) {
    return op.bar && op.kind != OpKind::bulk_copy && op.kind != OpKind::block_sync && op.kind != OpKind::bulk_store;
  };
  if (!on_barrier(p.op) || !on_barrier(q.op) || p.op.bar != q.op.bar) return true;
  const MbarrierState& b = *p.op.bar;
  if (!b.is_live()) return false;
  const Op& x = p.op;
  const Op& y = q.op;
  if (x.kind == OpKind::init || x.kind == OpKind::inval || y.kind == OpKind::init || y.kind == OpKind::inval)
    return false;
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
