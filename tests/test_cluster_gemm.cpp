// The bundled cluster-gemm protocol: a CUTLASS-style multicast mainloop over thread block
// clusters, verified at full size (two consumer warp groups of 128 threads per CTA), and every
// mutation found at full size with its kind.
#include <catch2/catch.hpp>

#include "sim/explore/explore.hpp"
#include "sim/fuzz.hpp"
#include "sim/protocols/protocols.hpp"

using namespace mbcheck::sim;

TEST_CASE("cluster-gemm verifies exhaustively at full size in one execution", "[explore][dpor][size][cluster-gemm]") {
  using Options = std::map<std::string, std::string>;
  const Options shape = GENERATE(Options{{"cluster", "2x1"}}, Options{{"cluster", "2x1"}, {"order", "named-barriers"}},
                                 Options{{"cluster", "1x2"}}, Options{{"cluster", "2x2"}, {"stages", "3"}},
                                 Options{{"cluster", "2x2"}, {"order", "named-barriers"}});
  INFO(shape.at("cluster"));
  auto prog = make_protocol("cluster-gemm", shape);
  CHECK(prog->shape().threads_per_cta == 384);
  const ExploreResult r = explore(*prog, ExploreOptions{});
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
  // Multicast landings, remote releases and the cluster barrier of different CTAs commute.
  CHECK(r.stats.executions == 1);
}

TEST_CASE("cluster-gemm's mutations are found at full size, with their kinds", "[explore][dpor][zoo][cluster-gemm]") {
  auto [mutation, cluster, kind, misuse] =
      GENERATE(table<std::string, std::string, Verdict, std::optional<MisuseKind>>({
          {"no-producer-tail", "2x1", Verdict::lifetime, std::nullopt},
          {"no-producer-tail", "2x2", Verdict::lifetime, std::nullopt},
          {"local-release-only", "2x1", Verdict::race, std::nullopt},
          {"local-release-only", "2x2", Verdict::race, std::nullopt},
          // the empty phase completes on the CTA's own releases: the producer refills early and
          // arrives on a full barrier whose phase is still open
          {"unscaled-empty-count", "2x1", Verdict::misuse, MisuseKind::over_arrival},
          {"no-init-fence", "2x1", Verdict::misuse, MisuseKind::unfenced_init},
          {"no-init-fence", "2x2", Verdict::misuse, MisuseKind::unfenced_init},
          {"no-cluster-sync", "2x1", Verdict::misuse, MisuseKind::unfenced_init},
          {"wrong-multicast-mask", "2x1", Verdict::deadlock, std::nullopt},
          {"skip-remote-arrivals", "2x1", Verdict::deadlock, std::nullopt},
          {"skip-remote-arrivals", "2x2", Verdict::deadlock, std::nullopt},
      }));
  INFO(mutation << " at " << cluster);
  auto prog = make_protocol("cluster-gemm", {{"cluster", cluster}, {"mutation", mutation}});
  const ExploreResult r = explore(*prog, ExploreOptions{});
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == kind);
  CHECK(r.bug->misuse == misuse);
}

TEST_CASE("cluster-gemm's named-barrier mutations are found with the order on", "[explore][dpor][zoo][cluster-gemm]") {
  auto [mutation, kind, misuse] = GENERATE(table<std::string, Verdict, std::optional<MisuseKind>>({
      {"order-count-mismatch", Verdict::misuse, MisuseKind::named_barrier},
      // group 0 takes its next turn on the surplus arrival: the schedule DPOR tries first
      // then strands the order barriers' generations (a deadlock); others race on the tile
      {"double-arrive", Verdict::deadlock, std::nullopt},
      {"no-order", Verdict::race, std::nullopt},
  }));
  INFO(mutation);
  auto prog = make_protocol("cluster-gemm", {{"order", "named-barriers"}, {"mutation", mutation}});
  const ExploreResult r = explore(*prog, ExploreOptions{});
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == kind);
  CHECK(r.bug->misuse == misuse);
}

TEST_CASE("PCT finds cluster-gemm's schedule-dependent bugs in its first runs", "[fuzz][cluster-gemm]") {
  const std::string mutation = GENERATE("local-release-only", "no-producer-tail");
  FuzzOptions o;
  o.kind = FuzzKind::pct;
  o.depth = 3;
  o.runs = 10;
  o.seed = 7;
  o.shrink = false;
  const FuzzResult r = fuzz(
      [&] {
        return std::unique_ptr<Program>(make_protocol("cluster-gemm", {{"mutation", mutation}}));
      },
      o);
  REQUIRE(r.bug_run);
  CHECK(*r.bug_run < 10);
}

TEST_CASE("cluster-gemm refuses shapes it cannot run", "[cluster-gemm][input]") {
  CHECK_THROWS_WITH(make_protocol("cluster-gemm", {{"cluster", "3x6"}}), Catch::Contains("X*Y <= 16"));
  for (const char* bad : {"2x", "x2", "0x1", "2x1x1", "4294967298x1", " 2x1", "+2x1", "2X1", "2x-1", "17x1"})
    CHECK_THROWS_WITH(make_protocol("cluster-gemm", {{"cluster", bad}}), Catch::Contains("must be XxY"));
  CHECK_THROWS_WITH(make_protocol("cluster-gemm", {{"cluster", "2x2"}, {"a-elems", "4"}}),
                    Catch::Contains("--a-elems 4"));
  CHECK_THROWS_WITH(make_protocol("cluster-gemm", {{"mutation", "no-order"}}),
                    Catch::Contains("--order named-barriers"));
  CHECK_THROWS_WITH(make_protocol("cluster-gemm", {{"cluster", "1x1"}, {"mutation", "no-producer-tail"}}),
                    Catch::Contains("2 or more CTAs"));
}
