// The DPOR's events and their vector clocks: working clocks of chunk references while an event
// is built (WorkClock), and the arena one execution's clocks are kept in (hash-consed records;
// see ClockArena). Internal to the exhaustive search (sim/explore/dpor.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim::dpor {

using VClock = std::vector<std::uint32_t>;  // a dense clock (class keys, reports)

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

// Event slots that never move (a doubling vector would hold two copies of itself at the
// search's deepest execution), in pages of 1,024: finding a slot is a shift and a mask (a
// std::deque's blocks of 12 events cost a division per access, 9% of a 3,072-thread search).
class EventSlots {
 public:
  std::size_t size() const { return size_; }
  Event& operator[](std::size_t i) { return pages_[i >> kBits][i & kMask]; }
  const Event& operator[](std::size_t i) const { return pages_[i >> kBits][i & kMask]; }
  void emplace_back() {
    if ((size_ >> kBits) == pages_.size()) pages_.push_back(std::make_unique<Event[]>(std::size_t{1} << kBits));
    ++size_;
  }

 private:
  static constexpr unsigned kBits = 10;
  static constexpr std::size_t kMask = (std::size_t{1} << kBits) - 1;
  std::vector<std::unique_ptr<Event[]>> pages_;
  std::size_t size_ = 0;
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

// Clocks are kept in chunks of kClockChunk entries; the arena stores each distinct chunk once.
inline constexpr std::uint32_t kClockChunk = 32;
inline constexpr std::uint32_t kZeroChunk = ~0u;  // a chunk of zeros, not stored

// A clock being built or joined (an event's, a phase's summary). Per chunk it refers to a
// chunk stored in the arena (shared, never written), to kZeroChunk, or to a chunk of its own
// (written in place). Joining a stored clock into it copies chunk references where it can
// (an equal or a dominated chunk costs one comparison), so a step's work is in proportion to
// the chunks its clock has and the chunks that change, not to the agents' count.
class WorkClock {
 public:
  void clear() {
    refs_.clear();
    n_own_ = 0;
    same_as_ = kNoClock;
  }
  bool empty() const { return refs_.empty(); }
  // A copy of `other` (own chunks copied, not the buffer's capacity).
  void assign(const WorkClock& other) {
    refs_ = other.refs_;
    n_own_ = other.n_own_;
    same_as_ = other.same_as_;
    if (own_.size() < other.own_.size()) own_.resize(other.own_.size());
    std::copy_n(other.own_.begin(), std::size_t{n_own_} * kClockChunk, own_.begin());
  }
  void release_memory() { WorkClock().swap(*this); }
  void swap(WorkClock& other) noexcept {
    refs_.swap(other.refs_);
    own_.swap(other.own_);
    std::swap(n_own_, other.n_own_);
    std::swap(same_as_, other.same_as_);
  }

 private:
  friend class ClockArena;
  // Stored chunks are offsets of kClockChunk-aligned words (even); kZeroChunk and own chunks
  // (slot * 2 + 1) are odd.
  static bool is_own(std::uint32_t ref) { return ref != kZeroChunk && (ref & 1u) != 0; }
  std::uint32_t* own(std::uint32_t ref) { return &own_[std::size_t{ref >> 1} * kClockChunk]; }
  const std::uint32_t* own(std::uint32_t ref) const { return &own_[std::size_t{ref >> 1} * kClockChunk]; }
  std::vector<std::uint32_t> refs_;  // per chunk
  std::vector<std::uint32_t> own_;   // the first n_own_ chunks are in use (the rest: spare capacity)
  std::uint32_t n_own_ = 0;
  // The stored record this clock is a copy of, while it is one (kNoClock once anything
  // changed it): joins, coverage and storing of that record are then O(1), not a look at
  // every chunk (a 3,072-thread clock has 96).
  ClockId same_as_ = kNoClock;
};

// The join of a set of clocks (a phase's counter ops, its successful observers, a sync's
// threads). A WorkClock while it may still grow; kept as a record in the arena (sealed) once
// its barrier has moved two phases on.
struct Summary {
  WorkClock dense;
  ClockId sealed = kNoClock;
  // A record `dense` is known to hold (kNoClock: none): adding an event whose clock is that
  // record is then only its own entry (the waiters of one phase share one record).
  ClockId holds = kNoClock;
  void clear() {
    dense.clear();
    sealed = kNoClock;
    holds = kNoClock;
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
class ClockArena {
 public:
  void clear() {
    records_.clear();
    chunks_.clear();
    record_index_.clear();
    chunk_index_.clear();
  }
  // The record of `w` with its entry `own` set to `own_raw` (kNoAgent: none); `like` (the
  // agent's previous record, or kNoClock) is tried first: most steps acquire nothing. `w` is
  // left holding the stored chunks (and `own_raw` as its entry `own`).
  ClockId store(WorkClock& w, AgentId own, std::uint32_t own_raw, ClockId like = kNoClock) {
    if (own != kNoAgent && get(w, own) != own_raw) set(w, own, own_raw);
    if (w.same_as_ != kNoClock) return w.same_as_;
    const std::uint32_t* like_rec = like != kNoClock ? records_.at(like) : nullptr;
    std::size_t n = w.refs_.size();
    for (std::size_t c = 0; c < n; ++c) {
      const std::uint32_t ref = w.refs_[c];
      if (!WorkClock::is_own(ref)) continue;
      const std::uint32_t* words = w.own(ref);
      // The previous record's chunk, if equal, saves a lookup (the own entry's chunk).
      if (like_rec && c < like_rec[0] && like_rec[1 + c] != kZeroChunk &&
          std::equal(words, words + kClockChunk, chunks_.at(like_rec[1 + c])))
        w.refs_[c] = like_rec[1 + c];
      else
        w.refs_[c] = intern(words);
    }
    w.n_own_ = 0;
    while (n > 0 && w.refs_[n - 1] == kZeroChunk) --n;
    if (like_rec && record_equal(like, w.refs_.data(), n)) return w.same_as_ = like;
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (std::size_t c = 0; c < n; ++c) h = mix(h ^ w.refs_[c]);
    if (auto it = record_index_.find(h); it != record_index_.end() && record_equal(it->second, w.refs_.data(), n))
      return w.same_as_ = it->second;
    const ClockId id = records_.alloc(n + 1);
    std::uint32_t* rec = records_.at(id);
    rec[0] = static_cast<std::uint32_t>(n);
    std::copy_n(w.refs_.data(), n, rec + 1);
    record_index_[h] = id;
    return w.same_as_ = id;
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

  // Working clocks.
  std::uint32_t get(const WorkClock& w, std::size_t i) const {
    const std::size_t c = i / kClockChunk;
    if (c >= w.refs_.size() || w.refs_[c] == kZeroChunk) return 0;
    return words(w, w.refs_[c])[i % kClockChunk];
  }
  bool covers(const WorkClock& w, AgentId agent, std::uint32_t seq) const { return get(w, agent) >= seq; }
  void set(WorkClock& w, std::size_t i, std::uint32_t v) const { writable(w, i / kClockChunk)[i % kClockChunk] = v; }
  // `into` made a copy of record r (chunk references only).
  void assign_raw(ClockId r, WorkClock& into) const {
    const std::uint32_t* rec = records_.at(r);
    into.n_own_ = 0;
    into.refs_.assign(rec + 1, rec + 1 + rec[0]);
    into.same_as_ = r;
  }
  // Into `into` the join of a summary that is known to hold all of `into` (a summary that
  // holds an event holds that event's past): a copy of its chunk references when it is
  // sealed, not a comparison of every entry.
  void join_dominating(WorkClock& into, const Summary& s) const {
    if (s.sealed != kNoClock)
      assign_raw(s.sealed, into);
    else
      join(into, s.dense);
  }
  // Does the summary hold event (agent, seq)?
  bool covers(const Summary& s, AgentId agent, std::uint32_t seq) const {
    return (s.sealed != kNoClock ? raw(s.sealed, agent) : get(s.dense, agent)) >= seq;
  }
  void join_raw(ClockId r, WorkClock& into) const {
    if (into.same_as_ == r) return;
    into.same_as_ = kNoClock;
    const std::uint32_t* rec = records_.at(r);
    if (into.refs_.size() < rec[0]) into.refs_.resize(rec[0], kZeroChunk);
    for (std::uint32_t c = 0; c < rec[0]; ++c)
      if (rec[1 + c] != kZeroChunk) join_chunk(into, c, rec[1 + c], chunks_.at(rec[1 + c]));
  }
  void join(WorkClock& into, const WorkClock& from) const {
    if (&into == &from || (from.same_as_ != kNoClock && from.same_as_ == into.same_as_)) return;
    into.same_as_ = kNoClock;
    if (into.refs_.size() < from.refs_.size()) into.refs_.resize(from.refs_.size(), kZeroChunk);
    for (std::size_t c = 0; c < from.refs_.size(); ++c) {
      const std::uint32_t ref = from.refs_[c];
      if (ref == kZeroChunk) continue;
      if (WorkClock::is_own(ref))
        join_chunk(into, c, kZeroChunk, from.own(ref));
      else
        join_chunk(into, c, ref, chunks_.at(ref));
    }
  }
  // A record's own entry is what the event acquired of its own agent: an older seq.
  void join_into(const Event& e, WorkClock& into) const {
    join_raw(e.clock, into);
    if (get(into, e.agent) < e.seq) set(into, e.agent, e.seq);
  }
  void expand(const Event& e, WorkClock& into) const {
    into.clear();
    join_into(e, into);
  }
  void to_dense(const WorkClock& w, std::vector<std::uint32_t>& dense) const {
    dense.assign(w.refs_.size() * kClockChunk, 0);
    for (std::size_t c = 0; c < w.refs_.size(); ++c)
      if (w.refs_[c] != kZeroChunk) std::copy_n(words(w, w.refs_[c]), kClockChunk, &dense[c * kClockChunk]);
  }
  std::uint64_t bytes_used() const { return records_.bytes_used() + chunks_.bytes_used(); }

  // Summaries (see Summary).
  // Adds event e, whose clock is `c` but for its own entry (which is e.seq).
  void add(Summary& s, const WorkClock& c, const Event& e) const {
    if (s.sealed != kNoClock) {
      join_raw(s.sealed, s.dense);
      s.holds = s.sealed;
      s.sealed = kNoClock;
    }
    if (c.same_as_ == kNoClock || c.same_as_ != s.holds) {
      join(s.dense, c);
      s.holds = c.same_as_;  // (the dense clock only grows: what it held, it still holds)
    }
    if (get(s.dense, e.agent) < e.seq) set(s.dense, e.agent, e.seq);
  }
  void join(WorkClock& into, const Summary& s) const {
    if (s.sealed != kNoClock)
      join_raw(s.sealed, into);
    else
      join(into, s.dense);
  }
  // Does `c` cover every entry of `s`?
  bool covered(const WorkClock& c, const Summary& s) const {
    if (s.sealed != kNoClock && c.same_as_ == s.sealed) return true;
    if (s.sealed == kNoClock) {
      for (std::size_t k = 0; k < s.dense.refs_.size(); ++k) {
        const std::uint32_t ref = s.dense.refs_[k];
        if (ref != kZeroChunk && !chunk_covered(c, k, ref, words(s.dense, ref))) return false;
      }
      return true;
    }
    const std::uint32_t* rec = records_.at(s.sealed);
    for (std::uint32_t k = 0; k < rec[0]; ++k)
      if (rec[1 + k] != kZeroChunk && !chunk_covered(c, k, rec[1 + k], chunks_.at(rec[1 + k]))) return false;
    return true;
  }
  void seal(Summary& s) {
    if (s.sealed != kNoClock || s.dense.empty()) return;
    s.sealed = store(s.dense, kNoAgent, 0);
    s.dense.release_memory();
    s.holds = kNoClock;
  }

 private:
  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
  const std::uint32_t* words(const WorkClock& w, std::uint32_t ref) const {
    return WorkClock::is_own(ref) ? w.own(ref) : chunks_.at(ref);
  }
  // Chunk c of `w` as its own chunk, to write (copied from what it referred to).
  std::uint32_t* writable(WorkClock& w, std::size_t c) const {
    w.same_as_ = kNoClock;
    if (w.refs_.size() <= c) w.refs_.resize(c + 1, kZeroChunk);
    const std::uint32_t ref = w.refs_[c];
    if (WorkClock::is_own(ref)) return w.own(ref);
    const std::uint32_t slot = w.n_own_++;
    if (w.own_.size() < std::size_t{w.n_own_} * kClockChunk) w.own_.resize(std::size_t{w.n_own_} * kClockChunk);
    std::uint32_t* d = &w.own_[std::size_t{slot} * kClockChunk];
    if (ref == kZeroChunk)
      std::fill_n(d, kClockChunk, 0u);
    else
      std::copy_n(chunks_.at(ref), kClockChunk, d);
    w.refs_[c] = slot << 1 | 1u;
    return d;
  }
  // Chunk c of `into` joined with the chunk `src` (stored as `src_ref`, or kZeroChunk when it
  // is another clock's own chunk); into.refs_ has chunk c.
  void join_chunk(WorkClock& into, std::size_t c, std::uint32_t src_ref, const std::uint32_t* src) const {
    const std::uint32_t ref = into.refs_[c];
    const bool stored = src_ref != kZeroChunk;
    if (stored && ref == src_ref) return;
    if (ref == kZeroChunk && stored) {
      into.refs_[c] = src_ref;
      return;
    }
    if (ref != kZeroChunk && !WorkClock::is_own(ref)) {
      // Two stored chunks: where one dominates, the join is that one. (Branch-free: the
      // compiler vectorises the 32 comparisons.)
      const std::uint32_t* __restrict d = chunks_.at(ref);
      std::uint32_t d_below = 0, s_below = 0;
      for (std::uint32_t i = 0; i < kClockChunk; ++i) {
        d_below |= static_cast<std::uint32_t>(d[i] < src[i]);
        s_below |= static_cast<std::uint32_t>(src[i] < d[i]);
      }
      if (!d_below) return;
      if (!s_below && stored) {
        into.refs_[c] = src_ref;
        return;
      }
    }
    std::uint32_t* d = writable(into, c);
    for (std::uint32_t i = 0; i < kClockChunk; ++i) d[i] = std::max(d[i], src[i]);
  }
  bool chunk_covered(const WorkClock& c, std::size_t k, std::uint32_t src_ref, const std::uint32_t* src) const {
    const std::uint32_t ref = k < c.refs_.size() ? c.refs_[k] : kZeroChunk;
    if (ref == src_ref && !WorkClock::is_own(ref)) return true;  // the same stored chunk (or both zero)
    std::uint32_t above = 0;
    if (ref == kZeroChunk) {  // (a stored src is never all zeros; a summary's own chunk may be)
      for (std::uint32_t i = 0; i < kClockChunk; ++i) above |= src[i];
      return above == 0;
    }
    const std::uint32_t* __restrict d = words(c, ref);
    for (std::uint32_t i = 0; i < kClockChunk; ++i) above |= static_cast<std::uint32_t>(src[i] > d[i]);
    return above == 0;
  }
  // The stored chunk with these words (kZeroChunk for zeros).
  std::uint32_t intern(const std::uint32_t* words) {
    std::uint64_t h = 0;
    bool zero = true;
    for (std::uint32_t i = 0; i < kClockChunk; ++i) {
      zero &= words[i] == 0;
      h = (h ^ words[i]) * 0x100000001b3ull;
    }
    if (zero) return kZeroChunk;
    h = mix(h);
    if (auto it = chunk_index_.find(h);
        it != chunk_index_.end() && std::equal(words, words + kClockChunk, chunks_.at(it->second)))
      return it->second;
    const std::uint32_t chunk = chunks_.alloc(kClockChunk);
    std::copy_n(words, kClockChunk, chunks_.at(chunk));
    chunk_index_[h] = chunk;
    return chunk;
  }
  bool record_equal(ClockId r, const std::uint32_t* refs, std::size_t n) const {
    const std::uint32_t* rec = records_.at(r);
    return rec[0] == n && std::equal(refs, refs + n, rec + 1);
  }

  PagedWords records_{20};  // per record: its chunk count, then each chunk's offset in chunks_
  PagedWords chunks_{20};   // chunks of kClockChunk words (so every offset is even)
  std::unordered_map<std::uint64_t, ClockId> record_index_;  // content hash -> a record with it
  std::unordered_map<std::uint64_t, std::uint32_t> chunk_index_;
};

}  // namespace mbcheck::sim::dpor
