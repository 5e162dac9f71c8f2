// What an exhaustive search keeps: memory in proportion to the depth of one execution (its
// vector clocks are shared between steps, not one per step and agent), and a shape whose
// first execution is provably too deep for the memory budget refused before the search.
#include <catch2/catch.hpp>

#include <cstdio>

#include "sim/explore/explore.hpp"
#include "sim/protocols/protocols.hpp"

using namespace mbcheck::sim;

namespace {
std::uint64_t address_space_now() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * 4096;
}
}  // namespace

TEST_CASE("the search's vector clocks cost a few bytes per step, whatever the number of agents",
          "[explore][dpor][memory]") {
  using Options = std::map<std::string, std::string>;
  auto [protocol, shape] = GENERATE(table<std::string, Options>({
      {"epi-load", Options{{"tile-elems", "4"}, {"tiles", "64"}}},
      {"epi-load", Options{{"tile-elems", "4"}, {"tiles", "512"}}},
      {"cluster-gemm", Options{{"cluster", "2x2"}}},
      {"pingpong", Options{}},
      {"lastzero", Options{{"n", "6"}}},
  }));
  auto prog = make_protocol(protocol, shape);
  const ExploreResult r = explore(*prog, ExploreOptions{});
  REQUIRE_FALSE(r.bug);
  REQUIRE(r.stats.complete);
  const std::uint64_t agents = std::uint64_t{prog->shape().ctas} * prog->shape().threads_per_cta;
  INFO(protocol << ": " << agents << " threads, " << r.stats.deepest << " steps, " << r.stats.clock_bytes
                << " bytes of clocks");
  REQUIRE(r.stats.deepest > 0);
  // A clock per step would be at least agents / 32 chunk offsets plus one 128-byte chunk
  // (measured: about 3 bytes a step now, from 160 to 1,536 threads).
  CHECK(r.stats.clock_bytes <= 16 * r.stats.deepest + 4096);
  CHECK(r.stats.clock_bytes < r.stats.deepest * (agents / 32 * 4 + 128));
}

TEST_CASE("a shape whose first execution is too deep for the memory budget is refused before the search",
          "[explore][dpor][memory]") {
  auto prog = make_protocol("epi-load", {{"tile-elems", "4"}, {"tiles", "64"}});  // 16,804 steps
  ExploreOptions o;
  SECTION("a budget with room for about 1,200 steps of search state") {
    o.memory_budget = address_space_now() + 200 * 1024;
    try {
      (void)explore(*prog, o);
      FAIL("not refused");
    } catch (const SearchTooLarge& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Catch::Contains("too large to search exhaustively"));
      CHECK_THAT(what, Catch::Contains("--strategy pct or random"));
    }
  }
  SECTION("a budget with room for it: searched as without one") {
    o.memory_budget = address_space_now() + (std::uint64_t{1} << 30);
    const ExploreResult r = explore(*prog, o);
    CHECK_FALSE(r.bug);
    CHECK(r.stats.complete);
    CHECK(r.stats.executions == 1);
  }
  SECTION("a step limit within the budget: no preflight is needed, and the search's own limit applies") {
    // Room for about 2,400 steps (the whole execution would need 16,804): 1,000 fit with a margin
    // for the allocator's own mappings (ASan's map whole size-class regions: 200 KiB was too tight).
    o.memory_budget = address_space_now() + 400 * 1024;
    o.max_steps = 1000;
    const ExploreResult r = explore(*prog, o);
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::step_limit);
  }
}
