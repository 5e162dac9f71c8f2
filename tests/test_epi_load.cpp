// The bundled residual-add protocol over EpiLoadPipeline, under the random strategy.
#include <catch2/catch.hpp>

#include <set>

#include "sim/protocols/protocols.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/explore/strategy.hpp"

using namespace mbcheck::sim;

namespace {
Outcome run_seed(CliProgram& prog, Runtime& rt, std::uint64_t seed) {
  RandomStrategy s(seed);
  return rt.execute(prog, s);
}
}  // namespace

TEST_CASE("full size (1 load + 4 store warps of 32), 8 tiles: bit-exact and replayable for 1000 seeds",
          "[epi-load][seeds]") {
  auto stages = GENERATE(as<std::string>{}, "2", "4");
  auto prog = make_protocol("epi-load", {{"stages", stages}, {"tiles", "8"}});
  REQUIRE(prog->shape().threads_per_cta == 160);
  Runtime rt;
  std::set<std::vector<AgentId>> distinct;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    Outcome out = run_seed(*prog, rt, seed);
    INFO("stages " << stages << " seed " << seed << ": " << out.message);
    REQUIRE(out.verdict == Verdict::completed);  // includes D == reference, bit for bit
    ReplayStrategy replay(out.schedule);
    Outcome again = rt.execute(*prog, replay);
    REQUIRE(again.verdict == Verdict::completed);
    REQUIRE(again.schedule == out.schedule);
    REQUIRE(replay.finished());
    distinct.insert(out.schedule);
  }
  CHECK(distinct.size() == 1000);  // the seeds really explore different schedules
}

TEST_CASE("empty barriers initialised with 129 arrivals deadlock, with the precise cause", "[epi-load][deadlock]") {
  auto prog = make_protocol("epi-load", {{"mutation", "consumer-count-plus-one"}});
  Runtime rt;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Outcome out = run_seed(*prog, rt, seed);
    INFO("seed " << seed);
    REQUIRE(out.verdict == Verdict::deadlock);
    // The producer warp is stuck on an empty barrier one arrival short of completing.
    CHECK_THAT(out.message,
               Catch::Contains("thread 0 (warp 0 lane 0) wait empty[") && Catch::Contains("pending 1/129, tx 0"));
    // The store warps wait for a fill that never comes.
    bool consumers_named = false;
    for (const auto& d : out.details) consumers_named |= d.rfind("threads 32-159 (warps 1-4) wait full[", 0) == 0;
    CHECK(consumers_named);
  }
}

TEST_CASE("shape variants stay correct", "[epi-load]") {
  using Opts = std::map<std::string, std::string>;
  auto opts = GENERATE(
      Opts{{"stages", "1"}, {"tiles", "5"}}, Opts{{"stages", "3"}, {"tiles", "7"}, {"last-tile-elems", "36"}},
      Opts{{"ctas", "3"}, {"tiles", "10"}, {"threads-per-warp", "8"}}, Opts{{"copy-pieces", "4"}, {"tiles", "6"}},
      Opts{{"store-warps", "2"}, {"threads-per-warp", "4"}, {"tile-elems", "64"}, {"stages", "8"}},
      Opts{{"beta", "-1.75"}, {"tiles", "3"}});
  auto prog = make_protocol("epi-load", opts);
  Runtime rt;
  for (std::uint64_t seed = 0; seed < 25; ++seed) {
    Outcome out = run_seed(*prog, rt, seed);
    INFO("seed " << seed << ": " << out.message);
    REQUIRE(out.verdict == Verdict::completed);
  }
}

TEST_CASE("impossible shapes are rejected with a specific message", "[epi-load][usage]") {
  using Opts = std::map<std::string, std::string>;
  auto rejects = [](Opts o, const std::string& why) {
    INFO(why);
    CHECK_THROWS_WITH(make_protocol("epi-load", o), Catch::Contains(why));
  };
  rejects({{"stages", "0"}}, "--stages 0: must be in [1, 8]");
  rejects({{"store-warps", "32"}, {"threads-per-warp", "32"}}, "a CTA has at most 1024 threads");
  rejects({{"tile-elems", "300000"}}, "exceeds the mbarrier tx-count limit 2^20-1");
  rejects({{"tile-elems", "30"}}, "multiple of 4 floats");
  rejects({{"tiles", "abc"}}, "--tiles abc: not a whole number");
  rejects({{"beta", "nan"}}, "not a finite number");
  rejects({{"mutation", "bogus"}}, "must be one of none, consumer-count-plus-one");
  rejects({{"colour", "red"}}, "epi-load has no option --colour");
  rejects({{"stages", "8"}, {"tile-elems", "8192"}}, "sm_90 allows 227 KiB per CTA");
  CHECK_THROWS_WITH(make_protocol("nope", {}), Catch::Contains("unknown protocol 'nope'"));
}
