// The DPOR's events and their vector clocks: dense clocks while an event is built, and the
// arena one execution's clocks are kept in (hash-consed records; see ClockArena). Internal
// to the exhaustive search (sim/explore/dpor.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim::dpor {

using VClock = std::vector<std::uint32_t>;

inline bool covers_all(const VClock& c, const VClock& other) {
  const std::size_t n = std::min(c.size(), other.size());
  for (std::size_t i = 0; i < n; ++i)
    if (other[i] > c[i]) return false;
  for (std::size_t i = n; i < other.size(); ++i)
    if (other[i] != 0) return false;
  return true;
}

inline void join(VClock& into, const VClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}
inline bool covers(const VClock& c, AgentId agent, std::uint32_t seq) { return agent < c.size() && c[agent] >= seq; }

// live_read: reads only whether its barrier is live (cp.async.mbarrier.arrive.noinc).
// spin_noop: a failed poll that was a spin iteration; it changed nothing, so it is no event of
// the partial order (no races, skipped in reversals and class keys; its agent's next event
// numbers on from the one before it).
enum class Cat : std::uint8_t { other, init, dec, inc, obs_true, obs_false, read, write, live_read, spin_noop };

using ClockId = std::uint32_t;  // a clock record in the search's ClockArena
inline constexpr ClockId kNoClock = ~0u;

struct Event {
  AgentId agent = 0;
  std::uint32_t seq = 0;  // 1-based position among the agent's events
  Cat cat = Cat::other;
  bool completed = false;
  bool poll = false;         // test_wait/try_wait (it could also have run before the phase completed)
  bool provisional = false;  // a provisional dec (sim/explore/dpor_relation.hpp)
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
    while (pages_.size() <= ((off + n - 1) >> bits_))
      pages_.push_back(
          std::make_unique_for_overwrite<std::uint32_t[]>(page));  // untouched words cost nothing (no zeroing)
    return static_cast<std::uint32_t>(off);
  }
  std::uint32_t* at(std::uint32_t off) { return pages_[off >> bits_].get() + (off & ((1u << bits_) - 1)); }
  const std::uint32_t* at(std::uint32_t off) const { return pages_[off >> bits_].get() + (off & ((1u << bits_) - 1)); }
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
  std::unordered_map<std::uint64_t, ClockId> record_index_;  // content hash -> a record with it
  std::unordered_map<std::uint64_t, std::uint32_t> chunk_index_;
  std::vector<std::uint64_t> chunk_hash_;  // store()'s buffer
};

}  // namespace mbcheck::sim::dpor
