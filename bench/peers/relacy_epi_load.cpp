// A Relacy model of mbcheck's bundled `epi-load` protocol, for bench_peers to time Relacy's
// random scheduler against mbcheck's fuzzing on the same protocol and shape.
//
// What it models (spec/pipeline.hpp's ProducerConsumerPipeline as EpiLoadPipeline, driven by
// spec/kernels/residual_add.hpp's residual_add_kernel, one CTA, no mutation):
//   * full[s] / empty[s], s < stages: each an mbarrier, one rl::atomic word packing
//     (completed phases, pending arrivals, pending tx bytes). full[s] expects 1 arrival (the
//     producer's arrive.expect_tx) plus the tile's bytes; empty[s] expects one arrival per
//     consumer. Every barrier operation is one indivisible step (a release RMW, as
//     mbarrier.arrive is .release), as on the hardware and in mbcheck's emulator; the one that
//     completes a phase re-arms the count.
//   * waits are try_wait.parity loops as the GPU runs them (the phase's parity), and block the
//     thread until the phase completes (not scheduled meanwhile, as an mbcheck wait is not
//     enabled): the check and the park are one step, futex-style, and the completing
//     operation wakes the waiters. All threads blocked = Relacy's deadlock. Like mbcheck's
//     host, the model knows the full phase number and asserts the waiter is not two phases
//     behind (aliasing).
//   * thread 0: the load warp's elected lane. Per tile: wait empty[s] (first phase -1),
//     arrive.expect_tx(bytes) on full[s], issue the bulk copy, step.
//   * threads 1..stages: the copy of stage s (at most one copy per stage is in flight: the
//     next is issued only after the consumers released what the last one filled). It waits
//     for the issue, writes the tile's floats into the stage buffer (rl::var: Relacy checks
//     races on them) and performs complete_tx(bytes) on full[s]: its landing is one step, as
//     an mbcheck copy agent's is.
//   * the other threads: the store warp's lanes. Per tile: wait full[s] (phase 0 first), read
//     every consumers-th 16-byte vector of the stage and accum, write D, arrive on empty[s].
//   * after the run: D is checked against accum + beta * C.
//
// Left out: the load warp's other lanes (they return at once), init + __syncthreads (done in
// before(), which Relacy fences), the 16-byte vector accesses (modelled per float), the
// persistent-grid loop over several CTAs, ragged last tiles and copies in pieces. Not quite
// mbcheck's: a copy is a thread for the whole run, so it spends one step per tile waiting for
// its issue; and Relacy's release is C++'s, so a landing releases the copy thread's whole
// history (mbcheck's releases only the bytes it wrote), which orders nothing more here.
//
// Usage: relacy_epi_load [--stages S] [--threads T] [--tiles N] [--tile-elems E]
//                        [--iterations I] [--bug[=race|deadlock]]
// --bug=race: the consumers arrive on empty[s] before reading the stage (mbcheck's mutation
// release-before-read); --bug=deadlock: empty[] expects one arrival too many
// (consumer-count-plus-one). Prints one line of key=value pairs; exit 0 when no bug was
// found, 1 when one was, 2 on a usage error.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <utility>

#include <relacy/relacy.hpp>

namespace {

// Relacy fixes the thread count at compile time: one instantiation per count, each costing
// seconds to compile, so the range is kept to what the benches use.
constexpr int kMaxStages = 8, kMaxThreads = 12;

enum class Bug { none, race, deadlock };

struct Shape {
  int stages = 3, consumers = 4, tiles = 6, elems = 4;
  Bug bug = Bug::none;
  float beta = 0.5f;
  float c[4096], accum[4096];  // global inputs: read-only, so plain memory
};
Shape g;  // fixed before simulate() starts; the model only reads it

// Barrier word: bits 0-31 completed phases, 32-47 pending arrivals, 48-63 pending tx bytes.
// (issued[] counts in bits 0-31 alone.)
constexpr std::uint64_t kArrival = 1ull << 32, kTx = 1ull << 48;
std::uint64_t completed(std::uint64_t w) { return w & 0xffffffffu; }
std::uint64_t pending(std::uint64_t w) { return (w >> 32) & 0xffffu; }
std::uint64_t tx(std::uint64_t w) { return w >> 48; }

// One indivisible step on `a`: replace its latest value v by f(v) and return v. Preemption
// is off between the read and the write, so the CAS succeeds at its first or second try (a
// failed CAS reads the latest value; f may see a stale one first, so it only computes). When
// the low word changes (a phase completes; a copy is issued) the waiters wake and re-check.
template <class F>
std::uint64_t atomic_step(rl::atomic<std::uint64_t>& a, F f) {
  rl::context& c = rl::ctx();
  c.sched();
  rl::preemption_disabler off(c);
  std::uint64_t cur = a.load(rl::mo_relaxed, $), next;
  do {
    next = f(cur);
  } while (!a.compare_exchange_strong(cur, next, rl::mo_release, $, rl::mo_relaxed, $));
  if (completed(next) != completed(cur)) a.wake(c, kMaxThreads, $);
  return cur;
}

// Blocks until done(latest value): the check (an acquire RMW, which reads the latest value as
// the hardware's barrier read does) and the park are one step, so no wake-up is lost.
template <class Pred>
void block_until(rl::atomic<std::uint64_t>& a, Pred done) {
  rl::context& c = rl::ctx();
  for (;;) {
    c.sched();
    std::uint64_t v;
    {
      rl::preemption_disabler off(c);
      v = a.fetch_add(0, rl::mo_acquire, $);
    }
    if (done(v)) return;
    a.wait(c, false, false, $);
  }
}

struct Mbarrier {
  rl::atomic<std::uint64_t> word;
  std::uint64_t count = 0;

  void init(std::uint64_t arrivals) {
    count = arrivals;
    word.store(arrivals * kArrival, rl::mo_relaxed, $);
  }
  // arrive.expect_tx (arrivals 1, add_tx bytes), arrive (1, 0) or complete_tx (0, 0, bytes).
  void update(std::uint64_t arrivals, std::uint64_t add_tx, std::uint64_t sub_tx) {
    const std::uint64_t n = count;
    const std::uint64_t before = atomic_step(word, [&](std::uint64_t w) {
      w = w - arrivals * kArrival + add_tx * kTx - sub_tx * kTx;
      if (pending(w) == 0 && tx(w) == 0) w = (completed(w) + 1) | n * kArrival;  // phase completes
      return w;
    });
    RL_ASSERT(pending(before) >= arrivals);    // over-arrival
    RL_ASSERT(tx(before) + add_tx >= sub_tx);  // tx count below zero
  }
  void arrive() { update(1, 0, 0); }
  void arrive_expect_tx(std::uint64_t bytes) { update(1, bytes, 0); }
  void complete_tx(std::uint64_t bytes) { update(0, 0, bytes); }
  // try_wait.parity until true, for full phase `phase` (-1: the phase before init).
  void wait(std::int64_t phase) {
    block_until(word, [&](std::uint64_t w) {
      RL_ASSERT(static_cast<std::int64_t>(completed(w)) <= phase + 1);  // aliasing
      return (completed(w) & 1) != (static_cast<std::uint64_t>(phase) & 1);
    });
  }
};

template <int Threads>
struct EpiLoad : rl::test_suite<EpiLoad<Threads>, Threads> {
  Mbarrier full[kMaxStages], empty[kMaxStages];
  rl::atomic<std::uint64_t> issued[kMaxStages];  // copies issued to each stage
  rl::var<float>* stage = nullptr;               // [stages][elems]
  rl::var<float>* d = nullptr;                   // [tiles][elems]

  EpiLoad() {
    stage = new rl::var<float>[g.stages * g.elems];
    d = new rl::var<float>[g.tiles * g.elems];
  }
  ~EpiLoad() {
    delete[] stage;
    delete[] d;
  }

  void before() {
    for (int s = 0; s < g.stages; ++s) {
      full[s].init(1);
      empty[s].init(static_cast<std::uint64_t>(g.consumers) + (g.bug == Bug::deadlock ? 1 : 0));
      issued[s].store(0, rl::mo_relaxed, $);
    }
  }

  void thread(unsigned index) {
    const int i = static_cast<int>(index);
    if (i == 0)
      producer();
    else if (i <= g.stages)
      copy(i - 1);
    else
      consumer(i - 1 - g.stages);
  }

  void producer() {
    const std::uint64_t bytes = static_cast<std::uint64_t>(g.elems) * sizeof(float);
    for (int t = 0; t < g.tiles; ++t) {
      const int s = t % g.stages;
      empty[s].wait(t / g.stages - 1);
      full[s].arrive_expect_tx(bytes);
      atomic_step(issued[s], [](std::uint64_t n) { return n + 1; });  // cp.async.bulk
    }
  }

  void copy(int s) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(g.elems) * sizeof(float);
    std::uint64_t done = 0;
    for (int t = s; t < g.tiles; t += g.stages) {
      block_until(issued[s], [&](std::uint64_t n) { return n > done; });
      ++done;
      for (int e = 0; e < g.elems; ++e) stage[s * g.elems + e]($) = g.c[t * g.elems + e];
      full[s].complete_tx(bytes);
    }
  }

  void consumer(int me) {
    for (int t = 0; t < g.tiles; ++t) {
      const int s = t % g.stages;
      full[s].wait(t / g.stages);
      if (g.bug == Bug::race) empty[s].arrive();  // released before it is read
      for (int v = me; v < g.elems / 4; v += g.consumers)
        for (int e = 4 * v; e < 4 * v + 4; ++e)
          d[t * g.elems + e]($) = std::fma(g.beta, float(stage[s * g.elems + e]($)), g.accum[t * g.elems + e]);
      if (g.bug != Bug::race) empty[s].arrive();
    }
  }

  void after() {
    for (int i = 0; i < g.tiles * g.elems; ++i) RL_ASSERT(float(d[i]($)) == std::fma(g.beta, g.c[i], g.accum[i]));
  }
};

template <int Threads>
bool run(rl::test_params& p) {
  return rl::simulate<EpiLoad<Threads>>(p);
}

template <int... N>
bool dispatch(int threads, rl::test_params& p, std::integer_sequence<int, N...>) {
  bool ok = false;
  ((threads == N + 3 ? (ok = run<N + 3>(p), true) : false) || ...);
  return ok;
}

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "relacy_epi_load: " << why
            << "\nusage: relacy_epi_load [--stages S] [--threads T] [--tiles N] [--tile-elems E] "
               "[--iterations I] [--bug[=race|deadlock]]\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  long long iterations = 200000;
  for (int a = 1; a < argc; ++a) {
    const std::string flag = argv[a];
    auto value = [&] {
      if (a + 1 >= argc) usage(flag + " needs a value");
      return std::atoll(argv[++a]);
    };
    if (flag == "--stages")
      g.stages = static_cast<int>(value());
    else if (flag == "--threads")
      g.consumers = static_cast<int>(value());
    else if (flag == "--tiles")
      g.tiles = static_cast<int>(value());
    else if (flag == "--tile-elems")
      g.elems = static_cast<int>(value());
    else if (flag == "--iterations")
      iterations = value();
    else if (flag == "--bug" || flag == "--bug=race")
      g.bug = Bug::race;
    else if (flag == "--bug=deadlock")
      g.bug = Bug::deadlock;
    else
      usage("unknown flag " + flag);
  }
  const int threads = 1 + g.stages + g.consumers;
  if (g.stages < 1 || g.stages > kMaxStages) usage("--stages must be 1..8");
  if (g.consumers < 1 || threads > kMaxThreads) usage("1 + stages + threads must be at most 12");
  if (g.elems < 4 || g.elems % 4 != 0 || g.tiles < 1 || g.tiles * g.elems > 4096)
    usage("--tile-elems must be a multiple of 4 and tiles x tile-elems at most 4096");
  if (iterations < 1) usage("--iterations must be positive");
  for (int i = 0; i < g.tiles * g.elems; ++i) {  // the same kind of fixed inputs as mbcheck's
    g.c[i] = static_cast<float>((i * 37) % 101) / 64.0f - 0.75f;
    g.accum[i] = static_cast<float>((i * 53) % 97) / 32.0f - 1.5f;
  }

  // Relacy writes its report to output_stream; a stream that allocates would have its buffer
  // freed through Relacy's allocator, so a quiet pass writes nowhere and a failing run is
  // simulated again with the report (the failing history) on stderr.
  std::ostream nowhere(nullptr);
  auto simulate = [&](std::ostream& out) {
    rl::test_params p;
    p.iteration_count = static_cast<rl::iteration_t>(iterations);
    p.search_type = rl::sched_random;
    p.execution_depth_limit = 1u << 30;  // waits block: a run is never long, let nothing cut it
    p.output_stream = &out;
    p.progress_stream = &nowhere;
    const bool ok = dispatch(threads, p, std::make_integer_sequence<int, kMaxThreads - 2>());
    return std::pair{ok, p};
  };
  const auto start = std::chrono::steady_clock::now();
  const auto [ok, p] = simulate(nowhere);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long long ran = ok ? iterations : static_cast<long long>(p.stop_iteration);  // 1-based
  std::printf(
      "relacy_epi_load stages=%d threads=%d tiles=%d tile_elems=%d bug=%s iterations=%lld seconds=%.4f "
      "iterations_per_s=%.0f result=%s\n",
      g.stages, g.consumers, g.tiles, g.elems,
      g.bug == Bug::none   ? "none"
      : g.bug == Bug::race ? "race"
                           : "deadlock",
      ran, secs, ran / secs, ok ? "ok" : rl::test_result_str(p.test_result));
  std::fflush(stdout);
  if (!ok) simulate(std::cerr);
  return ok ? 0 : 1;
}
