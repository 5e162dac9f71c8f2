// The reference enumerator's state (reference.cpp): the whole machine as plain data with one
// visit() order that both encodes and decodes it, and the barrier rules shared by its steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/differential/diff_program.hpp"

namespace mbcheck::diff::ref {

using I = std::int64_t;
using Clock = std::vector<I>;  // one component per agent: threads 0..N-1, then copies N..

constexpr I kMaxCount = (1 << 20) - 1;  // PTX limit of expected/pending counts
constexpr I kMaxTx = (1 << 20) - 1;     // PTX limit of |tx-count|
constexpr I kPieceBytes = 16;           // one landing of a copy: 2 words
constexpr I kMaxBackoff = 2;            // spin_backoff's n saturates here

// ---- the state ---------------------------------------------------------------------------
// Every field is an I or a vector of encodable things, visited in one fixed order by visit()
// so that one function encodes and decodes it.

struct Thread {
  I pc = 0;        // index into prologue + script
  I sub = 0;       // spin_backoff: its n; try_then_wait: 1 once its try_wait failed
  I released = 0;  // standing at a sync_threads that has released it (its step may run)
  I finished = 0;
  std::vector<I> regs;    // recorded values, in order
  std::vector<I> token;   // per barrier: 1 + phase of the kept token; 0: empty slot
  std::vector<I> status;  // per barrier: 1 + 2 * (phase + 1) + (its try found it complete); 0: empty
  Clock clock;
  std::vector<I> known;  // per barrier of any CTA (cta * nbars + b): newest phase known complete (-1)
  I groups = 0;          // cp.async groups committed so far
  I wg_groups = 0;       // thread 0 of a CTA: the CTA's wgmma groups committed so far
  I cl_count = 0;        // barrier.cluster arrives so far (the next one arrives in phase cl_count)
  I cl_waited = 0;       // cl_count at its last cluster_wait
  I fenced = 0;          // thread 0 of a CTA after a fence_init: its relaxed cluster arrives carry its inits
  Clock proxy_fence;     // its clock at its latest fence.proxy.async (empty: none)
  template <class V>
  void visit(V& v) {
    v(proxy_fence);
    v(pc);
    v(sub);
    v(released);
    v(finished);
    v(regs);
    v(token);
    v(status);
    v(clock);
    v(known);
    v(groups);
    v(wg_groups);
    v(cl_count);
    v(cl_waited);
    v(fenced);
  }
};

struct Barrier {
  I index = 0;  // cta * nbars + b: where threads keep their knowledge of it
  I live = 0, phase = 0, expected = 0, pending = 0, tx = 0;
  I invalidated = 0;            // not live after an inval (misuse invalidated, not uninitialized)
  I incarnation = 0;            // inits so far (phase knowledge of an earlier one is void)
  I observed = 0;               // a wait/poll answered true since the last completion (missing-wait rule)
  std::vector<Clock> releases;  // by phase: join of everything released on that phase
  // by phase: the releases of threads of other CTAs (.release.cluster); PTX ISA 8.7: only an
  // acquire whose scope includes their thread (.cluster) synchronizes with them
  std::vector<Clock> remote;
  std::vector<std::vector<I>> known;  // by phase: join of the phase knowledge released on it
  std::vector<Clock> peer;            // by phase: other CTAs' counter ops on it not yet seen performed
  template <class V>
  void visit(V& v) {
    v(index);
    v(live);
    v(invalidated);
    v(incarnation);
    v(phase);
    v(expected);
    v(pending);
    v(tx);
    v(observed);
    v(releases);
    v(remote);
    v(known);
    v(peer);
  }
};

struct ClusterBar {                   // the barrier.cluster of a cluster
  I gen = 0;                          // phases completed
  std::vector<Clock> releases;        // by phase: join of the release arrives' clocks
  std::vector<std::vector<I>> known;  // by phase: join of the knowledge its arrives carried
  template <class V>
  void visit(V& v) {
    v(gen);
    v(releases);
    v(known);
  }
};

struct Named {  // a named barrier of a CTA
  I count = 0;  // fixed by the first use (0: unused)
  I arrived = 0, generation = 0;
  std::vector<Clock> releases;        // by generation: join of everything released on it
  std::vector<std::vector<I>> known;  // by generation: join of the phase knowledge released on it
  template <class V>
  void visit(V& v) {
    v(count);
    v(arrived);
    v(generation);
    v(releases);
    v(known);
  }
};

struct Copy {         // one per copy statement of the program: each runs at most once
  I status = 0;       // 0 not issued, 1 in flight, 2 done
  I landed = 0;       // pieces landed so far
  Clock clock;        // the copy agent's clock (its issuer's at the issue)
  Clock proxy_fence;  // its issuer's clock at its latest fence.proxy.async before the issue (empty: none)
  template <class V>
  void visit(V& v) {
    v(status);
    v(landed);
    v(clock);
    v(proxy_fence);
  }
};

struct CpAsync {  // one per cpa_copy statement: issued at most once
  I status = 0;   // 0 not issued, 1 in flight, 2 landed
  I group = -1;   // the issuer's async-group it was committed in (-1: not yet)
  Clock clock;    // its agent's clock (its issuer's at the issue); kept after landing
  template <class V>
  void visit(V& v) {
    v(status);
    v(group);
    v(clock);
  }
};

struct WgRead {  // one per wg_mma statement: the read agent of its operand (thread 0's only)
  I status = 0;  // 0 not issued, 1 issued, 2 read
  I group = -1;  // the CTA's wgmma group it was committed in (-1: not yet)
  Clock clock;   // its agent's clock (its issuer's at the issue); kept after the read
  template <class V>
  void visit(V& v) {
    v(status);
    v(group);
    v(clock);
  }
};

struct Arriver {  // one per cpa_arrive statement: its arrive agent
  I status = 0;   // 0 not issued, 1 waiting for its copies, 2 arrived
  I tracked = 0;  // bit k: cpa_copy instance k was issued before it (by its thread)
  template <class V>
  void visit(V& v) {
    v(status);
    v(tracked);
  }
};

struct Word {  // one word of D or S, with its history for the race detector
  I value = 0;
  I writer = -1, wepoch = 0;  // last write: its agent and that agent's own component then
  I wasync = 0;               // that write was by the async proxy (a bulk copy's landing)
  std::vector<I> reads;       // per agent: own component at its latest read since that write (0: none)
  // per thread: its own component at its first fence.proxy.async after that read (0: none yet)
  std::vector<I> read_fenced;
  template <class V>
  void visit(V& v) {
    v(value);
    v(writer);
    v(wepoch);
    v(wasync);
    v(reads);
    v(read_fenced);
  }
};

struct State {
  std::vector<Thread> threads;  // by global thread
  std::vector<Barrier> bars;    // cta * nbars + b
  std::vector<Copy> copies;
  std::vector<Word> data;   // cta * kDataWords + w
  std::vector<Word> slots;  // (cta * kSlots + s) * kSlotWords + j
  std::vector<I> atomics;
  std::vector<Named> named;  // cta * kNamedIds + id
  std::vector<CpAsync> cpas;
  std::vector<Arriver> arrivers;
  std::vector<WgRead> wgs;
  std::vector<ClusterBar> clusters;
  std::vector<Clock> uses;   // by CTA: other CTAs' data uses of its shared memory (newest epoch per agent)
  std::vector<Clock> exits;  // by CTA: join of its exited threads' clocks
  template <class V>
  void visit(V& v) {
    v(threads);
    v(bars);
    v(copies);
    v(data);
    v(slots);
    v(atomics);
    v(named);
    v(cpas);
    v(arrivers);
    v(wgs);
    v(clusters);
    v(uses);
    v(exits);
  }
};

// Encoding: zigzag varints (the values are small), vectors prefixed by their length.
struct Writer {
  std::string out;
  void operator()(I& v) {
    auto u = (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
    do {
      out += static_cast<char>((u & 0x7f) | (u > 0x7f ? 0x80 : 0));
      u >>= 7;
    } while (u != 0);
  }
  template <class T>
  void operator()(std::vector<T>& xs) {
    I n = static_cast<I>(xs.size());
    (*this)(n);
    for (T& x : xs) (*this)(x);
  }
  template <class T>
  void operator()(T& x) {
    x.visit(*this);
  }
};

struct Reader {
  const unsigned char* p;
  void operator()(I& v) {
    std::uint64_t u = 0;
    for (int shift = 0;; shift += 7) {
      unsigned char c = *p++;
      u |= static_cast<std::uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) break;
    }
    v = static_cast<I>(u >> 1) ^ -static_cast<I>(u & 1);
  }
  template <class T>
  void operator()(std::vector<T>& xs) {
    I n = 0;
    (*this)(n);
    xs.resize(static_cast<std::size_t>(n));
    for (T& x : xs) (*this)(x);
  }
  template <class T>
  void operator()(T& x) {
    x.visit(*this);
  }
};

inline std::string encode(State& s) {
  Writer w;
  w(s);
  return std::move(w.out);
}

inline State decode(const std::string& key) {
  State s;
  Reader r{reinterpret_cast<const unsigned char*>(key.data())};
  r(s);
  return s;
}

inline void join(Clock& into, const Clock& other) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], other[i]);
}

// A step that hits a bug: the execution ends there with this verdict.
struct Bug {
  std::string kind;
};
[[noreturn]] inline void misuse(const char* kind) { throw Bug{std::string("misuse:") + kind}; }

// ---- barrier rules (PTX, as in the emulator: same checks, same order) ----------------------

inline void require_live(const Barrier& b) {
  if (!b.live) misuse(b.invalidated ? "invalidated" : "uninitialized");
}
inline void check_bytes(I bytes) {  // the byte operand of expect_tx / complete_tx / arrive.expect_tx
  if (bytes < 0 || bytes > kMaxTx) misuse("tx-out-of-range");
}
inline void check_tx(I new_tx) {
  if (new_tx > kMaxTx || new_tx < -kMaxTx) misuse("tx-out-of-range");
}
// Only an arrive-on or a complete_tx can complete a phase (expect_tx never does).
inline void complete_if_done(Barrier& b) {
  if (b.pending != 0 || b.tx != 0) return;
  b.phase += 1;
  b.pending = b.expected;
  b.observed = 0;
}
// Joins `clock` into the releases of the barrier's current phase (`remote`: a thread of
// another CTA's: into those only a .cluster acquire joins).
inline void release(Barrier& b, const Clock& clock, bool remote = false) {
  std::vector<Clock>& into = remote ? b.remote : b.releases;
  if (into.size() <= static_cast<std::size_t>(b.phase))
    into.resize(static_cast<std::size_t>(b.phase) + 1, Clock(clock.size(), 0));
  join(into[static_cast<std::size_t>(b.phase)], clock);
}

// Phase knowledge: per barrier, the newest phase known complete as a key in one order over its
// incarnations, incarnation * kKnownStride + phase (-1: none), so that a join is a max and a
// newer incarnation wins; what a thread knows of the current incarnation is known_phase().
constexpr I kKnownStride = I{1} << 20;
inline I known_key(const Barrier& b, I phase) { return b.incarnation * kKnownStride + phase; }
inline I known_phase(const Barrier& b, I key) {
  const I incarnation = (key + 1) / kKnownStride;
  return incarnation == b.incarnation ? key - incarnation * kKnownStride : -1;
}
inline void join_known(std::vector<I>& into, const std::vector<I>& from) {
  for (std::size_t i = 0; i < into.size() && i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}
inline void release_known(Barrier& b, const std::vector<I>& known) {
  if (b.known.size() <= static_cast<std::size_t>(b.phase))
    b.known.resize(static_cast<std::size_t>(b.phase) + 1, std::vector<I>(known.size(), -1));
  join_known(b.known[static_cast<std::size_t>(b.phase)], known);
}
// Would a blocking wait for phase q run now? (An uninitialised barrier runs, to report it.)
inline bool is_collective(Stmt op) { return op == Stmt::syncwarp || op == Stmt::elect_sync || op == Stmt::shfl_idx; }
inline bool is_cluster_stmt(Stmt op) { return op >= Stmt::remote_arrive && op <= Stmt::shfl_idx; }
inline bool wait_proceeds(const Barrier& b, I q) { return !b.live || b.phase != q; }

inline bool uses_barrier(Stmt op) {
  switch (op) {
    case Stmt::store:
    case Stmt::load:
    case Stmt::load_slot:
    case Stmt::atomic_store:
    case Stmt::atomic_load:
    case Stmt::atomic_add:
    case Stmt::spin_atomic:
    case Stmt::spin_atomic_pair:
    case Stmt::sync_threads:
    case Stmt::bar_arrive:
    case Stmt::bar_sync:
    case Stmt::cpa_copy:
    case Stmt::cpa_commit:
    case Stmt::cpa_wait:
    case Stmt::wg_mma:
    case Stmt::wg_commit:
    case Stmt::wg_wait:
    case Stmt::cluster_arrive:
    case Stmt::cluster_arrive_relaxed:
    case Stmt::cluster_wait:
    case Stmt::fence_init:
    case Stmt::dsmem_store:
    case Stmt::dsmem_load:
    case Stmt::syncwarp:
    case Stmt::elect_sync:
    case Stmt::shfl_idx: return false;
    default: return true;
  }
}

// How many words/slots `arg` indexes for op (0: arg is no index).
inline int index_limit(Stmt op) {
  switch (op) {
    case Stmt::store:
    case Stmt::load:
    case Stmt::dsmem_store:
    case Stmt::dsmem_load: return kDataWords;
    case Stmt::copy:
    case Stmt::load_slot:
    case Stmt::cpa_copy:
    case Stmt::wg_mma: return kSlots;
    case Stmt::atomic_store:
    case Stmt::atomic_load:
    case Stmt::atomic_add: return kAtomicWords;
    default: return 0;
  }
}

}  // namespace mbcheck::diff::ref
