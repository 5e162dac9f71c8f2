// The race detector's two vector-clock representations, one interface (RaceDetector picks one
// per execution by its thread count, sim/runtime/race_detector.hpp):
// - DenseClock: one entry per agent, the first 16 inline, the rest in a vector. A join is a
//   fixed-width max inlined at its call, then a vectorised max over the rest: cheapest where
//   the agents are few (a fuzzing run's 14).
// - SharedClock: entries in chunks of 64, each chunk shared copy-on-write between the clocks
//   that hold the same entries. Threads that pass one barrier phase acquire the same released
//   clock and so share its chunks; a join compares chunk pointers and looks entry by entry
//   only at chunks that differ, so a step costs what it changes, not the agents' count (dense
//   clocks made every acquire and release of a 3,072-thread cluster-gemm a 12 KiB max, and
//   the clocks 37 MB).
// Both: entries past size() read 0; at(i) grows the clock; join(from, limit) is the
// element-wise max, where `limit` says every entry from it on is 0 in both clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mbcheck::sim {

namespace race_clocks {
// The element-wise max of n entries (vectorised where the machine can: race_clocks.cpp).
void max_into(std::uint32_t* __restrict d, const std::uint32_t* __restrict s, std::size_t n);
}  // namespace race_clocks

// 32-bit entries joined by max: the first N inline, always all valid (zeros where unset), so
// that a join is a fixed-width max inlined at its call (no size check, no resize, no call);
// entries past them in a tail. Unset entries read 0. A dense clock is one (N: the agents a
// fuzzing run has), and so is the race detector's phase knowledge (N: a pipeline's barriers).
template <std::size_t N>
class InlineMaxEntries {
 public:
  static constexpr std::size_t kInline = N;

  InlineMaxEntries() = default;
  InlineMaxEntries(const InlineMaxEntries&) = default;
  InlineMaxEntries(InlineMaxEntries&&) noexcept = default;
  InlineMaxEntries& operator=(InlineMaxEntries&&) noexcept = default;
  // A copy (a release's first, a copy agent's start, each waiter of a sync): the inline entries,
  // and the tail only where either clock has one (std::vector's assignment is a call even
  // between two empty vectors, and fuzzing runs' clocks have none).
  InlineMaxEntries& operator=(const InlineMaxEntries& o) {
    if (this == &o) return *this;
    for (std::size_t i = 0; i < kInline; ++i) head_[i] = o.head_[i];
    if (!tail_.empty() || !o.tail_.empty()) tail_ = o.tail_;
    return *this;
  }

  std::size_t size() const { return kInline + tail_.size(); }
  bool empty() const {  // all entries 0
    for (std::uint32_t e : head_)
      if (e) return false;
    for (std::uint32_t e : tail_)
      if (e) return false;
    return true;
  }
  bool has_storage() const { return tail_.capacity() != 0; }  // a tail buffer worth keeping for reuse
  std::uint32_t operator[](std::size_t i) const {
    if (i < kInline) return head_[i];
    i -= kInline;
    return i < tail_.size() ? tail_[i] : 0;
  }
  std::uint32_t& at(std::size_t i) {
    if (i < kInline) return head_[i];
    i -= kInline;
    if (tail_.size() <= i) tail_.resize(i + 1, 0);
    return tail_[i];
  }
  void raise(std::size_t i, std::uint32_t value) {  // entry i = max(entry i, value)
    std::uint32_t& e = at(i);
    if (e < value) e = value;
  }
  void clear() {
    for (std::uint32_t& e : head_) e = 0;
    tail_.clear();
  }
  void swap(InlineMaxEntries& o) noexcept {
    for (std::size_t i = 0; i < kInline; ++i) std::swap(head_[i], o.head_[i]);
    tail_.swap(o.tail_);
  }
  void reset(std::size_t n, std::size_t own, std::uint32_t value) {  // n zeros, entry `own` = value
    for (std::uint32_t& e : head_) e = 0;
    tail_.assign(n > kInline ? n - kInline : 0, 0);
    at(own) = value;
  }
  void join(const InlineMaxEntries& from, std::size_t /*limit*/ = SIZE_MAX) {
    if (this == &from) return;
    for (std::size_t i = 0; i < kInline; ++i) head_[i] = head_[i] < from.head_[i] ? from.head_[i] : head_[i];
    if (!from.tail_.empty()) join_tail(from);
  }

 private:
  void join_tail(const InlineMaxEntries& from) {
    const std::size_t n = from.tail_.size();
    if (tail_.size() < n) tail_.resize(n, 0);
    race_clocks::max_into(tail_.data(), from.tail_.data(), n);  // distinct buffers: vectorised
  }

  alignas(32) std::uint32_t head_[kInline] = {};
  std::vector<std::uint32_t> tail_;  // entries kInline and on
};

using DenseClock = InlineMaxEntries<16>;

class SharedClock {
 public:
  static constexpr unsigned kBits = 6;
  static constexpr std::size_t kChunk = std::size_t{1} << kBits;

  SharedClock() = default;
  SharedClock(const SharedClock& o) : chunks_(o.chunks_) {
    for (Chunk* c : chunks_)
      if (c) ++c->refs;
  }
  SharedClock(SharedClock&& o) noexcept : chunks_(std::move(o.chunks_)) { o.chunks_.clear(); }
  SharedClock& operator=(const SharedClock& o) {
    if (this != &o) {
      SharedClock copy(o);
      swap(copy);
    }
    return *this;
  }
  SharedClock& operator=(SharedClock&& o) noexcept {
    swap(o);
    return *this;
  }
  ~SharedClock() { clear(); }
  void swap(SharedClock& o) noexcept { chunks_.swap(o.chunks_); }

  // Whole chunks: a shared chunk is equal in all 64 entries to each clock holding it, so no
  // entry past a shorter clock's end can leak into it.
  std::size_t size() const { return chunks_.size() << kBits; }
  bool empty() const { return chunks_.empty(); }
  bool has_storage() const { return chunks_.capacity() != 0; }
  std::uint32_t operator[](std::size_t i) const {
    if ((i >> kBits) >= chunks_.size()) return 0;
    const Chunk* c = chunks_[i >> kBits];
    return c ? c->v[i & (kChunk - 1)] : 0;
  }
  std::uint32_t& at(std::size_t i) {  // entry i, to write: its chunk made this clock's own first
    if (const std::size_t k = (i >> kBits) + 1; k > chunks_.size()) chunks_.resize(k, nullptr);
    return own(i >> kBits)[i & (kChunk - 1)];
  }
  void raise(std::size_t i, std::uint32_t value) {
    if ((*this)[i] < value) at(i) = value;
  }
  void clear() {
    for (Chunk* c : chunks_) drop(c);
    chunks_.clear();
  }
  // Chunks held by this clock alone are zeroed in place, not given back and taken again
  // (every thread's clock at every execution's start).
  void reset(std::size_t n, std::size_t own, std::uint32_t value);
  // A chunk held by both, or where `from`'s is all zeros, costs nothing; where one chunk
  // dominates the other, the result shares the dominant one.
  void join(const SharedClock& from, std::size_t limit = SIZE_MAX);

 private:
  struct Chunk {
    std::uint32_t refs;
    std::uint32_t v[kChunk];
  };
  static Chunk* fresh();  // refs 1, contents unset
  static void drop(Chunk* c) {
    if (c && --c->refs == 0) recycle(c);
  }
  static void recycle(Chunk* c);
  std::uint32_t* own(std::size_t k) {  // chunk k, unshared (copied or zeroed if need be)
    Chunk* c = chunks_[k];
    return c && c->refs == 1 ? c->v : own_copy(k);
  }
  std::uint32_t* own_copy(std::size_t k);

  std::vector<Chunk*> chunks_;  // null: a chunk of zeros
};

}  // namespace mbcheck::sim
