// Schedule fuzzing: per-run seeds, jobs, PCT's guarantee against a random walk, shrinking.
#include <catch2/catch.hpp>

#include "sim/fuzz.hpp"
#include "sim/protocols/protocols.hpp"
#include "sim/explore/strategy.hpp"
#include "sim/report/replay_token.hpp"

using namespace mbcheck::sim;
using Opts = std::map<std::string, std::string>;

namespace {
std::function<std::unique_ptr<Program>()> factory(std::string name, Opts opts) {
  return [=] { return std::unique_ptr<Program>(make_protocol(name, opts)); };
}
}  // namespace

TEST_CASE("fuzzing finds every bug-zoo mutation, with random walk and with PCT", "[fuzz][zoo]") {
  auto mutation = GENERATE(as<std::string>{}, "consumer-count-plus-one", "producer-start-phase-0",
                           "producer-skips-empty-wait", "release-before-read", "tx-overcount", "tx-undercount-split",
                           "double-arrive", "explicit-without-signal", "use-before-init", "reinit-live");
  auto kind = GENERATE(FuzzKind::random, FuzzKind::pct);
  FuzzOptions o;
  o.kind = kind;
  o.runs = 300;
  o.jobs = 1;
  o.shrink = false;
  FuzzResult r = fuzz(factory("epi-load", {{"tiles", "4"}, {"mutation", mutation}}), o);
  INFO(mutation << (kind == FuzzKind::pct ? " pct" : " random"));
  CHECK(r.verdict == CheckVerdict::bug);
}

TEST_CASE("run i of a fuzzing campaign can be re-run alone from (seed, i)", "[fuzz][seeds]") {
  FuzzOptions o;
  o.runs = 500;
  o.jobs = 1;
  o.shrink = false;
  o.seed = 77;
  auto make = factory("epi-load", {{"tiles", "3"}, {"mutation", "release-before-read"}, {"threads-per-warp", "4"}});
  FuzzResult r = fuzz(make, o);
  REQUIRE(r.bug_run);
  auto prog = make();
  Runtime rt;
  RandomStrategy alone(run_seed(o.seed, *r.bug_run));
  Outcome again = rt.execute(*prog, alone);
  CHECK(again.schedule == r.counterexample->schedule);
  CHECK(again.verdict == r.counterexample->kind);
}

TEST_CASE("several jobs give the result of one", "[fuzz][jobs]") {
  auto make = factory("epi-load", {{"tiles", "4"}, {"mutation", "double-arrive"}, {"threads-per-warp", "8"}});
  FuzzOptions o;
  o.runs = 400;
  o.shrink = false;
  o.kind = FuzzKind::pct;
  o.jobs = 1;
  FuzzResult one = fuzz(make, o);
  o.jobs = 2;
  FuzzResult two = fuzz(make, o);
  REQUIRE(one.bug_run);
  CHECK(two.bug_run == one.bug_run);
  CHECK(two.runs == one.runs);
  CHECK(two.counterexample->schedule == one.counterexample->schedule);
  // Without a bug, both run every run.
  auto clean = factory("epi-load", {{"tiles", "3"}, {"threads-per-warp", "4"}});
  o.runs = 60;
  CHECK(fuzz(clean, o).runs == 60);
}

TEST_CASE("PCT finds a depth-1 bug a random walk almost never hits, within their stated bounds", "[fuzz][pct]") {
  // ordering-bug(20): a random walk fails with probability 2^-21 per run; PCT with depth 1
  // with probability >= 1/(n k^0) = 1/2 (n = 2 threads).
  auto prog = make_protocol("ordering-bug", {{"n", "20"}});
  Runtime rt;
  int random_hits = 0, pct_hits = 0;
  const int runs = 400;
  for (int i = 0; i < runs; ++i) {
    RandomStrategy random(run_seed(5, i));
    random_hits += is_bug(rt.execute(*prog, random).verdict);
    PctStrategy pct(run_seed(5, i), 1, 22);
    pct_hits += is_bug(rt.execute(*prog, pct).verdict);
  }
  CHECK(random_hits <= 1);              // expected 400 * 2^-21 = 0.0002
  CHECK(pct_hits >= runs * 0.5 * 0.8);  // the bound, less statistical slack
  FuzzOptions o;
  o.kind = FuzzKind::pct;
  o.depth = 1;
  o.runs = 300;
  o.jobs = 1;
  FuzzResult r = fuzz(factory("ordering-bug", {{"n", "20"}}), o);
  REQUIRE(r.bug_run);
  CHECK(*r.bug_run < 20);
  CHECK(r.pct_bound == Approx(0.5));
}

TEST_CASE("the shrinker keeps the bug kind and never adds preemptions", "[fuzz][shrink]") {
  auto mutation = GENERATE(as<std::string>{}, "tx-undercount-split", "consumer-count-plus-one", "double-arrive");
  FuzzOptions o;
  o.runs = 200;
  o.jobs = 1;
  o.kind = FuzzKind::random;
  FuzzResult r = fuzz(factory("epi-load", {{"tiles", "4"}, {"threads-per-warp", "8"}, {"mutation", mutation}}), o);
  INFO(mutation);
  REQUIRE(r.counterexample);
  REQUIRE(r.original);
  CHECK(r.counterexample->kind == r.original->kind);
  CHECK(r.shrunk_preemptions <= r.original_preemptions);
  CHECK(r.shrunk_preemptions <= 2);
  auto prog = make_protocol("epi-load", {{"tiles", "4"}, {"threads-per-warp", "8"}, {"mutation", mutation}});
  CHECK(replay_schedule(*prog, r.counterexample->schedule, false).verdict == r.counterexample->kind);
}

TEST_CASE(
    "every bundled mutation: fuzzing finds it, and its shrunk counterexample has fewer preemptions than the "
    "failing run (or the failing run had none) and a token under 2 KB",
    "[fuzz][shrink]") {
  // Shape flags a mutation needs besides its default shape.
  const std::map<std::string, Opts> needs = {{"epi-load/single-stage-wrong-parity", {{"stages", "1"}}},
                                             {"cluster-gemm/order-count-mismatch", {{"order", "named-barriers"}}},
                                             {"cluster-gemm/double-arrive", {{"order", "named-barriers"}}},
                                             {"cluster-gemm/no-order", {{"order", "named-barriers"}}},
                                             // the mutations that bite only on empty work
                                             {"epi-load/consumer-do-while", {{"tiles", "0"}}},
                                             // a race under PTX's reading of the proxies only
                                             {"epi-load/no-read-fence", {{"proxy-fences", "strict"}}},
                                             {"tma-pipeline/consumer-peeled-first", {{"iterations", "0"}}},
                                             {"pingpong/idle-group-returns", {{"tiles", "1"}}},
                                             {"cluster-gemm/peeled-first-k-block", {{"k-blocks", "0"}}}};
  int mutations = 0, shrunk = 0;
  for (const ProtocolInfo& p : bundled_protocols()) {
    for (const std::string& mutation : p.mutations) {
      ++mutations;
      Opts opts{{"mutation", mutation}};
      if (auto it = needs.find(p.name + "/" + mutation); it != needs.end())
        opts.insert(it->second.begin(), it->second.end());
      FuzzOptions o;
      o.runs = 2000;
      o.jobs = 1;
      o.kind = FuzzKind::random;
      FuzzResult r = fuzz(factory(p.name, opts), o);
      INFO(p.name << " --mutation " << mutation);
      REQUIRE(r.counterexample);
      REQUIRE(r.original);
      CHECK(r.counterexample->kind == r.original->kind);
      if (r.original_preemptions > 0) CHECK(r.shrunk_preemptions < r.original_preemptions);
      shrunk += r.shrunk_preemptions < r.original_preemptions;
      auto prog = make_protocol(p.name, opts);
      CHECK(replay_schedule(*prog, r.counterexample->schedule, false).verdict == r.counterexample->kind);
      const std::string token = encode_token({p.name, prog->options(), r.counterexample->schedule});
      INFO(token.size() << " chars, " << r.counterexample->schedule.size() << " steps");
      // pingpong double-arrive's bug needs ~3,900 steps with ~1,600 switches among 288 threads
      // where the one that ran last blocks (no preemption is left): ~3.7 KB. cluster-gemm
      // unscaled-empty-count's (an empty barrier counting one CTA's consumers of two): an early
      // release that does not complete its phase is no misuse (docs/semantics.md, "The
      // missing-wait rule"), so the run must reach the over-arrival at a later stage's refill,
      // ~12,300 steps among 768 threads: ~10 KB.
      const std::string which = p.name + "/" + mutation;
      const std::size_t limit = which == "pingpong/double-arrive"              ? 4096u
                                : which == "cluster-gemm/unscaled-empty-count" ? 12288u
                                                                               : 2048u;
      CHECK(token.size() < limit);
    }
  }
  CHECK(mutations >= 32);
  CHECK(shrunk >= mutations / 2);  // most failing runs preempt: the shrinker is not idle
}
