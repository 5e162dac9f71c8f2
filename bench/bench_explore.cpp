// Exhaustive exploration figures: how long the full-size EpiLoadPipeline takes to verify,
// how DPOR's execution count compares with brute force's equivalence classes, and DPOR's
// transition rate against the runtime's raw operation rate, all measured in this run.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "sim/check.hpp"
#include "sim/host_platform.hpp"
#include "sim/protocols/protocols.hpp"
#include "sim/runtime/guarded_tries.hpp"
#include "sim/explore/strategy.hpp"
#include "spec/mbarrier.hpp"

using namespace mbcheck::sim;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The raw-operation benchmark's program: 8 threads doing arrive+wait rounds on their own
// barriers (bench_runtime's figure).
FunctionProgram ping_program() {
  LaunchShape shape;
  shape.threads_per_cta = 8;
  shape.smem_bytes = 8 * sizeof(MbarrierState);
  return FunctionProgram(shape, [] {
    using P = HostPlatform;
    mbcheck::Mbarrier<P> bar(reinterpret_cast<P::Barrier*>(P::shared_memory())[P::thread_idx()]);
    bar.init(1);
    for (int phase = 0; phase < 2000; ++phase) {
      bar.arrive();
      bar.wait(phase);
    }
  });
}

// The raw operation rate: that program under the random strategy.
double raw_ns_per_op() {
  FunctionProgram ping = ping_program();
  Runtime rt;
  std::uint64_t steps = 0;
  auto start = Clock::now();
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    RandomStrategy s(seed);
    steps += rt.execute(ping, s).steps;
  }
  return std::chrono::duration<double>(Clock::now() - start).count() * 1e9 / static_cast<double>(steps);
}

// Ordinary patterns with a single outcome (the exploration issue's size bars): how many
// executions exhaustive DPOR needs for each, stopped at `cap`.
struct PatternRun {
  std::uint64_t executions = 0;
  bool complete = false;
  double seconds = 0;
};
PatternRun run_pattern(std::uint32_t threads, std::function<void()> kernel, std::uint64_t cap = 20000) {
  LaunchShape shape;
  shape.threads_per_cta = threads;
  shape.smem_bytes = 64 * sizeof(MbarrierState);
  FunctionProgram prog(shape, std::move(kernel));
  ExploreOptions o;
  o.max_executions = cap;
  o.time_limit_s = 10;
  const ExploreResult r = explore(prog, o);
  return {r.stats.executions, r.stats.complete, r.stats.seconds};
}
mbcheck::Mbarrier<HostPlatform> smem_bar(int i) {
  return mbcheck::Mbarrier<HostPlatform>(reinterpret_cast<HostPlatform::Barrier*>(HostPlatform::shared_memory())[i]);
}
void print_pattern(const std::string& name, const PatternRun& r) {
  fmt::print("  {:<58} {:>8}{} executions  {:.3f} s\n", name, r.executions, r.complete ? " " : "+", r.seconds);
}
void patterns() {
  using P = HostPlatform;
  fmt::print("\nordinary single-outcome patterns (executions; + = stopped at 20000 or 10 s; the target is 1):\n");
  for (std::uint32_t n : {2u, 4u, 32u, 128u})
    for (int k : {3, 8}) {
      print_pattern(fmt::format("{} threads x {} rounds of arrive; wait(r) on one barrier", n, k),
                    run_pattern(n, [n, k] {
                      if (P::thread_idx() == 0) smem_bar(0).init(n);
                      P::sync_threads();
                      for (int r = 0; r < k; ++r) {
                        smem_bar(0).arrive();
                        smem_bar(0).wait(r);
                      }
                    }));
    }
  alignas(16) static unsigned char src[16 * 16], dst[16 * 16];
  for (std::uint32_t n : {2u, 16u, 128u})
    print_pattern(fmt::format("arrive.expect_tx + copy beside {} plain arrivals", n - 1), run_pattern(n, [n] {
                    if (P::thread_idx() == 0) smem_bar(0).init(n);
                    P::sync_threads();
                    if (P::thread_idx() == 0) {
                      smem_bar(0).arrive_expect_tx(16);
                      P::cp_async_bulk_global_to_shared(P::shared_memory() + 1024, src, 16, smem_bar(0).raw());
                    } else {
                      smem_bar(0).arrive();
                    }
                    smem_bar(0).wait(0);
                  }));
  for (std::uint32_t k : {2u, 4u, 12u})
    print_pattern(fmt::format("{} bulk copies landing on one barrier", k), run_pattern(2, [k] {
                    if (P::thread_idx() == 0) smem_bar(0).init(1);
                    P::sync_threads();
                    if (P::thread_idx() == 0) {
                      smem_bar(0).arrive_expect_tx(16 * k);
                      for (std::uint32_t i = 0; i < k; ++i)
                        P::cp_async_bulk_global_to_shared(P::shared_memory() + 1024 + 16 * i, src + 16 * i, 16,
                                                          smem_bar(0).raw());
                    }
                    smem_bar(0).wait(0);
                  }));
  // FlashAttention-3's non-TMA paged-KV producer (PipelineAsync): each thread copies its piece
  // by cp.async, has the barrier track it (cp.async.mbarrier.arrive without .noinc: pending
  // +1, an arrive-on once it lands) and arrives itself.
  alignas(16) static unsigned char pieces[16 * 128];
  for (std::uint32_t n : {2u, 8u, 32u, 128u})
    print_pattern(fmt::format("{} threads: cp.async, its mbarrier arrive (+1), arrive", n), run_pattern(n, [n] {
                    const std::uint32_t t = P::thread_idx();
                    if (t == 0) smem_bar(0).init(n);
                    P::sync_threads();
                    P::cp_async(P::shared_memory() + 64 + 16 * t, pieces + 16 * t, 16);
                    P::cp_async_mbarrier_arrive(smem_bar(0).raw());
                    smem_bar(0).arrive();
                    smem_bar(0).wait(0);
                    (void)P::load(reinterpret_cast<std::uint32_t*>(P::shared_memory() + 64 + 16 * ((t + 1) % n)));
                  }));
  for (std::uint32_t c : {1u, 2u, 3u, 8u, 32u, 128u})
    print_pattern(fmt::format("spin loop, {} consumer(s): while (!try_wait(b, 0)) {{}}", c), run_pattern(c + 1, [] {
                    if (P::thread_idx() == 0) smem_bar(0).init(1);
                    P::sync_threads();
                    if (P::thread_idx() == 0)
                      smem_bar(0).arrive();
                    else
                      while (!smem_bar(0).try_wait(0)) {}
                  }));
  // A back-off counter that stays live (its iterations differ): merged after a few re-polls,
  // so the classes are the exits after 0..kBackoffExplored+1 failed polls, per consumer.
  for (std::uint32_t c : {1u, 2u})
    print_pattern(fmt::format("back-off loop, {} consumer(s): if (++n > 64) nanosleep(n)", c), run_pattern(c + 1, [] {
                    if (P::thread_idx() == 0) smem_bar(0).init(1);
                    P::sync_threads();
                    if (P::thread_idx() == 0) {
                      smem_bar(0).arrive();
                    } else {
                      std::uint32_t n = 0;
                      while (!smem_bar(0).try_wait(0))
                        if (++n > 64) P::nanosleep(n);
                      P::check(n < (1u << 30), "n is live");
                    }
                  }));
  // The back-off loop of hand-written kernels, polling at two places (issue #49): a try_wait,
  // then from its third round a nanosleep and a test_wait. One loop over two call sites; its
  // counter grows (merged after kBackoffExplored re-polls), `ns` saturates.
  for (std::uint32_t c : {1u, 2u, 3u, 4u})
    print_pattern(fmt::format("two-poll back-off loop, {} consumer(s)", c), run_pattern(c + 1, [] {
                    if (P::thread_idx() == 0) smem_bar(0).init(1);
                    P::sync_threads();
                    if (P::thread_idx() == 0) {
                      smem_bar(0).arrive();
                    } else {
                      std::uint32_t n = 0, ns = 32;
                      while (!smem_bar(0).try_wait(0)) {
                        if (++n > 2) {
                          P::nanosleep(ns);
                          ns = std::min(2 * ns, 1024u);
                          if (smem_bar(0).test_wait(0)) break;
                        }
                      }
                    }
                  }));
  // A spin that also reads a flag the producer may set instead of arriving.
  for (std::uint32_t c : {1u, 2u, 4u})
    print_pattern(fmt::format("spin on try_wait or an atomic flag, {} consumer(s)", c), run_pattern(c + 1, [] {
                    auto* flag = reinterpret_cast<std::int64_t*>(P::shared_memory() + 2048);
                    if (P::thread_idx() == 0) smem_bar(0).init(1);
                    P::sync_threads();
                    if (P::thread_idx() == 0) {
                      P::atomic_store(flag, 1);
                      smem_bar(0).arrive();
                    } else {
                      while (!smem_bar(0).try_wait(0))
                        if (P::atomic_load(flag) != 0) break;
                    }
                  }));
  // A loop of atomic loads alone on a flag the producer raises: one class however many spin
  // (its second load is an await of the flag and its first is no event; before, each load was
  // a step and the search had no end).
  for (std::uint32_t c : {1u, 2u, 4u, 32u})
    print_pattern(fmt::format("spin on an atomic flag alone, {} consumer(s): while (atomic_load(f) == 0) {{}}", c),
                  run_pattern(c + 1, [] {
                    auto* flag = reinterpret_cast<std::int64_t*>(P::shared_memory() + 2048);
                    if (P::thread_idx() == 0)
                      P::atomic_store(flag, 1);
                    else
                      while (P::atomic_load(flag) == 0) {}
                  }));
  // try_wait then a blocking wait if it failed: a bool the code branches on, or a status
  // only the wait reads (CUTLASS's consumer_try_wait / consumer_wait).
  for (bool status : {false, true})
    for (std::uint32_t c : status ? std::vector<std::uint32_t>{1, 3, 128} : std::vector<std::uint32_t>{1, 2, 3})
      print_pattern(fmt::format("{}, {} consumer(s), 2 rounds",
                                status ? "try_wait status then wait(status)" : "bool try_wait-then-wait", c),
                    run_pattern(c + 1, [c, status] {
                      if (P::thread_idx() == 0) smem_bar(0).init(1), smem_bar(1).init(c);
                      P::sync_threads();
                      for (int r = 0; r < 2; ++r) {
                        if (P::thread_idx() == 0) {
                          smem_bar(1).wait(r - 1);
                          smem_bar(0).arrive();
                          continue;
                        }
                        if (status)
                          smem_bar(0).wait(smem_bar(0).try_wait_status(r));
                        else if (!smem_bar(0).try_wait(r))
                          smem_bar(0).wait(r);
                        smem_bar(1).arrive();
                      }
                    }));
  // Named barriers at full warps (bar.* is .aligned: a warp's lanes converge, its lowest live
  // lane arrives for the warp): one bar.sync by every warp, and a hand-off in which warp 0
  // publishes a word per lane (one set a round) and bar.arrives while the others bar.sync and read it, 2 rounds.
  for (std::uint32_t warps : {2u, 4u, 8u}) {
    print_pattern(fmt::format("{} warps x 32 lanes, one bar.sync(1, {})", warps, 32 * warps),
                  run_pattern(32 * warps, [warps] { P::bar_sync(1, 32 * warps); }));
    print_pattern(fmt::format("{} warps x 32 lanes, bar.arrive -> bar.sync hand-off, 2 rounds", warps),
                  run_pattern(32 * warps, [warps] {
                    auto* words = reinterpret_cast<std::int64_t*>(P::shared_memory());
                    for (std::uint32_t r = 0; r < 2; ++r) {
                      if (P::thread_idx() < 32) {
                        P::store(words + 32 * r + P::thread_idx(), std::int64_t{r});
                        P::bar_arrive(1 + r, 32 * warps);
                      } else {
                        P::bar_sync(1 + r, 32 * warps);
                        P::check(P::load(words + 32 * r + P::thread_idx() % 32) == r, "the round's word");
                      }
                    }
                  }));
  }
  // The bundled CUTLASS-style TMA pipeline (spec/kernels/tma_pipeline.hpp), 4 iterations.
  for (bool try_first : {false, true})
    for (std::uint32_t stages : {2u, 4u})
      for (std::uint32_t consumers : {2u, 4u, 128u}) {
        auto prog = make_protocol("tma-pipeline", {{"stages", std::to_string(stages)},
                                                   {"consumers", std::to_string(consumers)},
                                                   {"consumer-wait", try_first ? "try-then-wait" : "wait"}});
        ExploreOptions o;
        o.max_executions = 20000;
        o.time_limit_s = 10;
        const ExploreResult r = explore(*prog, o);
        print_pattern(fmt::format("tma-pipeline, {} stages, {} consumers{}", stages, consumers,
                                  try_first ? ", try-then-wait" : ""),
                      {r.stats.executions, r.stats.complete, r.stats.seconds});
      }
  (void)dst;
}

// CUTLASS's shapes that the relation's rules below serve (docs/model.md): the epilogue load
// pipeline's producer warp (every lane arrives on C's full barrier, the elected lane arms it
// by a separate expect_tx before its own arrive and issues the copy), and a consumer that
// polls each stage with a bool try_wait and waits only when it failed (consumer_try_wait then
// consumer_wait), beside the same consumer through a try_wait status.
void cutlass_shapes() {
  using P = HostPlatform;
  alignas(16) static unsigned char src[16];
  for (std::uint32_t n : {8u, 32u})
    print_pattern(fmt::format("{} lanes arrive, lane 0's expect_tx + copy before its arrive", n), run_pattern(n, [n] {
                    if (P::thread_idx() == 0) smem_bar(0).init(n);
                    P::sync_threads();
                    if (P::thread_idx() == 0) {
                      smem_bar(0).expect_tx(16);
                      P::cp_async_bulk_global_to_shared(P::shared_memory() + 1024, src, 16, smem_bar(0).raw());
                    }
                    smem_bar(0).arrive();
                    smem_bar(0).wait(0);
                  }));
  // (form 0: bool, the merge off; 1: bool with the guarded tries merged, the default,
  // sim/runtime/guarded_tries.hpp; 2: status)
  const bool merging = merge_guarded_tries();
  for (int form : {0, 1, 2})
    for (std::uint32_t k : {2u, 4u, 8u}) {
      const bool status = form == 2;
      set_merge_guarded_tries(form == 1);
      print_pattern(fmt::format("{} consumer over {} stages",
                                status      ? "try_wait status then wait(status)"
                                : form == 1 ? "bool try_wait-then-wait, merged,"
                                            : "bool try_wait-then-wait",
                                k),
                    run_pattern(2, [k, status] {
                      if (P::thread_idx() == 0)
                        for (std::uint32_t s = 0; s < 2 * k; ++s) smem_bar(static_cast<int>(s)).init(1);
                      P::sync_threads();
                      for (std::uint32_t s = 0; s < k; ++s) {
                        const int full = static_cast<int>(s), empty = static_cast<int>(k + s);
                        if (P::thread_idx() == 0) {
                          smem_bar(full).arrive();
                          continue;
                        }
                        if (status)
                          smem_bar(full).wait(smem_bar(full).try_wait_status(0));
                        else if (!smem_bar(full).try_wait(0))
                          smem_bar(full).wait(0);
                        smem_bar(empty).arrive();
                      }
                    }));
      set_merge_guarded_tries(merging);
    }
}

}  // namespace

// bench_explore --cutlass-shapes / --patterns: those rows only.
int main(int argc, char** argv) {
  fmt::print("mbcheck exploration benchmark\n\n");
  if (argc > 1 && std::string(argv[1]) == "--patterns") {
    patterns();
    return 0;
  }
  fmt::print("CUTLASS's shapes (executions; + = stopped at 20000 or 10 s):\n");
  cutlass_shapes();
  if (argc > 1 && std::string(argv[1]) == "--cutlass-shapes") return 0;
  patterns();
  fmt::print("full-size EpiLoadPipeline (1 load warp + 4 store warps of 32 threads = 160 fibers), DPOR:\n");
  for (auto [stages, tiles, target] :
       {std::tuple{"2", "4", 1.0}, std::tuple{"4", "16", 5.0}, std::tuple{"2", "8", 0.0}}) {
    auto prog = make_protocol("epi-load", {{"stages", stages}, {"tiles", tiles}});
    std::vector<double> secs;
    CheckResult r;
    for (int i = 0; i < 5; ++i) {
      r = check_program(*prog);
      secs.push_back(r.stats.seconds);
    }
    fmt::print(
        "  {} stages x {:>2} tiles: {} in {:.4f} s (median of 5){}: {} execution(s), {} transitions, {} "
        "redundant\n",
        stages, tiles, to_string(r.verdict), median(secs),
        target > 0 ? fmt::format(", {:.0f}x under the {:.0f} s target", target / median(secs), target) : "",
        r.stats.executions, r.stats.transitions, r.stats.redundant);
  }
  fmt::print(
      "  why so few: the 128 arrivals on empty[s] commute (same phase), the 128 waits on full[s]\n"
      "  commute, different barriers and stage buffers commute, and a wait cannot move before the\n"
      "  ops completing its phase; every other pair of dependent operations is already ordered.\n\n");

  fmt::print("DPOR executions vs brute-force equivalence classes (small shapes):\n");
  struct Small {
    const char* name;
    std::map<std::string, std::string> opts;
  };
  for (const Small& c :
       {Small{"readers", {{"n", "3"}}}, Small{"lastzero", {{"n", "4"}}},
        Small{"epi-load",
              {{"store-warps", "1"}, {"threads-per-warp", "2"}, {"tile-elems", "8"}, {"tiles", "2"}, {"stages", "1"}}},
        Small{
            "epi-load",
            {{"store-warps", "2"}, {"threads-per-warp", "1"}, {"tile-elems", "8"}, {"tiles", "3"}, {"stages", "1"}}}}) {
    auto prog = make_protocol(c.name, c.opts);
    ExploreOptions bf;
    bf.kind = SearchKind::brute_force;
    bf.count_classes = true;
    bf.stop_at_first_bug = false;
    ExploreResult brute = explore(*prog, bf);
    ExploreOptions dp;
    dp.stop_at_first_bug = false;
    ExploreResult dpor = explore(*prog, dp);
    std::string shape;
    for (auto& [k, v] : c.opts) shape += fmt::format("{}{}={}", shape.empty() ? "" : ",", k, v);
    fmt::print(
        "  {:<9} {:<60} brute force {:>7} executions = {:>3} classes; DPOR {:>3} (ratio {:.2f}), {:.0f}x "
        "faster\n",
        c.name, shape, brute.stats.executions, brute.stats.classes, dpor.stats.executions,
        double(dpor.stats.executions) / double(brute.stats.classes), brute.stats.seconds / dpor.stats.seconds);
  }

  fmt::print("\nDPOR transition rate vs the raw operation rate (same run):\n");
  const double raw = raw_ns_per_op();
  fmt::print("  raw visible operation (fiber switch + emulator + race detector): {:.0f} ns\n", raw);
  {
    // The same program under DPOR: one long execution, so this is DPOR's own bookkeeping.
    FunctionProgram ping = ping_program();
    std::vector<double> ns;
    CheckResult r;
    for (int i = 0; i < 5; ++i) {
      r = check_program(ping);
      ns.push_back(r.stats.seconds * 1e9 / double(r.stats.transitions));
    }
    fmt::print(
        "  raw-operation program under DPOR ({} execution, {} transitions): {:.0f} ns per transition = "
        "{:.2f}x the raw operation\n",
        r.stats.executions, r.stats.transitions, median(ns), median(ns) / raw);
  }
  for (const Small& c : {Small{"lastzero", {{"n", "10"}}}, Small{"readers", {{"n", "13"}}},
                         Small{"epi-load", {{"stages", "4"}, {"tiles", "16"}}}}) {
    auto prog = make_protocol(c.name, c.opts);
    CheckResult r = check_program(*prog);
    const double ns = r.stats.seconds * 1e9 / double(r.stats.transitions);
    // The same program under plain random runs: the cost of executing without DPOR.
    Runtime rt;
    std::uint64_t steps = 0;
    const auto start = Clock::now();
    for (std::uint64_t seed = 0; seed < r.stats.executions + r.stats.redundant; ++seed) {
      RandomStrategy s(seed);
      steps += rt.execute(*prog, s).steps;
    }
    const double plain = std::chrono::duration<double>(Clock::now() - start).count() * 1e9 / double(steps);
    fmt::print(
        "  {:<9} {:>6} executions, {:>7} transitions: {:.0f} ns per transition = {:.2f}x the raw operation, "
        "{:.2f}x plain random executions of the same program ({:.0f} ns)\n",
        c.name, r.stats.executions, r.stats.transitions, ns, ns / raw, ns / plain, plain);
  }

  fmt::print("\nexhaustive search with 1 and 2 jobs (same executions, same order):\n");
  for (const Small& c : {Small{"lastzero", {{"n", "11"}}}, Small{"readers", {{"n", "14"}}}}) {
    double one = 0;
    for (unsigned jobs : {1u, 2u}) {
      auto prog = make_protocol(c.name, c.opts);
      CheckOptions o;
      o.jobs = jobs;
      o.make_program = [&] { return std::unique_ptr<Program>(make_protocol(c.name, c.opts)); };
      CheckResult r = check_program(*prog, o);
      if (jobs == 1) one = r.stats.seconds;
      fmt::print("  {:<9} --jobs {}: {} executions, {} redundant in {:.3f} s{}\n", c.name, jobs, r.stats.executions,
                 r.stats.redundant, r.stats.seconds,
                 jobs == 1 ? "" : fmt::format(", speed-up {:.2f}x", one / r.stats.seconds));
    }
  }
  return 0;
}
