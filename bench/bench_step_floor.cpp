// How fast can a fuzzing step be? A floor model of epi-load (the shape bench_peers times:
// 3 stages, 1 store warp of 4 threads, 6 tiles of 4 floats) next to mbcheck's own fuzzing of
// it, in one run: the figure item 1 of issue 20 (fuzzing at 5x Relacy) depends on.
//
// The model keeps what any checker of this protocol at mbcheck's depth must do at each of
// its 86 transitions, and nothing else, in the leanest form this file could give it:
//   * one fiber per device thread (Boost.Context, resumed with resume_with: the same
//     ontop_fcontext switch Boost.Fiber's contexts make in mbcheck), reused across runs, a
//     switch only when the next thread is another one; copies land in the scheduler;
//   * a uniform random choice among the enabled agents (SplitMix64, as mbcheck's);
//   * the mbarrier: pending arrivals, tx count, full phase number, waits enabled by phase;
//     __syncthreads as one arrival per thread, each then enabled once all have arrived;
//   * the race detector: vector clocks in flat arrays (width 16), an epoch per step, release
//     by arrive, release of its own epoch by a landing, acquire by a wait, the phase knowledge
//     parity waits need (joined along with the clocks), FastTrack write / read epochs per
//     4-byte word with a generation per run.
// Left out, so the floor is lower than any real checker: misuse checks (over-arrival and tx
// underflow are asserted), spin recognition (its stack scrub), call sites, traces, replay
// records, crash landing, the enabled set's bits, limits and time checks, async groups,
// clusters, named barriers, the StepObserver and the strategy interface (one inline choice).
//
// The same model with `Complete` adds lean forms of the per-step part of what the floor
// leaves out, to estimate how near the floor a whole redesigned step could be: each
// operation's call site (a mbcheck::CallSite, as the Platform contract passes it) kept in its
// agent, the barrier's liveness and phase-aliasing checks, the replay record of every choice,
// the count-down records a try_wait status needs, the enabled set's bits, the step limit and
// stop check, the strategy behind a virtual call, the watchdog's protocol / runtime flag and
// tick at every switch, and the stack scrub spin recognition needs (3.5 KiB per thread per
// run). Still left out: traces and observers (off in fuzzing), async groups, clusters, named
// barriers (not in this protocol), and spin recognition's snapshots (taken only at polls;
// epi-load makes none).
//
//   bench_step_floor [--runs R] [--floor-only]   (--floor-only: the models alone, to profile)
#include <fmt/format.h>

#include <atomic>
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/explore/strategy.hpp"
#include "sim/fuzz.hpp"
#include "sim/protocols/protocols.hpp"

namespace {

namespace ctx = boost::context;
using Clock = std::chrono::steady_clock;

constexpr int kStages = 3, kConsumers = 4, kLoadLanes = 4, kTiles = 6, kElems = 4;
constexpr int kThreads = kLoadLanes + kConsumers;
constexpr int kBars = 2 * kStages;             // full[s], then empty[s]
constexpr int kMaxAgents = kThreads + kTiles;  // threads, then one copy agent per tile
constexpr int kW = 16;                         // clock width: agents rounded up
constexpr int kMain = kMaxAgents;              // the driver's slot in the continuation table
static_assert(kMaxAgents <= kW);

enum class Op : std::uint8_t { init, sync, wait, arrive, arrive_tx, copy, land };

using mbcheck::sim::SplitMix64;  // mbcheck's own generator (sim/explore/strategy.hpp)

struct Barrier {
  std::int64_t phase = 0;  // completed phases
  std::uint32_t count = 0, pending = 0;
  std::int64_t tx = 0;
};

struct Epoch {
  std::uint32_t agent = ~0u, clock = 0;
};
struct Word {
  std::uint32_t generation = 0;
  Epoch write, read;
};

struct Agent {
  Op op{};
  const char* file = nullptr;  // Complete: where the protocol announced op
  const char* function = nullptr;
  std::uint32_t line = 0, column = 0;
  int bar = 0;
  std::int64_t arg = 0;
  int enabled_pos = -1;
  int copy_dst = 0, copy_src = 0;  // a copy (and its issue): stage word and C word it begins at
};

// The strategy interface of the Complete model: one virtual call a step, as mbcheck's.
struct Chooser {
  virtual ~Chooser() = default;
  virtual void begin(std::uint64_t seed) = 0;
  virtual int choose(const int* enabled, int n) = 0;
};
struct RandomChooser final : Chooser {
  SplitMix64 rng{1};
  void begin(std::uint64_t seed) override { rng = SplitMix64{seed}; }
  int choose(const int* enabled, int n) override { return enabled[rng.below(static_cast<std::uint32_t>(n))]; }
};

template <bool Complete>
class FloorModel {
 public:
  // release_before_read: the consumers arrive on empty[s] before they read the stage (mbcheck's
  // mutation of that name), so that the model's race detector is seen to work.
  FloorModel(bool release_before_read, Chooser* chooser)
      : chooser_(chooser), release_before_read_(release_before_read) {
    for (int i = 0; i < kThreads; ++i) {
      ctx::fiber f(std::allocator_arg, ctx::protected_fixedsize_stack(64 * 1024), [this, i](ctx::fiber&& main) {
        cont_[kMain] = std::move(main);
        cur_ = i;
        switch_to(kMain);  // parked until the first run primes it
        for (;;) {
          if constexpr (Complete) scrub_stack();
          thread_body(i);
          finish(i);  // parked at the end; the next run resumes it here
        }
        return ctx::fiber{};
      });
      std::move(f).resume();  // runs to its park
    }
  }

  // One run from a fresh state; returns its transitions.
  std::uint64_t run(std::uint64_t seed) {
    reset(seed);
    priming_ = true;
    for (int i = 0; i < kThreads; ++i) {
      cur_ = i;
      resume_from_main(i);
    }
    priming_ = false;
    const int next = decide();
    if (next != kMain) {
      cur_ = next;
      resume_from_main(next);
    }
    if (unfinished_ != 0) throw std::logic_error("floor model: a run ended with threads blocked");
    if (!release_before_read_) {
      if (races_) throw std::logic_error("floor model: a data race in a correct protocol");
      for (int t = 0; t < kTiles * kElems; ++t)
        if (d_[t] != c_[t] * 2.0f) throw std::logic_error("floor model: wrong result");
    }
    return steps_;
  }
  bool found_race() const { return races_; }

 private:
  // --- the protocol (spec/kernels/residual_add.hpp's shape, as bench_peers' Relacy model) ---
  void thread_body(int i) {
    if (i == 0)
      for (int b = 0; b < kBars; ++b) visible(Op::init, b, b < kStages ? 1 : kConsumers);
    visible(Op::sync, 0, 0);
    if (i == 0) {
      for (int t = 0; t < kTiles; ++t) {
        const int s = t % kStages;
        visible(Op::wait, kStages + s, t / kStages - 1);
        visible(Op::arrive_tx, s, kElems * 4);
        visible(Op::copy, s, kElems * 4, s * kElems, t * kElems);
      }
    } else if (i >= kLoadLanes) {
      const int me = i - kLoadLanes;
      for (int t = 0; t < kTiles; ++t) {
        const int s = t % kStages;
        visible(Op::wait, s, t / kStages);
        if (release_before_read_) visible(Op::arrive, kStages + s, 1);
        for (int v = me; v < kElems / 4; v += kConsumers) {
          access(i, kStageWords + s * kElems + 4 * v, 4, false);
          access(i, kDWords + t * kElems + 4 * v, 4, true);
          for (int e = 4 * v; e < 4 * v + 4; ++e) d_[t * kElems + e] = stage_[s * kElems + e] * 2.0f;
        }
        if (!release_before_read_) visible(Op::arrive, kStages + s, 1);
      }
    }
  }

  // --- scheduling ---
  void visible(Op op, int bar, std::int64_t arg, int copy_dst = 0, int copy_src = 0,
               const mbcheck::CallSite& site = mbcheck::CallSite::current()) {
    const int a = cur_;
    Agent& ag = agents_[a];
    if constexpr (Complete) {
      in_protocol_.store(false, std::memory_order_relaxed);
      ag.file = site.file;
      ag.function = site.function;
      ag.line = site.line;
      ag.column = site.column;
    }
    ag.op = op;
    ag.bar = bar;
    ag.arg = arg;
    ag.copy_dst = copy_dst;
    ag.copy_src = copy_src;
    if (op == Op::sync) {  // its arrival counts (and releases) at once; it waits for all
      ++synced_;
      for (int k = 0; k < kW; ++k) sync_all_[k] = std::max(sync_all_[k], clock_[a][k]);
      ++clock_[a][a];
    }
    if (is_enabled(ag)) {
      add_enabled(a);
    } else {
      const int list = op == Op::sync ? kBars : bar;
      waiters_[list][n_waiters_[list]++] = a;
    }
    if (op == Op::sync && synced_ == kThreads) wake(kBars);
    if (priming_) {
      switch_to(kMain);
    } else {
      const int next = decide();
      if (next != a) switch_to(next);
    }
    if constexpr (Complete) {
      ticks_.store(ticks_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      in_protocol_.store(true, std::memory_order_relaxed);
    }
    perform(a);  // chosen: its operation takes effect now
  }

  bool is_enabled(const Agent& ag) const {
    if (ag.op == Op::sync) return synced_ == kThreads;
    if (ag.op == Op::wait) return bars_[ag.bar].phase > ag.arg;  // phase arg complete (-1: always)
    return true;
  }
  void add_enabled(int a) {
    if constexpr (Complete) enabled_bits_ |= std::uint64_t{1} << a;
    agents_[a].enabled_pos = n_enabled_;
    enabled_[n_enabled_++] = a;
  }
  void remove_enabled(int a) {
    const int pos = agents_[a].enabled_pos;
    const int last = enabled_[--n_enabled_];
    enabled_[pos] = last;
    agents_[last].enabled_pos = pos;
    agents_[a].enabled_pos = -1;
    if constexpr (Complete) enabled_bits_ &= ~(std::uint64_t{1} << a);
  }
  void wake(int list) {
    int keep = 0;
    for (int k = 0; k < n_waiters_[list]; ++k) {
      const int w = waiters_[list][k];
      if (is_enabled(agents_[w]))
        add_enabled(w);
      else
        waiters_[list][keep++] = w;
    }
    n_waiters_[list] = keep;
  }

  // Picks the next agent, landing copies on the way; kMain when the run is over.
  int decide() {
    for (;;) {
      if (n_enabled_ == 0) return kMain;
      int pick;
      if constexpr (Complete) {
        if (steps_ >= kMaxSteps) throw std::logic_error("floor model: step limit");
        if (steps_ % 1024 == 0 && stop_.load(std::memory_order_relaxed)) throw std::logic_error("floor model: stopped");
        pick = chooser_->choose(enabled_, n_enabled_);
        if (pick < 0 || pick >= n_agents_ || agents_[pick].enabled_pos < 0)
          throw std::logic_error("floor model: the strategy chose an agent not enabled");
        schedule_.push_back(static_cast<std::uint32_t>(pick));
      } else {
        pick = enabled_[rng_.below(static_cast<std::uint32_t>(n_enabled_))];
      }
      remove_enabled(pick);
      ++steps_;
      ++clock_[pick][pick];  // its next epoch
      if (pick >= kThreads) {
        land(pick);
        continue;
      }
      return pick;
    }
  }

  void switch_to(int next) {
    const int me = cur_;
    cur_ = next;
    std::move(cont_[next]).resume_with([this, me](ctx::fiber&& from) {
      cont_[me] = std::move(from);
      return ctx::fiber{};
    });
  }
  void resume_from_main(int thread) {
    std::move(cont_[thread]).resume_with([this](ctx::fiber&& from) {
      cont_[kMain] = std::move(from);
      return ctx::fiber{};
    });
  }
  void finish(int) {
    --unfinished_;
    switch_to(decide());  // another thread, or the driver when the run is over
  }

  // Zeroes the 3.5 KiB below this frame, as mbcheck does at each thread's start for spin
  // recognition: one string store, no call (a call's frame would lie in what it zeroes).
  static void scrub_stack() {
#if defined(__x86_64__)
    std::uintptr_t sp;
    asm volatile("movq %%rsp, %0" : "=r"(sp));
    std::uintptr_t from = (sp - 3584) & ~std::uintptr_t{7}, words = (sp - from) / 8;
    asm volatile("rep stosq" : "+D"(from), "+c"(words) : "a"(std::uint64_t{0}) : "memory");
#endif
  }

  // --- the emulator and the race detector ---
  void perform(int a) {
    Agent& ag = agents_[a];
    Barrier& b = bars_[ag.bar];
    switch (ag.op) {
      case Op::init:
        b = Barrier{0, static_cast<std::uint32_t>(ag.arg), static_cast<std::uint32_t>(ag.arg), 0};
        if constexpr (Complete) live_[ag.bar] = true;
        break;
      case Op::sync: join_all_synced(a); break;
      case Op::wait:
        if constexpr (Complete) {
          if (!live_[ag.bar]) throw std::logic_error("floor model: wait on a barrier not initialised");
          if (ag.arg + 1 < b.phase) throw std::logic_error("floor model: aliasing (two phases behind)");
        }
        acquire(a, ag.bar, ag.arg);
        break;
      case Op::arrive:
      case Op::arrive_tx:
        if constexpr (Complete)
          if (!live_[ag.bar]) throw std::logic_error("floor model: arrive on a barrier not initialised");
        if (b.pending == 0) throw std::logic_error("floor model: over-arrival");
        if constexpr (Complete) counting_[ag.bar].emplace_back(a, clock_[a][a]);
        if (ag.op == Op::arrive_tx) b.tx += ag.arg;
        release(a, ag.bar, b.phase, true);
        --b.pending;
        complete_if_done(ag.bar);
        break;
      case Op::copy: {
        const int c = n_agents_++;
        Agent& cp = agents_[c];
        cp = Agent{};
        cp.op = Op::land;
        cp.bar = ag.bar;
        cp.arg = ag.arg;
        cp.copy_dst = ag.copy_dst;
        cp.copy_src = ag.copy_src;
        std::memcpy(clock_[c], clock_[a], sizeof clock_[c]);  // the copy starts after its issuer's past
        std::memcpy(known_[c], known_[a], sizeof known_[c]);
        clock_[c][c] = 1;
        ++clock_[a][a];
        add_enabled(c);
        break;
      }
      case Op::land: break;
    }
  }
  void land(int c) {
    Agent& cp = agents_[c];
    access(c, kCWords + cp.copy_src, kElems, false);
    access(c, kStageWords + cp.copy_dst, kElems, true);
    std::memcpy(&stage_[cp.copy_dst], &c_[cp.copy_src], kElems * sizeof(float));
    Barrier& b = bars_[cp.bar];
    if (b.tx < cp.arg) throw std::logic_error("floor model: tx below zero");
    if constexpr (Complete) counting_[cp.bar].emplace_back(c, clock_[c][c]);
    release(c, cp.bar, b.phase, false);  // its own epoch only
    b.tx -= cp.arg;
    complete_if_done(cp.bar);
  }
  void complete_if_done(int bar) {
    Barrier& b = bars_[bar];
    if (b.pending != 0 || b.tx != 0) return;
    ++b.phase;
    b.pending = b.count;
    if constexpr (Complete) {  // the phase's count-down records, kept for a later try_wait status
      completed_[bar].swap(counting_[bar]);
      counting_[bar].clear();
    }
    wake(bar);
  }

  int slot(int bar, std::int64_t phase) const { return static_cast<int>(phase & 1) + 2 * bar; }
  void release(int a, int bar, std::int64_t phase, bool whole_past) {
    const int s = slot(bar, phase);
    if (rel_phase_[s] != phase) {
      rel_phase_[s] = phase;
      std::memset(rel_clock_[s], 0, sizeof rel_clock_[s]);
      std::memset(rel_known_[s], 0, sizeof rel_known_[s]);
    }
    if (whole_past) {
      for (int k = 0; k < kW; ++k) rel_clock_[s][k] = std::max(rel_clock_[s][k], clock_[a][k]);
      for (int k = 0; k < kBars; ++k) rel_known_[s][k] = std::max(rel_known_[s][k], known_[a][k]);
    } else {
      rel_clock_[s][a] = std::max(rel_clock_[s][a], clock_[a][a]);
    }
    ++clock_[a][a];
  }
  void acquire(int a, int bar, std::int64_t phase) {
    known_[a][bar] = std::max<std::int64_t>(known_[a][bar], phase + 1);
    const int s = slot(bar, phase);
    if (rel_phase_[s] != phase) return;
    for (int k = 0; k < kW; ++k) clock_[a][k] = std::max(clock_[a][k], rel_clock_[s][k]);
    for (int k = 0; k < kBars; ++k) known_[a][k] = std::max(known_[a][k], rel_known_[s][k]);
  }
  void join_all_synced(int a) {  // each thread's sync acquires every thread's arrival
    for (int k = 0; k < kW; ++k) clock_[a][k] = std::max(clock_[a][k], sync_all_[k]);
  }

  void access(int a, int first_word, int words, bool write) {
    for (int w = first_word; w < first_word + words; ++w) {
      Word& s = shadow_[w];
      if (s.generation != generation_) s = Word{generation_, {}, {}};
      if (s.write.agent != static_cast<std::uint32_t>(a) && !ordered(s.write, a)) race();
      if (write) {
        if (s.read.agent != static_cast<std::uint32_t>(a) && !ordered(s.read, a)) race();
        s.write = Epoch{static_cast<std::uint32_t>(a), clock_[a][a]};
        s.read = Epoch{};
      } else {
        s.read = Epoch{static_cast<std::uint32_t>(a), clock_[a][a]};
      }
    }
  }
  bool ordered(const Epoch& e, int a) const { return e.agent == ~0u || clock_[a][e.agent] >= e.clock; }
  void race() { races_ = true; }  // noted; the run goes on (its fibers cannot unwind by an exception)

  void reset(std::uint64_t seed) {
    rng_ = SplitMix64{seed};
    races_ = false;
    if constexpr (Complete) {
      chooser_->begin(seed);
      schedule_.clear();
      for (int b = 0; b < kBars; ++b) {
        counting_[b].clear();
        completed_[b].clear();
        live_[b] = false;
      }
      enabled_bits_ = 0;
    }
    steps_ = 0;
    n_enabled_ = 0;
    n_agents_ = kThreads;
    synced_ = 0;
    unfinished_ = kThreads;
    for (int i = 0; i <= kBars; ++i) n_waiters_[i] = 0;
    for (Agent& a : agents_) a = Agent{};
    for (Barrier& b : bars_) b = Barrier{};
    std::memset(clock_, 0, sizeof clock_);
    std::memset(known_, 0, sizeof known_);
    for (int a = 0; a < kThreads; ++a) clock_[a][a] = 1;
    for (std::int64_t& p : rel_phase_) p = INT64_MIN;
    std::memset(sync_all_, 0, sizeof sync_all_);
    ++generation_;
  }

  static constexpr int kStageWords = 0, kDWords = kStages * kElems, kCWords = kDWords + kTiles * kElems;
  ctx::fiber cont_[kMaxAgents + 1];
  Agent agents_[kMaxAgents];
  int enabled_[kMaxAgents] = {}, n_enabled_ = 0, n_agents_ = 0, cur_ = kMain;
  int waiters_[kBars + 1][kMaxAgents] = {}, n_waiters_[kBars + 1] = {};  // per barrier, then the sync's
  Barrier bars_[kBars];
  int synced_ = 0, unfinished_ = 0;
  bool priming_ = false, races_ = false;
  // Complete only:
  Chooser* chooser_;
  std::vector<std::uint32_t> schedule_;
  std::vector<std::pair<int, std::uint32_t>> counting_[kBars], completed_[kBars];
  bool live_[kBars] = {};
  std::uint64_t enabled_bits_ = 0;
  std::atomic<bool> in_protocol_{false}, stop_{false};
  std::atomic<std::uint64_t> ticks_{0};
  static constexpr std::uint64_t kMaxSteps = 1'000'000;
  const bool release_before_read_;
  std::uint64_t steps_ = 0;
  SplitMix64 rng_{1};
  std::uint32_t clock_[kMaxAgents][kW] = {}, sync_all_[kW] = {};
  std::int64_t known_[kMaxAgents][kBars] = {};
  std::int64_t rel_phase_[2 * kBars] = {};
  std::uint32_t rel_clock_[2 * kBars][kW] = {};
  std::int64_t rel_known_[2 * kBars][kBars] = {};
  Word shadow_[kCWords + kTiles * kElems] = {};
  std::uint32_t generation_ = 0;
  float stage_[kStages * kElems] = {}, d_[kTiles * kElems] = {}, c_[kTiles * kElems] = {1, 2, 3, 4};
};

// The first of 100,000 random runs in which the model with release-before-read finds its race
// (0: none).
template <bool Complete>
std::uint64_t first_race(Chooser* chooser) {
  FloorModel<Complete> buggy(true, chooser);
  for (std::uint64_t r = 0; r < 100'000; ++r) {
    buggy.run(r + 1);
    if (buggy.found_race()) return r + 1;
  }
  return 0;
}

struct Timed {
  std::uint64_t runs = 0, transitions = 0;
  double seconds = 0;
  double ns() const { return seconds * 1e9 / double(transitions); }
  void print(const char* what) const {
    fmt::print("  {}: {} runs, {} transitions ({:.1f} per run) in {:.3f} s = {:.1f} ns per transition\n", what, runs,
               transitions, double(transitions) / double(runs), seconds, ns());
  }
};

template <bool Complete>
Timed timed(std::uint64_t runs, Chooser* chooser) {
  FloorModel<Complete> model(false, chooser);
  Timed t{runs, 0, 0};
  const auto t0 = Clock::now();
  for (std::uint64_t r = 0; r < runs; ++r) t.transitions += model.run(r + 1);
  t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t runs = 200'000;
  bool floor_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--runs" && i + 1 < argc) {
      runs = std::strtoull(argv[++i], nullptr, 10);
    } else if (flag == "--floor-only") {
      floor_only = true;
    } else {
      fmt::print(stderr, "usage: bench_step_floor [--runs R] [--floor-only]\n");
      return 2;
    }
  }
  // First each model's own check: its race detector finds the mutation in some random run.
  RandomChooser chooser;
  const std::uint64_t found_floor = first_race<false>(&chooser), found_complete = first_race<true>(&chooser);
  if (!found_floor || !found_complete) {
    fmt::print(stderr, "bench_step_floor: a model missed the release-before-read race in 100000 runs\n");
    return 1;
  }
  const Timed floor = timed<false>(runs, &chooser), complete = timed<true>(runs, &chooser);
  fmt::print("bench_step_floor: epi-load, 3 stages, 1 store warp of 4 threads, 6 tiles of 4 floats; one core\n");
  floor.print("floor model");
  complete.print("floor model, complete");
  fmt::print("  complete / floor: {:.2f}x\n", complete.ns() / floor.ns());
  if (floor_only) return 0;

  using namespace mbcheck::sim;
  FuzzOptions o;
  o.runs = runs;
  o.jobs = 1;
  const std::map<std::string, std::string> opts{
      {"stages", "3"}, {"store-warps", "1"}, {"threads-per-warp", "4"}, {"tiles", "6"}, {"tile-elems", "4"}};
  const FuzzResult f = fuzz([&] { return std::unique_ptr<Program>(make_protocol("epi-load", opts)); }, o);

  const double mb_ns = f.seconds * 1e9 / double(f.transitions), floor_ns = floor.ns();
  fmt::print("  mbcheck random walk: {} runs, {} transitions ({:.1f} per run) in {:.3f} s = {:.1f} ns per transition\n",
             f.runs, f.transitions, double(f.transitions) / double(f.runs), f.seconds, mb_ns);
  fmt::print("  mbcheck / floor: {:.2f}x the floor's time per transition; mbcheck / complete: {:.2f}x\n",
             mb_ns / floor_ns, mb_ns / complete.ns());
  fmt::print("  (the models' own check: both find release-before-read's race, at runs {} and {})\n", found_floor,
             found_complete);
  return 0;
}
