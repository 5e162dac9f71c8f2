// A protocol of your own, written once over the Platform P, checked from a Catch2 test.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "sim/host_platform.hpp"
#include "handoff.hpp"

using namespace mbcheck::sim;

CheckResult check_handoff(unsigned consumers_expected) {
  static int slot, sums[3];
  LaunchShape shape{.ctas = 1, .threads_per_cta = 3, .warp_size = 32, .smem_bytes = 64};
  return check(
      shape, [=] { handoff<HostPlatform>(&slot, sums, 3, consumers_expected); }, {}, [] { sums[1] = sums[2] = 0; },
      []() -> std::optional<std::string> {
        if (sums[1] != 3 || sums[2] != 3) return "a consumer missed a value";
        return std::nullopt;
      });
}

TEST_CASE("the handoff is free of deadlocks, races and barrier misuse") {
  CheckResult r = check_handoff(2);
  INFO(format_report(r));
  CHECK(r.verdict == CheckVerdict::verified);
}

TEST_CASE("expecting a third consumer deadlocks, and the counterexample says where") {
  CheckResult r = check_handoff(3);
  REQUIRE(r.verdict == CheckVerdict::bug);
  CHECK(r.counterexample->kind == Verdict::deadlock);
  CHECK_THAT(r.counterexample->cause, Catch::Contains("wait mbarrier@smem+0x"));
}
