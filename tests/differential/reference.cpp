// The reference enumerator (see reference.hpp): a plain stateful search, written for being
// obviously right rather than fast. Every state is the whole machine: threads, barriers,
// copies, memory, and the race detector's vector clocks and access histories, encoded into a
// string for the visited set. The search stores the reverse edges so that, at the end, a
// backward pass finds the states that can never reach an end (livelock).
#include "tests/differential/reference.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace mbcheck::diff {
namespace {

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
  template <class V>
  void visit(V& v) {
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
  }
};

struct Barrier {
  I index = 0;  // cta * nbars + b: where threads keep their knowledge of it
  I live = 0, phase = 0, expected = 0, pending = 0, tx = 0;
  I observed = 0;                     // a wait/poll answered true since the last completion (missing-wait rule)
  std::vector<Clock> releases;        // by phase: join of everything released on that phase
  std::vector<std::vector<I>> known;  // by phase: join of the phase knowledge released on it
  template <class V>
  void visit(V& v) {
    v(index);
    v(live);
    v(phase);
    v(expected);
    v(pending);
    v(tx);
    v(observed);
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

struct Copy {    // one per copy statement of the program: each runs at most once
  I status = 0;  // 0 not issued, 1 in flight, 2 done
  I landed = 0;  // pieces landed so far
  Clock clock;   // the copy agent's clock (its issuer's at the issue)
  template <class V>
  void visit(V& v) {
    v(status);
    v(landed);
    v(clock);
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
  template <class V>
  void visit(V& v) {
    v(value);
    v(writer);
    v(wepoch);
    v(wasync);
    v(reads);
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

std::string encode(State& s) {
  Writer w;
  w(s);
  return std::move(w.out);
}

State decode(const std::string& key) {
  State s;
  Reader r{reinterpret_cast<const unsigned char*>(key.data())};
  r(s);
  return s;
}

void join(Clock& into, const Clock& other) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], other[i]);
}

// A step that hits a bug: the execution ends there with this verdict.
struct Bug {
  std::string kind;
};
[[noreturn]] void misuse(const char* kind) { throw Bug{std::string("misuse:") + kind}; }

// ---- barrier rules (PTX, as in the emulator: same checks, same order) ----------------------

void require_live(const Barrier& b) {
  if (!b.live) misuse("uninitialized");
}
void check_bytes(I bytes) {  // the byte operand of expect_tx / complete_tx / arrive.expect_tx
  if (bytes < 0 || bytes > kMaxTx) misuse("tx-out-of-range");
}
void check_tx(I new_tx) {
  if (new_tx > kMaxTx || new_tx < -kMaxTx) misuse("tx-out-of-range");
}
// Only an arrive-on or a complete_tx can complete a phase (expect_tx never does).
void complete_if_done(Barrier& b) {
  if (b.pending != 0 || b.tx != 0) return;
  b.phase += 1;
  b.pending = b.expected;
  b.observed = 0;
}
// Joins `clock` into the releases of the barrier's current phase.
void release(Barrier& b, const Clock& clock) {
  if (b.releases.size() <= static_cast<std::size_t>(b.phase))
    b.releases.resize(static_cast<std::size_t>(b.phase) + 1, Clock(clock.size(), 0));
  join(b.releases[static_cast<std::size_t>(b.phase)], clock);
}

// Phase knowledge: per barrier, the newest phase known complete (-1: none); joined by max.
void join_known(std::vector<I>& into, const std::vector<I>& from) {
  for (std::size_t i = 0; i < into.size() && i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}
void release_known(Barrier& b, const std::vector<I>& known) {
  if (b.known.size() <= static_cast<std::size_t>(b.phase))
    b.known.resize(static_cast<std::size_t>(b.phase) + 1, std::vector<I>(known.size(), -1));
  join_known(b.known[static_cast<std::size_t>(b.phase)], known);
}
// Would a blocking wait for phase q run now? (An uninitialised barrier runs, to report it.)
bool wait_proceeds(const Barrier& b, I q) { return !b.live || b.phase != q; }

bool uses_barrier(Stmt op) {
  switch (op) {
    case Stmt::store:
    case Stmt::load:
    case Stmt::load_slot:
    case Stmt::atomic_store:
    case Stmt::atomic_load:
    case Stmt::atomic_add:
    case Stmt::sync_threads:
    case Stmt::bar_arrive:
    case Stmt::bar_sync:
    case Stmt::cpa_copy:
    case Stmt::cpa_commit:
    case Stmt::cpa_wait:
    case Stmt::wg_mma:
    case Stmt::wg_commit:
    case Stmt::wg_wait: return false;
    default: return true;
  }
}

// How many words/slots `arg` indexes for op (0: arg is no index).
int index_limit(Stmt op) {
  switch (op) {
    case Stmt::store:
    case Stmt::load: return kDataWords;
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

// ---- the explorer --------------------------------------------------------------------------

class Explorer {
 public:
  Explorer(const DiffProgram& p, std::uint64_t max_states) : p_(p), max_states_(max_states) {
    if (p.ctas < 1 || p.threads < 1) throw std::invalid_argument("reference: empty shape");
    if (p.scripts.size() != p.total_threads()) throw std::invalid_argument("reference: one script per thread");
    if (p.counts.size() < p.barriers) throw std::invalid_argument("reference: one count per barrier");
    n_ = static_cast<int>(p.total_threads());
    nbars_ = static_cast<int>(p.barriers);
    copy_index_.resize(p.scripts.size());
    for (int g = 0; g < n_; ++g) {
      for (const Instr& in : p.scripts[g]) {
        if (uses_barrier(in.op)) nbars_ = std::max(nbars_, in.bar + 1);  // above `barriers`: never initialised
        if ((in.op == Stmt::bar_arrive || in.op == Stmt::bar_sync) && in.bar >= kNamedIds)
          throw std::invalid_argument("reference: named barrier id out of range");
        int limit = index_limit(in.op);
        if (limit > 0 && (in.arg < 0 || in.arg >= limit)) throw std::invalid_argument("reference: index out of range");
        copy_index_[g].push_back(in.op == Stmt::copy         ? static_cast<int>(copy_issuer_.size())
                                 : in.op == Stmt::cpa_copy   ? static_cast<int>(cpa_issuer_.size())
                                 : in.op == Stmt::cpa_arrive ? static_cast<int>(arv_issuer_.size())
                                 : in.op == Stmt::wg_mma     ? static_cast<int>(wg_issuer_.size())
                                                             : -1);
        if (in.op == Stmt::copy) copy_issuer_.push_back(g);
        if (in.op == Stmt::cpa_copy) cpa_issuer_.push_back(g), cpa_slot_.push_back(in.arg);
        if (in.op == Stmt::cpa_arrive) arv_issuer_.push_back(g), arv_bar_.push_back(in.bar);
        if (in.op == Stmt::wg_mma) wg_issuer_.push_back(g), wg_slot_.push_back(in.arg);
      }
    }
    if (!copy_issuer_.empty() && (p.copy_pieces < 1 || 2 * p.copy_pieces > kSlotWords))
      throw std::invalid_argument("reference: copy_pieces must fit the 32-byte slot");
    if (cpa_issuer_.size() > 62) throw std::invalid_argument("reference: too many cpa_copy statements");
    cpa_base_ = n_ + static_cast<int>(copy_issuer_.size());
    arv_base_ = cpa_base_ + static_cast<int>(cpa_issuer_.size());
    wg_base_ = arv_base_ + static_cast<int>(arv_issuer_.size());
    agents_ = wg_base_ + static_cast<int>(wg_issuer_.size());
  }

  ReferenceResult run() {
    State init = initial();
    intern(init);
    while (!stack_.empty()) {
      std::uint32_t id = stack_.back();
      stack_.pop_back();
      expand(id);
      if (!result_.complete) break;
    }
    result_.states = keys_.size();
    if (!result_.complete) return result_;
    find_livelock();
    return result_;
  }

 private:
  // --- the program's static shape ---
  int cta_of(int g) const { return g / static_cast<int>(p_.threads); }
  // Thread 0 of a CTA inits every barrier (one step each) before its sync_threads.
  I prologue_len(int g) const { return g % static_cast<int>(p_.threads) == 0 ? p_.barriers + 1 : 1; }
  I length(int g) const { return prologue_len(g) + static_cast<I>(p_.scripts[g].size()); }
  bool is_init(int g, I pc) const { return pc < prologue_len(g) - 1; }
  // The statement at pc (the prologue's sync as a sync_threads; not for init pcs).
  Instr instr_at(int g, I pc) const {
    I script_pc = pc - prologue_len(g);
    return script_pc < 0 ? Instr{Stmt::sync_threads, 0, 0} : p_.scripts[g][static_cast<std::size_t>(script_pc)];
  }
  bool at_sync(int g, I pc) const { return !is_init(g, pc) && instr_at(g, pc).op == Stmt::sync_threads; }

  Barrier& bar(State& s, int cta, int b) const { return s.bars[static_cast<std::size_t>(cta * nbars_ + b)]; }
  Word& data_word(State& s, int cta, int w) const { return s.data[static_cast<std::size_t>(cta * kDataWords + w)]; }
  Word& slot_word(State& s, int cta, int slot, int j) const {
    return s.slots[static_cast<std::size_t>((cta * kSlots + slot) * kSlotWords + j)];
  }

  State initial() const {
    State s;
    s.threads.resize(static_cast<std::size_t>(n_));
    for (int g = 0; g < n_; ++g) {
      Thread& t = s.threads[g];
      t.token.assign(static_cast<std::size_t>(nbars_), 0);
      t.status.assign(static_cast<std::size_t>(nbars_), 0);
      t.clock.assign(static_cast<std::size_t>(agents_), 0);
      t.clock[g] = 1;  // own components start at 1: epoch 0 means "no access"
      t.known.assign(static_cast<std::size_t>(p_.ctas) * nbars_, -1);
    }
    s.bars.resize(static_cast<std::size_t>(p_.ctas) * nbars_);
    for (std::size_t i = 0; i < s.bars.size(); ++i) s.bars[i].index = static_cast<I>(i);
    s.copies.resize(copy_issuer_.size());
    for (Copy& c : s.copies) c.clock.assign(static_cast<std::size_t>(agents_), 0);
    s.cpas.resize(cpa_issuer_.size());
    for (CpAsync& c : s.cpas) c.clock.assign(static_cast<std::size_t>(agents_), 0);
    s.arrivers.resize(arv_issuer_.size());
    s.wgs.resize(wg_issuer_.size());
    for (WgRead& w : s.wgs) w.clock.assign(static_cast<std::size_t>(agents_), 0);
    Word blank;
    blank.reads.assign(static_cast<std::size_t>(agents_), 0);
    s.data.assign(static_cast<std::size_t>(p_.ctas) * kDataWords, blank);
    s.slots.assign(static_cast<std::size_t>(p_.ctas) * kSlots * kSlotWords, blank);
    s.atomics.assign(kAtomicWords, 0);
    s.named.resize(static_cast<std::size_t>(p_.ctas) * kNamedIds);
    for (int g = 0; g < n_; ++g) settle(s, g);
    for (int c = 0; c < static_cast<int>(p_.ctas); ++c) sync_release(s, c);  // e.g. no barriers, one thread
    return s;
  }

  // --- race detector: FastTrack-style, exact for a last write plus the reads since it ---
  static void access(Word& w, int agent, const Clock& c, bool write) {
    if (w.writer >= 0 && w.writer != agent && w.wepoch > c[static_cast<std::size_t>(w.writer)]) throw Bug{"race"};
    if (!write) {
      w.reads[static_cast<std::size_t>(agent)] = c[static_cast<std::size_t>(agent)];
      return;
    }
    for (std::size_t a = 0; a < w.reads.size(); ++a)
      if (static_cast<int>(a) != agent && w.reads[a] > c[a]) throw Bug{"race"};
    w.writer = agent;
    w.wepoch = c[static_cast<std::size_t>(agent)];
    w.wasync = 0;  // a bulk copy's landing sets it after
    std::fill(w.reads.begin(), w.reads.end(), 0);
  }

  // --- thread steps ---
  // Any poll, or the run of a blocking wait, for phase q: the answer, acquiring on true.
  static bool poll(Thread& t, Barrier& b, I q) {
    require_live(b);
    if (q != b.phase && q != b.phase - 1) throw Bug{"aliasing"};
    if (q != b.phase - 1) return false;
    if (b.phase > 0) b.observed = 1;
    if (q >= 0 && static_cast<std::size_t>(q) < b.releases.size())
      join(t.clock, b.releases[static_cast<std::size_t>(q)]);
    // it knows q complete now, and whatever the releases on q knew
    t.known[static_cast<std::size_t>(b.index)] = std::max(t.known[static_cast<std::size_t>(b.index)], q);
    if (q >= 0 && static_cast<std::size_t>(q) < b.known.size())
      join_known(t.known, b.known[static_cast<std::size_t>(q)]);
    return true;
  }

  // The arrive-on family: checks in the emulator's order, then release, then the arrive.
  static void arrive(Thread& t, int g, Barrier& b, const Instr& in) {
    require_live(b);
    const bool drop = in.op == Stmt::arrive_drop, no_complete = in.op == Stmt::arrive_no_complete;
    const bool with_tx = in.op == Stmt::arrive_expect_tx;
    if (with_tx) {
      check_bytes(in.arg);
      check_tx(b.tx + in.arg);
    }
    if (drop && b.expected < 1) misuse("count-out-of-range");
    if (b.phase > 0 && !b.observed) misuse("missing-wait");
    if (b.pending < 1) misuse("over-arrival");
    if (no_complete && b.pending == 1 && b.tx == 0) misuse("nocomplete-completes");
    if (no_complete) t.regs.push_back(b.pending);  // the token's pending_count: before the arrive
    if (in.op == Stmt::arrive_token) t.token[in.bar] = b.phase + 1;
    release(b, t.clock);
    release_known(b, t.known);
    t.clock[static_cast<std::size_t>(g)] += 1;  // later accesses are not covered by this release
    if (with_tx) b.tx += in.arg;                // expect-tx first, then arrive-on(1)
    if (drop) b.expected -= 1;                  // this and every later phase
    b.pending -= 1;
    complete_if_done(b);
  }

  // Runs thread g's next step on s. False: the thread is blocked (s untouched). Throws Bug.
  bool thread_step(State& s, int g) const {
    Thread& t = s.threads[static_cast<std::size_t>(g)];
    if (t.finished) return false;
    const int cta = cta_of(g);
    if (is_init(g, t.pc)) {
      Barrier& b = bar(s, cta, static_cast<int>(t.pc));
      if (b.live) misuse("reinit-live");
      I count = p_.counts[static_cast<std::size_t>(t.pc)];
      if (count < 1 || count > kMaxCount) misuse("count-out-of-range");
      const I index = b.index;
      b = Barrier{};
      b.index = index;
      b.live = 1;
      b.expected = b.pending = count;
      advance(s, g);
      return true;
    }
    const Instr in = instr_at(g, t.pc);
    Barrier unused;  // for the statements that name no barrier
    Barrier& b = uses_barrier(in.op) ? bar(s, cta, in.bar) : unused;
    switch (in.op) {
      case Stmt::arrive:
      case Stmt::arrive_drop:
      case Stmt::arrive_no_complete:
      case Stmt::arrive_expect_tx:
      case Stmt::arrive_token: arrive(t, g, b, in); break;
      case Stmt::expect_tx:  // relaxed; never completes a phase
        require_live(b);
        check_bytes(in.arg);
        check_tx(b.tx + in.arg);
        if (b.pending == 0 && b.tx < 0 && b.tx + in.arg == 0) misuse("expect-tx-completes");
        b.tx += in.arg;
        break;
      case Stmt::complete_tx:  // relaxed: releases nothing
        require_live(b);
        check_bytes(in.arg);
        check_tx(b.tx - in.arg);
        b.tx -= in.arg;
        complete_if_done(b);
        break;
      case Stmt::wait:
        if (!wait_proceeds(b, in.arg)) return false;
        poll(t, b, in.arg);  // true, or aliasing
        break;
      case Stmt::test_wait:
      case Stmt::try_wait: t.regs.push_back(poll(t, b, in.arg) ? 1 : 0); break;
      case Stmt::token_test_wait:  // settle() skipped it if the slot was empty
        t.regs.push_back(poll(t, b, t.token[in.bar] - 1) ? 1 : 0);
        break;
      case Stmt::token_wait:
        if (!wait_proceeds(b, t.token[in.bar] - 1)) return false;
        poll(t, b, t.token[in.bar] - 1);
        break;
      case Stmt::spin_try_wait:
        if (!poll(t, b, in.arg)) return true;  // a failed poll changes nothing: a self-loop
        break;
      case Stmt::spin_backoff:
        if (!poll(t, b, in.arg)) {
          t.sub = std::min(t.sub + 1, kMaxBackoff);  // a self-loop once n saturates
          return true;
        }
        t.regs.push_back(t.sub);
        break;
      case Stmt::try_then_wait:
        if (t.sub == 0) {  // the try_wait
          bool done = poll(t, b, in.arg);
          t.regs.push_back(done ? 1 : 0);
          if (!done) {
            t.sub = 1;  // the blocking wait is a step of its own
            return true;
          }
        } else {
          if (!wait_proceeds(b, in.arg)) return false;
          poll(t, b, in.arg);
        }
        break;
      case Stmt::status_try:  // a plain try_wait; its answer goes to the status slot
        t.status[in.bar] = 1 + 2 * (in.arg + 1) + (poll(t, b, in.arg) ? 1 : 0);
        break;
      case Stmt::status_wait: {  // settle() skipped it if the slot is empty or done
        const I phase = (t.status[in.bar] - 1) / 2 - 1;
        if (!wait_proceeds(b, phase)) return false;
        poll(t, b, phase);
        break;
      }
      case Stmt::copy: {  // the issue: the copy agent starts with everything its issuer did
        int c = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
        Copy& cp = s.copies[static_cast<std::size_t>(c)];
        cp.status = 1;
        cp.landed = 0;
        cp.clock = t.clock;
        cp.clock[static_cast<std::size_t>(n_ + c)] = 1;
        t.clock[static_cast<std::size_t>(g)] += 1;  // the issuer's later accesses are not before the copy
        break;
      }
      case Stmt::load_slot: {
        Word& w = slot_word(s, cta, in.arg, 0);
        access(w, g, t.clock, false);
        t.regs.push_back(w.value);
        break;
      }
      case Stmt::store: {
        Word& w = data_word(s, cta, in.arg);
        access(w, g, t.clock, true);
        w.value = g + 1;
        break;
      }
      case Stmt::load: {
        Word& w = data_word(s, cta, in.arg);
        access(w, g, t.clock, false);
        t.regs.push_back(w.value);
        break;
      }
      case Stmt::atomic_store: s.atomics[static_cast<std::size_t>(in.arg)] = g + 1; break;
      case Stmt::atomic_load: t.regs.push_back(s.atomics[static_cast<std::size_t>(in.arg)]); break;
      case Stmt::atomic_add:
        t.regs.push_back(s.atomics[static_cast<std::size_t>(in.arg)]);
        s.atomics[static_cast<std::size_t>(in.arg)] += 1;
        break;
      case Stmt::sync_threads:
        if (!t.released) return false;  // arrived, waiting for the rest of the CTA
        t.released = 0;
        break;
      case Stmt::bar_arrive:
      case Stmt::bar_sync: {
        Named& nb = s.named[static_cast<std::size_t>(cta * kNamedIds + in.bar)];
        if (t.sub == 0) {  // the arrival
          if (in.arg < 1 || in.arg > static_cast<I>(p_.threads)) misuse("named-barrier");
          if (nb.count == 0)
            nb.count = in.arg;
          else if (nb.count != in.arg)
            misuse("named-barrier");
          const I generation = nb.generation;
          if (static_cast<I>(nb.releases.size()) <= generation)
            nb.releases.resize(static_cast<std::size_t>(generation + 1), Clock(static_cast<std::size_t>(agents_), 0));
          join(nb.releases[static_cast<std::size_t>(generation)], t.clock);
          if (static_cast<I>(nb.known.size()) <= generation)
            nb.known.resize(static_cast<std::size_t>(generation + 1), std::vector<I>(t.known.size(), -1));
          join_known(nb.known[static_cast<std::size_t>(generation)], t.known);
          t.clock[static_cast<std::size_t>(g)] += 1;
          if (++nb.arrived == nb.count) {
            nb.arrived = 0;
            nb.generation += 1;
          }
          if (in.op == Stmt::bar_sync) {
            t.sub = generation + 1;  // the wait is a step of its own
            return true;
          }
          break;
        }
        if (nb.generation <= t.sub - 1) return false;  // bar_sync: its generation is not complete yet
        join(t.clock, nb.releases[static_cast<std::size_t>(t.sub - 1)]);
        join_known(t.known, nb.known[static_cast<std::size_t>(t.sub - 1)]);
        break;
      }
      case Stmt::cpa_copy: {  // the issue: its agent starts with everything its issuer did
        const int k = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
        CpAsync& c = s.cpas[static_cast<std::size_t>(k)];
        c.status = 1;
        c.group = -1;
        c.clock = t.clock;
        c.clock[static_cast<std::size_t>(cpa_base_ + k)] = 1;
        t.clock[static_cast<std::size_t>(g)] += 1;
        break;
      }
      case Stmt::cpa_commit: break;  // settle() did it when the thread reached it
      case Stmt::wg_mma: {           // thread 0's issue (settle() skips the others'): as a cp.async's
        const int k = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
        WgRead& w = s.wgs[static_cast<std::size_t>(k)];
        w.status = 1;
        w.group = -1;
        w.clock = t.clock;
        w.clock[static_cast<std::size_t>(wg_base_ + k)] = 1;
        t.clock[static_cast<std::size_t>(g)] += 1;
        break;
      }
      case Stmt::wg_commit: break;  // settle() did it (or skipped it) when the thread reached it
      case Stmt::wg_wait: {         // the CTA's groups, kept by its thread 0
        const int leader = cta_of(g) * static_cast<int>(p_.threads);
        const I waited = s.threads[static_cast<std::size_t>(leader)].wg_groups - in.arg;
        for (std::size_t k = 0; k < s.wgs.size(); ++k)
          if (wg_issuer_[k] == leader && s.wgs[k].group >= 0 && s.wgs[k].group < waited && s.wgs[k].status != 2)
            return false;  // a waited-for group has a read pending
        for (std::size_t k = 0; k < s.wgs.size(); ++k)
          if (wg_issuer_[k] == leader && s.wgs[k].group >= 0 && s.wgs[k].group < waited) join(t.clock, s.wgs[k].clock);
        break;
      }
      case Stmt::cpa_wait: {
        const I waited = t.groups - in.arg;
        for (std::size_t k = 0; k < s.cpas.size(); ++k)
          if (cpa_issuer_[k] == g && s.cpas[k].group >= 0 && s.cpas[k].group < waited && s.cpas[k].status != 2)
            return false;  // a waited-for group has a copy in flight
        for (std::size_t k = 0; k < s.cpas.size(); ++k)
          if (cpa_issuer_[k] == g && s.cpas[k].group >= 0 && s.cpas[k].group < waited) join(t.clock, s.cpas[k].clock);
        break;
      }
      case Stmt::cpa_arrive: {
        require_live(b);
        if (in.arg == 0) {  // without .noinc: pending + 1 first
          if (b.pending + 1 > kMaxCount) misuse("count-out-of-range");
          b.pending += 1;
        }
        const int k = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
        Arriver& a = s.arrivers[static_cast<std::size_t>(k)];
        a.status = 1;
        a.tracked = 0;
        for (std::size_t c = 0; c < s.cpas.size(); ++c)  // every prior one, landed or not
          if (cpa_issuer_[c] == g && s.cpas[c].status != 0) a.tracked |= I{1} << c;
        break;
      }
      case Stmt::parity_wait:
      case Stmt::parity_try_wait: {
        // The bit read against what the thread knows of the barrier (diff_program.hpp).
        const I k = t.known[static_cast<std::size_t>(b.index)];
        const I q = (k & 1) == (in.arg & 1) ? k : k + 1;
        if (in.op == Stmt::parity_wait) {
          if (!wait_proceeds(b, q)) return false;
          poll(t, b, q);  // true, or aliasing
        } else {
          t.regs.push_back(poll(t, b, q) ? 1 : 0);
        }
        break;
      }
      case Stmt::count_: throw std::invalid_argument("reference: bad statement");
    }
    advance(s, g);
    return true;
  }

  // Moves thread g past its statement, then lets the CTA's sync_threads release if it can.
  void advance(State& s, int g) const {
    Thread& t = s.threads[static_cast<std::size_t>(g)];
    t.pc += 1;
    t.sub = 0;
    settle(s, g);
    sync_release(s, cta_of(g));
  }

  // A token wait on an empty slot, or a status wait whose try found its phase complete (or
  // with no status), is a no-op, not a scheduling point: skip it as part of the step that
  // reached it. Past the last statement the thread has exited.
  void settle(State& s, int g) const {
    Thread& t = s.threads[static_cast<std::size_t>(g)];
    while (t.pc < length(g) && !is_init(g, t.pc)) {
      Instr in = instr_at(g, t.pc);
      if (in.op == Stmt::cpa_commit) {  // bookkeeping of the thread only: part of the step that reached it
        for (std::size_t k = 0; k < s.cpas.size(); ++k)
          if (cpa_issuer_[k] == g && s.cpas[k].status != 0 && s.cpas[k].group < 0) s.cpas[k].group = t.groups;
        t.groups += 1;
        t.pc += 1;
        continue;
      }
      const bool leader = g % static_cast<int>(p_.threads) == 0;
      if (in.op == Stmt::wg_commit && leader) {  // the CTA's next wgmma group: not a step
        for (std::size_t k = 0; k < s.wgs.size(); ++k)
          if (wg_issuer_[k] == g && s.wgs[k].status != 0 && s.wgs[k].group < 0) s.wgs[k].group = t.wg_groups;
        t.wg_groups += 1;
        t.pc += 1;
        continue;
      }
      if ((in.op == Stmt::wg_mma || in.op == Stmt::wg_commit || in.op == Stmt::wg_wait) &&
          !leader) {  // the warp group's, by thread 0 (see diff_program.hpp)
        t.pc += 1;
        continue;
      }
      const bool token_op = in.op == Stmt::token_test_wait || in.op == Stmt::token_wait;
      const bool status_noop = in.op == Stmt::status_wait && (t.status[in.bar] == 0 || t.status[in.bar] % 2 == 0);
      if (!status_noop && (!token_op || t.token[in.bar] != 0)) break;
      t.pc += 1;
    }
    if (t.pc == length(g)) {
      t.finished = 1;
      std::fill(t.clock.begin(), t.clock.end(), 0);  // never read again: keep states canonical
    }
  }

  // When every thread of the CTA that has not exited stands at a sync_threads it has not yet
  // been released from, all of them are released together, with the join of their clocks.
  void sync_release(State& s, int cta) const {
    Clock joined(static_cast<std::size_t>(agents_), 0);
    std::vector<I> known(static_cast<std::size_t>(p_.ctas) * nbars_, -1);
    bool any = false;
    const int first = cta * static_cast<int>(p_.threads);
    for (int g = first; g < first + static_cast<int>(p_.threads); ++g) {
      const Thread& t = s.threads[static_cast<std::size_t>(g)];
      if (t.finished) continue;
      if (!at_sync(g, t.pc) || t.released) return;
      join(joined, t.clock);
      join_known(known, t.known);
      any = true;
    }
    if (!any) return;
    for (int g = first; g < first + static_cast<int>(p_.threads); ++g) {
      Thread& t = s.threads[static_cast<std::size_t>(g)];
      if (t.finished) continue;
      t.clock = joined;
      t.known = known;
      t.clock[static_cast<std::size_t>(g)] += 1;
      t.released = 1;
    }
  }

  // One piece of copy c lands: it writes its 2 words, releases its own writes (and nothing
  // of its issuer's) on the phase it lands in, then does complete_tx(16).
  bool copy_step(State& s, int c) const {
    Copy& cp = s.copies[static_cast<std::size_t>(c)];
    if (cp.status != 1) return false;
    const int issuer = copy_issuer_[static_cast<std::size_t>(c)];
    const int cta = cta_of(issuer), agent = n_ + c;
    const Instr& in = p_.scripts[static_cast<std::size_t>(issuer)][script_pc_of_copy(c)];
    for (int j = static_cast<int>(2 * cp.landed); j < 2 * cp.landed + 2; ++j) {
      Word& w = slot_word(s, cta, in.arg, j);
      access(w, agent, cp.clock, true);
      w.wasync = 1;
      w.value = copy_source_value(static_cast<std::uint32_t>(cta), in.arg, j);
    }
    Barrier& b = bar(s, cta, in.bar);
    require_live(b);
    check_tx(b.tx - kPieceBytes);
    Clock own(static_cast<std::size_t>(agents_), 0);
    own[static_cast<std::size_t>(agent)] = cp.clock[static_cast<std::size_t>(agent)];
    release(b, own);
    cp.clock[static_cast<std::size_t>(agent)] += 1;
    b.tx -= kPieceBytes;
    complete_if_done(b);
    cp.landed += 1;
    if (cp.landed == static_cast<I>(p_.copy_pieces)) {
      cp.status = 2;
      std::fill(cp.clock.begin(), cp.clock.end(), 0);
    }
    return true;
  }

  // cp.async instance k lands: it writes words 0..1 of its slot.
  bool cpa_step(State& s, int k) const {
    CpAsync& c = s.cpas[static_cast<std::size_t>(k)];
    if (c.status != 1) return false;
    const int cta = cta_of(cpa_issuer_[static_cast<std::size_t>(k)]), slot = cpa_slot_[static_cast<std::size_t>(k)];
    for (int j = 0; j < 2; ++j) {
      Word& w = slot_word(s, cta, slot, j);
      access(w, cpa_base_ + k, c.clock, true);
      w.value = copy_source_value(static_cast<std::uint32_t>(cta), slot, j);
    }
    c.status = 2;
    return true;
  }

  // The read agent of wg_mma instance k: reads words 0..1 of its slot through the async
  // proxy; a word last written by the generic proxy (no fence in these programs) is a race.
  bool wg_step(State& s, int k) const {
    WgRead& r = s.wgs[static_cast<std::size_t>(k)];
    if (r.status != 1) return false;
    const int cta = cta_of(wg_issuer_[static_cast<std::size_t>(k)]), slot = wg_slot_[static_cast<std::size_t>(k)];
    for (int j = 0; j < 2; ++j) {
      Word& w = slot_word(s, cta, slot, j);
      if (w.writer >= 0 && !w.wasync) throw Bug{"race"};
      access(w, wg_base_ + k, r.clock, false);
    }
    r.status = 2;
    return true;
  }

  // Arrive agent k: once its copies landed, an arrive-on releasing their writes only.
  bool arrive_step(State& s, int k) const {
    Arriver& a = s.arrivers[static_cast<std::size_t>(k)];
    if (a.status != 1) return false;
    for (std::size_t c = 0; c < s.cpas.size(); ++c)
      if ((a.tracked >> c & 1) && s.cpas[c].status != 2) return false;
    Barrier& b = bar(s, cta_of(arv_issuer_[static_cast<std::size_t>(k)]), arv_bar_[static_cast<std::size_t>(k)]);
    require_live(b);
    if (b.phase > 0 && !b.observed) misuse("missing-wait");
    if (b.pending < 1) misuse("over-arrival");
    Clock own(static_cast<std::size_t>(agents_), 0);
    for (std::size_t c = 0; c < s.cpas.size(); ++c)
      if (a.tracked >> c & 1)
        own[static_cast<std::size_t>(cpa_base_) + c] = s.cpas[c].clock[static_cast<std::size_t>(cpa_base_) + c];
    release(b, own);
    b.pending -= 1;
    complete_if_done(b);
    a.status = 2;
    return true;
  }

  std::size_t script_pc_of_copy(int c) const {
    const int issuer = copy_issuer_[static_cast<std::size_t>(c)];
    const auto& idx = copy_index_[static_cast<std::size_t>(issuer)];
    const auto& script = p_.scripts[static_cast<std::size_t>(issuer)];
    for (std::size_t pc = 0; pc < idx.size(); ++pc)
      if (idx[pc] == c && script[pc].op == Stmt::copy) return pc;  // (cp.async statements number apart)
    throw std::logic_error("reference: a copy without its statement");
  }

  // --- the search ---
  // The id of s, adding it (and scheduling its expansion) when new.
  std::uint32_t intern(State& s) {
    std::string key = encode(s);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    if (keys_.size() >= max_states_) {
      result_.complete = false;
      return 0;
    }
    auto id = static_cast<std::uint32_t>(keys_.size());
    auto [pos, _] = ids_.emplace(std::move(key), id);
    keys_.push_back(&pos->first);
    ends_.push_back(0);
    stack_.push_back(id);
    return id;
  }

  void expand(std::uint32_t id) {
    State s = decode(*keys_[id]);
    bool any = false;
    for (int a = 0; a < agents_; ++a) {
      State next = s;
      try {
        const bool moved = a < n_          ? thread_step(next, a)
                           : a < cpa_base_ ? copy_step(next, a - n_)
                           : a < arv_base_ ? cpa_step(next, a - cpa_base_)
                           : a < wg_base_  ? arrive_step(next, a - arv_base_)
                                           : wg_step(next, a - wg_base_);
        if (!moved) continue;
      } catch (const Bug& bug) {  // the execution ends in the bug: an end reachable from here
        any = true;
        note_bug(bug.kind);
        ends_[id] = 1;
        continue;
      }
      any = true;
      std::uint32_t to = intern(next);
      if (!result_.complete) return;
      if (to != id) edges_.push_back({id, to});  // a self-loop (failed poll) is no progress
    }
    if (any) return;
    ends_[id] = 1;  // nobody can move: completed or deadlocked
    bool all_done = std::all_of(s.threads.begin(), s.threads.end(), [](const Thread& t) { return t.finished != 0; });
    if (!all_done) {
      note_bug("deadlock");
      return;
    }
    Observed o;
    for (const Thread& t : s.threads) o.registers.push_back(t.regs);
    for (const Word& w : s.data) o.data.push_back(w.value);
    for (const Word& w : s.slots) o.slots.push_back(w.value);
    o.atomics = s.atomics;
    result_.outcomes.insert(format_observed(o));
  }

  // Backward reachability from the ends over the reverse edges: a state that reaches none is
  // stuck forever in a cycle of spinning (livelock).
  void find_livelock() {
    const std::size_t n = keys_.size();
    std::vector<std::uint32_t> start(n + 1, 0), preds(edges_.size());
    for (const auto& e : edges_) ++start[e.second + 1];
    for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (const auto& e : edges_) preds[fill[e.second]++] = e.first;
    std::vector<std::uint32_t> queue;
    for (std::uint32_t i = 0; i < n; ++i)
      if (ends_[i]) queue.push_back(i);
    std::vector<char> reaches(ends_.begin(), ends_.end());
    while (!queue.empty()) {
      std::uint32_t v = queue.back();
      queue.pop_back();
      for (std::uint32_t k = start[v]; k < start[v + 1]; ++k)
        if (!reaches[preds[k]]) {
          reaches[preds[k]] = 1;
          queue.push_back(preds[k]);
        }
    }
    if (std::find(reaches.begin(), reaches.end(), 0) != reaches.end()) note_bug("livelock");
  }

  void note_bug(const std::string& kind) {
    result_.bug = true;
    result_.bug_kinds.insert(kind);
  }

  const DiffProgram& p_;
  std::uint64_t max_states_;
  int n_ = 0;       // threads in all
  int nbars_ = 0;   // barriers per CTA, counting never-initialised ones named by scripts
  int agents_ = 0;  // threads, copy statements, cpa_copy statements, cpa_arrive statements, wg_mma statements
  int cpa_base_ = 0, arv_base_ = 0;  // the first cp.async agent, the first arrive agent
  int wg_base_ = 0;                  // the first wgmma read agent
  std::vector<int> cpa_issuer_, cpa_slot_, arv_issuer_, arv_bar_, wg_issuer_, wg_slot_;
  std::vector<std::vector<int>> copy_index_;  // [g][script pc]: its copy's index, or -1
  std::vector<int> copy_issuer_;              // by copy index: the issuing thread

  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<const std::string*> keys_;  // by id, into ids_
  std::vector<char> ends_;                // by id: a completed/deadlocked state, or one a bug step leaves
  std::vector<std::uint32_t> stack_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges_;  // (from, to)
  ReferenceResult result_;
};

}  // namespace

ReferenceResult reference_explore(const DiffProgram& program, std::uint64_t max_states) {
  return Explorer(program, max_states).run();
}

}  // namespace mbcheck::diff
