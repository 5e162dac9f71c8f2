// Empty work: every bundled protocol with a tile or iteration count, checked exhaustively with
// shapes where a CTA, a cluster or a role has nothing to do (no tile at all, fewer tiles than
// CTAs or clusters, a warp group with no tile, a producer with no k-block). Many real pipeline
// bugs need such a shape: a wait that nobody will ever satisfy, an output nobody writes.
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "sim/protocols/protocols.hpp"
#include "spec/kernels/cluster_gemm.hpp"

using namespace mbcheck::sim;

namespace {
using Options = std::map<std::string, std::string>;

CheckResult check_bundled(const std::string& protocol, const Options& options) {
  auto prog = make_protocol(protocol, options);
  return check_program(*prog, CheckOptions{});
}
}  // namespace

TEST_CASE("every bundled protocol verifies with zero work, in every schedule", "[empty-work][explore][dpor]") {
  // protocol, shape, what has no work; each is one class of interleavings: the idle threads'
  // steps commute with everything.
  auto [protocol, options, idle] = GENERATE(table<std::string, Options, std::string>({
      {"epi-load", {{"tiles", "0"}}, "the only CTA"},
      {"epi-load", {{"tiles", "0"}, {"ctas", "2"}, {"threads-per-warp", "8"}}, "every CTA"},
      {"epi-load", {{"tiles", "2"}, {"ctas", "3"}, {"threads-per-warp", "8"}}, "CTA 2 (persistent grid)"},
      {"epi-load", {{"tiles", "1"}, {"ctas", "2"}, {"stages", "1"}, {"copy-pieces", "2"}}, "CTA 1, one stage"},
      {"epi-load", {{"tiles", "3"}, {"ctas", "4"}, {"last-tile-elems", "36"}}, "CTA 3, a ragged last tile"},
      {"tma-pipeline", {{"iterations", "0"}}, "producer and 128 consumers"},
      {"tma-pipeline",
       {{"iterations", "0"}, {"consumers", "2"}, {"consumer-wait", "try-then-wait"}},
       "producer and try-then-wait consumers"},
      {"pingpong", {{"tiles", "0"}}, "both warp groups and the producer"},
      {"pingpong", {{"tiles", "1"}}, "warp group 1"},
      {"pingpong", {{"tiles", "1"}, {"stages", "1"}, {"k-blocks", "3"}}, "warp group 1, one stage"},
      {"pingpong", {{"tiles", "3"}, {"k-blocks", "0"}}, "the producer; the groups still take turns"},
      {"pingpong", {{"tiles", "1"}, {"k-blocks", "0"}}, "the producer and warp group 1"},
      {"cluster-gemm", {{"tiles", "0"}}, "every CTA of the 2x1 cluster"},
      {"cluster-gemm", {{"tiles", "0"}, {"order", "named-barriers"}}, "every CTA, ordered"},
      {"cluster-gemm", {{"k-blocks", "0"}}, "the producers; the consumers still store"},
      {"cluster-gemm", {{"k-blocks", "0"}, {"order", "named-barriers"}}, "the producers, ordered"},
      {"cluster-gemm", {{"k-blocks", "0"}, {"cluster", "2x2"}, {"order", "named-barriers"}}, "the producers, 2x2"},
      {"cluster-gemm", {{"schedule", "persistent"}, {"clusters", "2"}, {"tiles", "1"}}, "cluster 1"},
      {"cluster-gemm",
       {{"schedule", "persistent"}, {"clusters", "3"}, {"tiles", "2"}, {"order", "named-barriers"}},
       "cluster 2, ordered"},
      {"cluster-gemm",
       {{"schedule", "persistent"}, {"clusters", "2"}, {"tiles", "1"}, {"cluster", "1x2"}},
       "cluster 1 of 1x2 clusters"},
      {"cluster-gemm", {{"schedule", "persistent"}, {"clusters", "2"}, {"tiles", "0"}}, "both clusters"},
      {"tma-store", {{"rounds", "0"}}, "every thread"},
  }));
  INFO(protocol << " " << Catch::Detail::stringify(options) << ": no work for " << idle);
  const CheckResult r = check_bundled(protocol, options);
  INFO((r.counterexample ? r.counterexample->cause : std::string("no counterexample")));
  CHECK(r.verdict == CheckVerdict::verified);
  CHECK(r.stats.complete);
  CHECK(r.stats.executions == 1);
}

TEST_CASE("the ordered cluster-gemm stores a tile with no k-block as zeros", "[empty-work][explore][cluster-gemm]") {
  // Group 1 writes a tile's result in its turn on the last k-block; with none, no turn comes
  // and it must store the empty sum itself (FlashAttention-3's store_zero), or the output
  // keeps whatever was there.
  const std::string cluster = GENERATE("2x1", "1x2", "2x2");
  const CheckResult r = check_bundled(
      "cluster-gemm", {{"cluster", cluster}, {"k-blocks", "0"}, {"tiles", "3"}, {"order", "named-barriers"}});
  INFO(cluster << (r.counterexample ? ": " + r.counterexample->cause : ""));
  CHECK(r.verdict == CheckVerdict::verified);
}

TEST_CASE("a mutation that only bites on empty work is caught on it", "[empty-work][explore][dpor][zoo]") {
  // Each is right whenever there is work (its protocol refuses shapes with work for it): the
  // idle side waits for a fill or a turn that never comes.
  auto [protocol, options, blocked] = GENERATE(table<std::string, Options, std::string>({
      // the store warps' tile loop is a do-while: CTA 2 of 3 (2 tiles) takes a stage anyway
      {"epi-load",
       {{"mutation", "consumer-do-while"}, {"tiles", "2"}, {"ctas", "3"}, {"threads-per-warp", "8"}},
       "cta 2 threads 8-39 (warps 1-4) wait cta2.full[0] for phase 0 (parity 0)"},
      {"epi-load",
       {{"mutation", "consumer-do-while"}, {"tiles", "0"}},
       "threads 32-159 (warps 1-4) wait full[0] for phase 0 (parity 0)"},
      // the consumers peel their first iteration: no tile, no fill
      {"tma-pipeline",
       {{"mutation", "consumer-peeled-first"}, {"iterations", "0"}},
       "threads 1-128 (warps 0-4) wait full[0] for phase 0 (parity 0)"},
      // warp group 1 has no tile and returns before handing group 0 its first turn
      {"pingpong",
       {{"mutation", "idle-group-returns"}, {"tiles", "1"}},
       "threads 32-159 (warps 1-4) bar.sync barrier 1 (256 threads): wait for generation 0"},
      // the consumers peel a tile's first k-block: the producers bring none
      {"cluster-gemm",
       {{"mutation", "peeled-first-k-block"}, {"k-blocks", "0"}},
       "cta 0 (rank 0 of 2x1) threads 128-383 (warps 4-11) wait cta0.full[0] for phase 0 (parity 0)"},
      {"cluster-gemm",
       {{"mutation", "peeled-first-k-block"},
        {"k-blocks", "0"},
        {"schedule", "persistent"},
        {"clusters", "2"},
        {"tiles", "1"},
        {"order", "named-barriers"}},
       "cta 0 (rank 0 of 2x1) threads 128-383 (warps 4-11) wait cta0.full[0] for phase 0 (parity 0)"},
  }));
  INFO(protocol << " " << Catch::Detail::stringify(options));
  const CheckResult r = check_bundled(protocol, options);
  REQUIRE(r.verdict == CheckVerdict::bug);
  CHECK(r.counterexample->kind == Verdict::deadlock);
  bool named = false;
  for (const auto& d : r.counterexample->details) named |= d.rfind(blocked, 0) == 0;
  INFO(Catch::Detail::stringify(r.counterexample->details));
  CHECK(named);
}

TEST_CASE("a persistent scheduler deals cluster tiles round-robin, and a cluster may get none", "[empty-work]") {
  mbcheck::ClusterGemmParams p;
  p.persistent = true;
  auto dealt = [&](std::uint32_t tiles, std::uint32_t clusters) {
    p.tiles = tiles;
    std::vector<std::uint32_t> out;
    for (std::uint32_t c = 0; c < clusters; ++c) out.push_back(mbcheck::cluster_gemm_tiles(p, c, clusters));
    return out;
  };
  CHECK(dealt(5, 2) == std::vector<std::uint32_t>{3, 2});
  CHECK(dealt(4, 2) == std::vector<std::uint32_t>{2, 2});
  CHECK(dealt(1, 2) == std::vector<std::uint32_t>{1, 0});
  CHECK(dealt(2, 3) == std::vector<std::uint32_t>{1, 1, 0});
  CHECK(dealt(0, 2) == std::vector<std::uint32_t>{0, 0});
  p.persistent = false;  // per CTA: every cluster computes --tiles
  CHECK(dealt(2, 3) == std::vector<std::uint32_t>{2, 2, 2});
}

TEST_CASE("zero-work shapes and their mutations are refused where they make no sense", "[empty-work][usage]") {
  auto rejects = [](const std::string& protocol, const Options& o, const std::string& why) {
    INFO(protocol << " " << Catch::Detail::stringify(o));
    CHECK_THROWS_WITH(make_protocol(protocol, o), Catch::Contains(why));
  };
  rejects("epi-load", {{"tiles", "0"}, {"last-tile-elems", "8"}}, "--last-tile-elems 8: --tiles 0 has no last tile");
  rejects("epi-load", {{"mutation", "consumer-do-while"}, {"tiles", "2"}, {"ctas", "2"}},
          "it needs fewer --tiles than --ctas 2");
  rejects("tma-pipeline", {{"mutation", "consumer-peeled-first"}}, "it needs --iterations 0");
  rejects("pingpong", {{"mutation", "idle-group-returns"}}, "it needs --tiles 1");
  rejects("pingpong", {{"mutation", "idle-group-returns"}, {"tiles", "0"}}, "it needs --tiles 1");
  rejects("cluster-gemm", {{"mutation", "peeled-first-k-block"}}, "it needs --k-blocks 0 and a tile");
  rejects("cluster-gemm", {{"mutation", "peeled-first-k-block"}, {"k-blocks", "0"}, {"tiles", "0"}},
          "it needs --k-blocks 0 and a tile");
  // cluster 0 of 2 gets one of the 2 tiles: 2 blocks, never a refill of 2 stages
  rejects("cluster-gemm", {{"mutation", "local-release-only"}, {"schedule", "persistent"}, {"clusters", "2"}},
          "it needs more than --stages 2 blocks");
  rejects("cluster-gemm", {{"schedule", "dynamic"}}, "--schedule dynamic: must be one of per-cta, persistent");
  rejects("cluster-gemm", {{"tiles", "-1"}}, "--tiles -1: not a whole number");
}
