// The Platform contract's conformance tests (spec/conformance/) on the host: for each test,
// every schedule is explored (DPOR, to the end rather than the first bug) with warp size 32 and
// the test's launch shape; every execution must complete without a bug and with the outcome
// the test's expected() defines (its check_result). device/test_conformance.cu runs the same
// tests on the GPU.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "spec/conformance/all.hpp"

using namespace mbcheck::sim;
using mbcheck::conformance::kGmemBytes;
using mbcheck::conformance::kWhyBytes;
namespace conf = mbcheck::conformance;

namespace {

template <class Test>
class ConformanceProgram : public Program {
 public:
  LaunchShape shape() const override {
    LaunchShape s;
    s.ctas = Test::kCtas;
    s.threads_per_cta = Test::kThreads;
    s.warp_size = 32;
    s.smem_bytes = Test::kSmemBytes;
    s.cluster_x = Test::kClusterX;
    return s;
  }
  void reset() override {
    gmem_.fill(0);
    out_.fill(0);
  }
  void thread_main() override {
    const conf::Env<HostPlatform> env{HostPlatform::shared_memory(), gmem_.data(), out_.data()};
    Test::run(env);
  }
  std::optional<std::string> check_result() override {
    char why[kWhyBytes] = {};
    if (Test::expected(out_.data(), why)) return std::nullopt;
    return std::string(Test::kName) + ": not the defined outcome: " + why;
  }

 private:
  alignas(16) std::array<unsigned char, kGmemBytes> gmem_{};
  std::array<std::int32_t, Test::kResults> out_{};
};

// The names of the tests that have a TEST_CASE below (every one of AllTests must).
std::set<std::string>& covered() {
  static std::set<std::string> names;
  return names;
}

template <class Test>
void check_conformance() {
  ConformanceProgram<Test> prog;
  ExploreOptions options;
  options.stop_at_first_bug = false;
  std::uint64_t executions = 0, wrong = 0;
  std::string first;
  const ExploreResult r = explore(prog, options, [&](const Outcome& o) {
    ++executions;
    if (o.verdict == Verdict::completed) return;
    ++wrong;
    if (first.empty()) first = std::string(to_string(o.verdict)) + ": " + o.message;
  });
  INFO(Test::kName << ": " << r.stats.executions << " executions explored, " << wrong << " not the defined outcome"
                   << (first.empty() ? std::string() : "; the first: " + first));
  CHECK_FALSE(r.bug);
  CHECK(wrong == 0);
  CHECK(r.stats.complete);  // with no bug: the verdict `verified`
  CHECK(executions >= 1);
}

template <class Test>
bool register_case() {
  covered().insert(Test::kName);
  return true;
}

#define MBCHECK_CONFORMANCE_CASE(T)                                                              \
  [[maybe_unused]] const bool registered_##T = register_case<conf::T>();                         \
  TEST_CASE("conformance: " #T " (every schedule gives the defined outcome)", "[conformance]") { \
    check_conformance<conf::T>();                                                                \
  }

}  // namespace

MBCHECK_CONFORMANCE_CASE(ShflIdx)
MBCHECK_CONFORMANCE_CASE(ElectSync)
MBCHECK_CONFORMANCE_CASE(ExitedLanes)
MBCHECK_CONFORMANCE_CASE(BulkStoreWaitGroup)
MBCHECK_CONFORMANCE_CASE(CpAsyncWaitGroup)
MBCHECK_CONFORMANCE_CASE(BarRedThenSync)
MBCHECK_CONFORMANCE_CASE(WaitOnToken)
MBCHECK_CONFORMANCE_CASE(ProxyFenceGlobal)
MBCHECK_CONFORMANCE_CASE(ProxyFenceAll)
MBCHECK_CONFORMANCE_CASE(ProxyFenceReaderBeforeRelease)
MBCHECK_CONFORMANCE_CASE(ProxyFenceIssuerAfterAcquire)
MBCHECK_CONFORMANCE_CASE(ClusterPublication)

namespace {
template <class... Tests>
std::vector<std::string> names_of(conf::TestList<Tests...>) {
  return {Tests::kName...};
}
}  // namespace

TEST_CASE("conformance: every test of spec/conformance/all.hpp has a host case", "[conformance]") {
  for (const std::string& name : names_of(conf::AllTests{})) {
    INFO(name);
    CHECK(covered().count(name) == 1);
  }
}

namespace {
// A recorded test that races under PTX's reading (the wrong fence's state space, the wrong
// acquire scope): the host must report the race in its first execution, whatever the GPU
// happened to show (device/RESULTS.md records that).
template <class Test>
void check_race_reported() {
  ConformanceProgram<Test> prog;
  ExploreOptions options;  // stop at the first bug
  const ExploreResult r = explore(prog, options, [](const Outcome&) {});
  INFO(Test::kName << ": " << r.stats.executions << " executions");
  REQUIRE(r.bug);
  INFO(r.bug->message);
  CHECK(r.bug->verdict == Verdict::race);
}
}  // namespace

TEST_CASE("conformance (recorded): a TMA load of global memory after only fence.proxy.async.shared::cta races",
          "[conformance]") {
  check_race_reported<conf::ProxyFenceSharedOnlyThenTmaGlobal>();
}

TEST_CASE("conformance (recorded): generic reads of a stage, its release and a TMA refill with no proxy fence race",
          "[conformance]") {
  check_race_reported<conf::ProxyFenceReadUnfenced>();
}

TEST_CASE("conformance (recorded): a .acquire.cta wait does not acquire a peer CTA's .release.cluster arrive",
          "[conformance]") {
  check_race_reported<conf::CtaAcquireOfPeerRelease>();
}

namespace {
// The same program in the mode where a .cta wait acquires peers' releases (what the H100 did).
template <class Test>
struct PeersAcquired : ConformanceProgram<Test> {
  LaunchShape shape() const override {
    LaunchShape s = ConformanceProgram<Test>::shape();
    s.cta_waits_acquire_peers = true;
    return s;
  }
};
}  // namespace

TEST_CASE("a .acquire.cta wait acquires a peer CTA's .release.cluster arrive when the launch says so",
          "[conformance]") {
  PeersAcquired<conf::CtaAcquireOfPeerRelease> prog;
  ExploreOptions options;
  const ExploreResult r = explore(prog, options, [](const Outcome&) {});
  INFO((r.bug ? r.bug->message : std::string("no bug")));
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}
