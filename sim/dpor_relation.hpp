// The DPOR's dependency relation and its bookkeeping: events with vector clocks, the
// per-barrier phase histories races are looked up in, and the relation sleep sets use.
// Internal to the exhaustive search (sim/dpor.hpp, sim/explore.cpp).
#pragma once

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <new>
#include <span>
#include <unordered_map>
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


inline void join(VClock& into, const VClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}
inline bool covers(const VClock& c, AgentId agent, std::uint32_t seq) { return agent < c.size() && c[agent] >= seq; }

enum class Cat : std::uint8_t { other, init, dec, inc, obs_true, obs_false, read, write };

using ClockId = std::uint32_t;  // a clock record in the search's ClockArena
inline constexpr ClockId kNoClock = ~0u;

struct Event {
  AgentId agent = 0;
  std::uint32_t seq = 0;  // 1-based position among the agent's events
  Cat cat = Cat::other;
  bool completed = false;
  bool poll = false;         // test_wait/try_wait (it could also have run before the phase completed)
  ClockId clock = kNoClock;  // its vector clock, but for its own entry, which is `seq`
  std::int64_t phase = 0;    // counter ops: phase it ran in; observers: phase awaited
  std::int64_t detail = 0;   // what the thread observed (value read, wait answer)
};

// Storage that grows without moving what it holds: a doubling vector holds two copies of
// itself while it grows, which at the search's peak (its first, deepest execution) was most
// of its memory. Pages stay allocated from execution to execution.
class PagedWords {
 public:
  explicit PagedWords(unsigned page_bits) : bits_(page_bits) {}
  void clear() { used_ = 0; }
  // The offset of `n` new consecutive words (n <= the page size).
  std::uint32_t alloc(std::size_t n) {
    const std::uint64_t page = std::uint64_t{1} << bits_;
    if (n > page) throw std::bad_alloc();
    if ((used_ & (page - 1)) + n > page) used_ = (used_ + page - 1) & ~(page - 1);
    const std::uint64_t off = used_;
    used_ += n;
    if (used_ > std::uint64_t{0xffffffff}) throw std::bad_alloc();  // offsets are 32-bit
    while (pages_.size() <= ((off + n - 1) >> bits_)) pages_.push_back(std::make_unique<std::uint32_t[]>(page));
    return static_cast<std::uint32_t>(off);
  }
  std::uint32_t* at(std::uint32_t off) { return pages_[off >> bits_].get() + (off & ((1u << bits_) - 1)); }
  const std::uint32_t* at(std::uint32_t off) const { return pages_[off >> bits_].get() + (off & ((1u << bits_) - 1)); }
  std::uint64_t bytes() const { return pages_.size() * (std::uint64_t{4} << bits_); }
  std::uint64_t bytes_used() const { return used_ * 4; }

 private:
  unsigned bits_;
  std::uint64_t used_ = 0;
  std::vector<std::unique_ptr<std::uint32_t[]>> pages_;
};

// The join of a set of clocks (a phase's counter ops, its successful observers, a sync's
// threads). Dense while it may still grow; kept as a record in the arena (sealed) once its
// barrier has moved two phases on: one dense summary per phase was what was left growing
// with steps x agents.
struct Summary {
  VClock dense;
  ClockId sealed = kNoClock;
  void clear() {
    dense.clear();
    sealed = kNoClock;
  }
};

struct Group {
  std::span<const std::uint32_t> members;
  const Summary* summary;  // may be null: then every member is checked
};

// The vector clocks of one execution, as records: a chunk count, then the offset of each
// chunk (kClockChunk entries) in the chunk pages. Records and chunks are hash-consed: equal
// contents are kept once. What makes that pay is that an event's own entry is not kept in
// its record but read from the event (its seq); the record holds only what the event
// acquired (its agent's previous record joined with whatever it synchronised with). So an
// event that acquires nothing new shares its agent's previous record, and the threads that
// pass one barrier phase (which acquire the same clocks) share one record between them.
// Storage then grows with the distinct records, not with steps x agents.
inline constexpr std::uint32_t kClockChunk = 32;
inline constexpr std::uint32_t kZeroChunk = ~0u;  // a chunk of zeros, not stored
class ClockArena {
 public:
  void clear() {
    records_.clear();
    chunks_.clear();
    record_index_.clear();
    chunk_index_.clear();
  }
  // The record of `dense` with its entry `own` read as `own_raw` (kNoAgent: none); `like`
  // (the agent's previous record, or kNoClock) is tried first: most steps acquire nothing.
  ClockId store(VClock& dense, AgentId own, std::uint32_t own_raw, ClockId like = kNoClock) {
    std::uint32_t saved = 0;
    if (own < dense.size()) {
      saved = dense[own];
      dense[own] = own_raw;
    }
    if (like != kNoClock && record_is(like, dense)) {
      if (own < dense.size()) dense[own] = saved;
      return like;
    }
    std::size_t n = (dense.size() + kClockChunk - 1) / kClockChunk;
    chunk_hash_.assign(n, 0);
    std::size_t used = 0;  // chunks up to the last nonzero one
    for (std::size_t c = 0; c < n; ++c) {
      chunk_hash_[c] = hash_chunk(dense, c);
      if (chunk_hash_[c] != 0) used = c + 1;
    }
    n = used;
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (std::size_t c = 0; c < n; ++c) h = mix(h ^ chunk_hash_[c]);
    ClockId id = kNoClock;
    if (auto it = record_index_.find(h); it != record_index_.end() && record_equal(it->second, dense, n)) {
      id = it->second;
    } else {
      id = records_.alloc(n + 1);
      records_.at(id)[0] = static_cast<std::uint32_t>(n);
      for (std::size_t c = 0; c < n; ++c) records_.at(id)[1 + c] = chunk_of(dense, c);
      record_index_[h] = id;
    }
    if (own < dense.size()) dense[own] = saved;
    return id;
  }
  // Entry i of a record as kept (an event's own entry is read through at()).
  std::uint32_t raw(ClockId r, std::size_t i) const {
    const std::uint32_t* rec = records_.at(r);
    const std::size_t c = i / kClockChunk;
    if (c >= rec[0] || rec[1 + c] == kZeroChunk) return 0;
    return chunks_.at(rec[1 + c])[i % kClockChunk];
  }
  std::uint32_t at(const Event& e, std::size_t i) const { return i == e.agent ? e.seq : raw(e.clock, i); }
  bool covers(const Event& e, AgentId agent, std::uint32_t seq) const { return at(e, agent) >= seq; }
  void join_raw(ClockId r, VClock& into) const {
    const std::uint32_t* rec = records_.at(r);
    const std::size_t n = std::size_t{rec[0]} * kClockChunk;
    if (into.size() < n) into.resize(n, 0);
    for (std::uint32_t c = 0; c < rec[0]; ++c) {
      if (rec[1 + c] == kZeroChunk) continue;
      const std::uint32_t* w = chunks_.at(rec[1 + c]);
      std::uint32_t* d = &into[c * kClockChunk];
      for (std::uint32_t i = 0; i < kClockChunk; ++i) d[i] = std::max(d[i], w[i]);
    }
  }
  // A record's own entry is what the event acquired of its own agent: an older seq.
  void join_into(const Event& e, VClock& into) const {
    join_raw(e.clock, into);
    if (into.size() <= e.agent) into.resize(e.agent + 1, 0);
    into[e.agent] = std::max(into[e.agent], e.seq);
  }
  void expand(const Event& e, VClock& into) const {
    into.clear();
    join_into(e, into);
  }
  std::uint64_t bytes() const { return records_.bytes() + chunks_.bytes(); }
  std::uint64_t bytes_used() const { return records_.bytes_used() + chunks_.bytes_used(); }

  // Summaries (see Summary).
  void add(Summary& s, const VClock& c) {
    if (s.sealed != kNoClock) {
      join_raw(s.sealed, s.dense);
      s.sealed = kNoClock;
    }
    dpor::join(s.dense, c);
  }
  void join(VClock& into, const Summary& s) const {
    if (s.sealed != kNoClock)
      join_raw(s.sealed, into);
    else
      dpor::join(into, s.dense);
  }
  bool covered(const VClock& c, const Summary& s) const {
    if (s.sealed == kNoClock) return covers_all(c, s.dense);
    const std::uint32_t* rec = records_.at(s.sealed);
    for (std::uint32_t k = 0; k < rec[0]; ++k) {
      if (rec[1 + k] == kZeroChunk) continue;
      const std::uint32_t* w = chunks_.at(rec[1 + k]);
      for (std::uint32_t i = 0; i < kClockChunk; ++i) {
        const std::size_t at = std::size_t{k} * kClockChunk + i;
        if (w[i] > (at < c.size() ? c[at] : 0u)) return false;
      }
    }
    return true;
  }
  void seal(Summary& s) {
    if (s.sealed != kNoClock || s.dense.empty()) return;
    s.sealed = store(s.dense, kNoAgent, 0);
    VClock().swap(s.dense);  // give the memory back
  }

 private:
  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
  // 0 for a chunk of zeros (and only for one: a nonzero chunk's hash is never 0).
  static std::uint64_t hash_chunk(const VClock& dense, std::size_t c) {
    std::uint64_t h = 0;
    bool zero = true;
    const std::size_t begin = c * kClockChunk, end = std::min<std::size_t>(begin + kClockChunk, dense.size());
    for (std::size_t i = begin; i < end; ++i) {
      zero &= dense[i] == 0;
      h = (h ^ dense[i]) * 0x100000001b3ull;
    }
    return zero ? 0 : (mix(h) | 1);
  }
  bool chunk_equal(const VClock& dense, std::size_t c, std::uint32_t chunk) const {
    const std::uint32_t* w = chunks_.at(chunk);
    const std::size_t begin = c * kClockChunk;
    for (std::size_t i = 0; i < kClockChunk; ++i)
      if ((begin + i < dense.size() ? dense[begin + i] : 0u) != w[i]) return false;
    return true;
  }
  // Does record r hold exactly `dense` (whose entries past the record's chunks are zero)?
  bool record_is(ClockId r, const VClock& dense) const {
    const std::uint32_t* rec = records_.at(r);
    const std::size_t kept = std::size_t{rec[0]} * kClockChunk;
    for (std::size_t i = kept; i < dense.size(); ++i)
      if (dense[i] != 0) return false;
    for (std::size_t c = 0; c < rec[0]; ++c) {
      if (rec[1 + c] != kZeroChunk) {
        if (!chunk_equal(dense, c, rec[1 + c])) return false;
        continue;
      }
      const std::size_t begin = c * kClockChunk, end = std::min<std::size_t>(begin + kClockChunk, dense.size());
      for (std::size_t i = begin; i < end; ++i)
        if (dense[i] != 0) return false;
    }
    return true;
  }
  bool record_equal(ClockId r, const VClock& dense, std::size_t n) const {
    const std::uint32_t* rec = records_.at(r);
    if (rec[0] != n) return false;
    for (std::size_t c = 0; c < n; ++c)
      if (rec[1 + c] == kZeroChunk ? chunk_hash_[c] != 0 : !chunk_equal(dense, c, rec[1 + c])) return false;
    return true;
  }
  std::uint32_t chunk_of(const VClock& dense, std::size_t c) {
    if (chunk_hash_[c] == 0) return kZeroChunk;
    if (auto it = chunk_index_.find(chunk_hash_[c]); it != chunk_index_.end() && chunk_equal(dense, c, it->second))
      return it->second;
    const std::uint32_t chunk = chunks_.alloc(kClockChunk);
    std::uint32_t* w = chunks_.at(chunk);
    const std::size_t begin = c * kClockChunk;
    for (std::size_t i = 0; i < kClockChunk; ++i) w[i] = begin + i < dense.size() ? dense[begin + i] : 0u;
    chunk_index_[chunk_hash_[c]] = chunk;
    return chunk;
  }

  PagedWords records_{20};  // per record: its chunk count, then each chunk's offset in chunks_
  PagedWords chunks_{20};
  std::unordered_map<std::uint64_t, ClockId> record_index_;   // content hash -> a record with it
  std::unordered_map<std::uint64_t, std::uint32_t> chunk_index_;
  std::vector<std::uint64_t> chunk_hash_;  // store()'s buffer
};

// Event indices; most phases hold a few of each kind, so keep them inline.
using EventList = boost::container::small_vector<std::uint32_t, 4>;

struct PhaseEvents {
  EventList counters, incs, obs_true, obs_false;
  std::int64_t completer = -1;  // the counter op that completed the phase
  std::int64_t tx_volume = 0;   // bytes moved by the phase's tx ops so far (|expect| + |complete|)
  Summary counter_summary;  // join of all counter ops of the phase
  Summary obs_summary;      // join of all successful observers of the phase
};

struct BarrierHistory {
  std::vector<std::uint32_t> lifecycle;  // init/inval events
  std::vector<PhaseEvents> phases;       // phases[p + 1] for phase p (-1: before init)
  std::size_t sealed = 0;                // phases[0, sealed) have sealed summaries
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
