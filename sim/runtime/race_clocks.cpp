#include "sim/runtime/race_clocks.hpp"

#include <algorithm>

namespace mbcheck::sim {

namespace {
// The entry loops, built twice where the compiler can (GCC's target_clones): for the x86-64
// baseline, whose SSE2 has no unsigned compare or max, and for AVX2, chosen at load time on
// machines that have it. (Not under ASan: an ifunc resolver runs before its runtime is up.)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__SANITIZE_ADDRESS__)
#define MBCHECK_VECTOR_CLONES __attribute__((target_clones("default", "avx2")))
#else
#define MBCHECK_VECTOR_CLONES
#endif

// Over the first n entries: bit 0: d is below s somewhere; bit 1: s is below d somewhere.
MBCHECK_VECTOR_CLONES unsigned compare(const std::uint32_t* __restrict d, const std::uint32_t* __restrict s,
                                       std::size_t n) {
  std::uint32_t d_below = 0, s_below = 0;
  for (std::size_t i = 0; i < n; ++i) {
    d_below |= static_cast<std::uint32_t>(d[i] < s[i]);
    s_below |= static_cast<std::uint32_t>(s[i] < d[i]);
  }
  return (d_below ? 1u : 0u) | (s_below ? 2u : 0u);
}

// Chunks freed by this OS thread's clocks, for its next ones (no allocation per copy-on-write).
// A clock outliving the pool (another thread_local's, at thread exit) frees its chunks itself.
thread_local bool tl_pool_gone = false;
struct ChunkPool {
  std::vector<void*> free;
  ~ChunkPool() {
    for (void* p : free) ::operator delete(p);
    tl_pool_gone = true;
  }
};
thread_local ChunkPool tl_pool;
}  // namespace

MBCHECK_VECTOR_CLONES void race_clocks::max_into(std::uint32_t* __restrict d, const std::uint32_t* __restrict s,
                                                 std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = d[i] < s[i] ? s[i] : d[i];
}

SharedClock::Chunk* SharedClock::fresh() {
  void* p;
  if (!tl_pool_gone && !tl_pool.free.empty()) {
    p = tl_pool.free.back();
    tl_pool.free.pop_back();
  } else {
    p = ::operator new(sizeof(Chunk));
  }
  Chunk* c = static_cast<Chunk*>(p);
  c->refs = 1;
  return c;
}

void SharedClock::recycle(Chunk* c) {
  if (tl_pool_gone)
    ::operator delete(c);
  else
    tl_pool.free.push_back(c);
}

std::uint32_t* SharedClock::own_copy(std::size_t k) {
  Chunk*& c = chunks_[k];
  Chunk* mine = fresh();
  if (c) {
    std::copy_n(c->v, kChunk, mine->v);
    drop(c);
  } else {
    std::fill_n(mine->v, kChunk, 0u);
  }
  c = mine;
  return mine->v;
}

void SharedClock::reset(std::size_t n, std::size_t own_entry, std::uint32_t value) {
  const std::size_t k = (n + kChunk - 1) >> kBits;
  for (std::size_t c = k; c < chunks_.size(); ++c) drop(chunks_[c]);
  chunks_.resize(k, nullptr);
  for (Chunk*& c : chunks_) {
    if (c && c->refs == 1) {
      std::fill_n(c->v, kChunk, 0u);
    } else {
      drop(c);
      c = nullptr;
    }
  }
  at(own_entry) = value;
}

void SharedClock::join(const SharedClock& from, std::size_t limit) {
  if (this == &from) return;
  if (chunks_.size() < from.chunks_.size()) chunks_.resize(from.chunks_.size(), nullptr);
  for (std::size_t k = 0; k < from.chunks_.size(); ++k) {
    Chunk* f = from.chunks_[k];
    Chunk* d = chunks_[k];
    if (!f || d == f) continue;
    if (!d) {
      ++f->refs;
      chunks_[k] = f;
      continue;
    }
    const std::size_t n = std::min(kChunk, limit - std::min(limit, k << kBits));
    const unsigned r = compare(d->v, f->v, n);
    if (!(r & 1u)) continue;  // ours holds theirs
    if (!(r & 2u)) {          // theirs holds ours: share it
      ++f->refs;
      drop(d);
      chunks_[k] = f;
      continue;
    }
    race_clocks::max_into(own(k), f->v, n);
  }
}

}  // namespace mbcheck::sim
