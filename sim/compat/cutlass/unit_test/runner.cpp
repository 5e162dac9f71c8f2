// The runner of CUTLASS's unit tests on the host (in place of GoogleTest's main): runs the
// registered TEST cases whose names match the filter; every kernel a case launches is checked
// by mbcheck (launch.hpp), and a case passes when its expectations hold and every launch
// verified. With --fault, a case passes instead when a launch of it was caught with the
// expected verdict (--expect) in the search's first execution: a mutation test. --expect alone
// says the test itself has that bug (every case must be caught with it).
//
//   cutlass_pipeline_tma_async --gtest_filter='*Cluster2x2*' --iterations=1,2,3
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fnmatch.h>
#include <string>
#include <string_view>
#include <vector>

#include "common/cutlass_unit_test.h"
#include "mbcheck/cutlass_host/faults.hpp"
#include "mbcheck/cutlass_host/launch.hpp"

namespace mbcheck::cutlass_unit {

namespace {

struct Case {
  std::string name;
  CaseBody body;
};
std::vector<Case>& cases() {
  static std::vector<Case> c;
  return c;
}
std::vector<std::string> g_failures;
std::vector<int> g_iterations{1, 2, 3};
std::size_t g_next_iteration = 0;

bool matches(const std::string& filter, const std::string& name) {
  std::size_t start = 0;
  while (start <= filter.size()) {
    const std::size_t end = std::min(filter.find(':', start), filter.size());
    if (fnmatch(filter.substr(start, end - start).c_str(), name.c_str(), 0) == 0) return true;
    start = end + 1;
  }
  return false;
}

struct Options {
  std::string filter = "*";
  bool list = false;
  std::string expect;  // with --fault: the verdict kind each case's launches must be caught with
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "error: %s\nusage: %s [--gtest_filter=PATTERN[:PATTERN...]] [--list] [--mode=check|run]\n"
               "  [--iterations=N,N,...] [--max-executions=N] [--time-limit=SECONDS]\n"
               "  [--wgmma-convergence=warp|warpgroup]\n"
               "  [--expect=VERDICT] [--fault=NAME]   (faults: %s)\n",
               what.c_str(), "runner", cutlass_host::fault_names().c_str());
  std::exit(2);
}

unsigned long long whole(std::string_view flag, const std::string& v) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || v[0] == '-') usage_error(fmt::format("{}{}: not a whole number", flag, v));
  return n;
}

Options parse(int argc, char** argv) {
  Options o;
  auto& policy = cutlass_host::launch_policy();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string_view flag) -> std::optional<std::string> {
      if (a.rfind(flag, 0) != 0) return std::nullopt;
      return a.substr(flag.size());
    };
    if (auto v = value("--gtest_filter="))
      o.filter = *v;
    else if (a == "--list" || a == "--gtest_list_tests")
      o.list = true;
    else if (auto v = value("--mode=")) {
      if (*v == "check")
        policy.mode = cutlass_host::LaunchMode::check;
      else if (*v == "run")
        policy.mode = cutlass_host::LaunchMode::run;
      else
        usage_error("--mode=" + *v + ": must be check or run");
    } else if (auto v = value("--iterations=")) {
      g_iterations.clear();
      std::size_t start = 0;
      while (start <= v->size()) {
        const std::size_t end = std::min(v->find(',', start), v->size());
        const auto n = whole("--iterations=", v->substr(start, end - start));
        if (n < 1 || n > 1000) usage_error("--iterations: each count must be in [1, 1000] (testbed.h's range)");
        g_iterations.push_back(static_cast<int>(n));
        start = end + 1;
      }
    } else if (auto v = value("--max-executions="))
      policy.check.max_executions = whole("--max-executions=", *v);
    else if (auto v = value("--wgmma-convergence=")) {
      if (*v != "warp" && *v != "warpgroup") usage_error("--wgmma-convergence=" + *v + ": warp or warpgroup");
      policy.warpgroup_converges = *v == "warpgroup";
    } else if (auto v = value("--time-limit="))
      policy.check.time_limit_s = static_cast<double>(whole("--time-limit=", *v));
    else if (auto v = value("--fault=")) {
      auto f = cutlass_host::parse_fault(*v);
      if (!f) usage_error("--fault=" + *v + ": unknown fault");
      cutlass_host::set_fault(*f);
    } else if (auto v = value("--expect="))
      o.expect = *v;
    else
      usage_error("unknown argument " + a);
  }
  if (cutlass_host::active_fault() != cutlass_host::Fault::none && o.expect.empty())
    usage_error("--fault needs --expect (the verdict the fault must be caught with)");
  if (!o.expect.empty() && o.expect != "deadlock" && o.expect != "livelock" && o.expect != "race" &&
      o.expect != "misuse" && o.expect != "aliasing" && o.expect != "assertion" && o.expect != "lifetime")
    usage_error("--expect=" + o.expect +
                ": not a verdict (deadlock, livelock, race, misuse, aliasing, assertion, lifetime)");
  return o;
}

// A case's verdict from its launches: empty when it passed.
std::string judge(const std::vector<cutlass_host::LaunchRecord>& launches, const std::string& expect) {
  if (launches.empty()) return "it launched no kernel";
  if (!expect.empty()) {
    for (const auto& l : launches)
      if (l.bug_kind && expect == sim::to_string(*l.bug_kind) && l.bug_execution == 1) return "";
    return fmt::format("no launch was caught as {} in its first execution", expect);
  }
  for (const auto& l : launches)
    if (l.verdict != sim::CheckVerdict::verified)
      return fmt::format("launch {} was not verified ({})", l.shape, sim::to_string(l.verdict));
  return "";
}

}  // namespace

int register_case(const char* suite, const char* name, CaseBody body) {
  cases().push_back({std::string(suite) + "." + name, body});
  return 0;
}

void record_failure(const char* file, int line, const std::string& what) {
  g_failures.push_back(fmt::format("{}:{}: {}", file, line, what));
}

int next_random() {
  const int n = g_iterations[g_next_iteration++ % g_iterations.size()];
  return n - 1;  // testbed.h adds 1
}

}  // namespace mbcheck::cutlass_unit

int main(int argc, char** argv) {
  using namespace mbcheck::cutlass_unit;
  const Options o = parse(argc, argv);
  int ran = 0, failed = 0;
  for (const Case& c : cases()) {
    if (!matches(o.filter, c.name)) continue;
    if (o.list) {
      std::printf("%s\n", c.name.c_str());
      continue;
    }
    ++ran;
    std::printf("[ RUN      ] %s\n", c.name.c_str());
    std::fflush(stdout);
    g_failures.clear();
    g_next_iteration = 0;
    const auto t0 = std::chrono::steady_clock::now();
    c.body();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto launches = mbcheck::cutlass_host::take_launch_records();
    std::string why = judge(launches, o.expect);
    if (!g_failures.empty() && o.expect.empty()) why = g_failures.front();
    std::uint64_t most = 0;
    for (const auto& l : launches) most = std::max(most, l.executions);
    if (why.empty()) {
      std::printf("[       OK ] %s (%zu launches, at most %llu executions, %.2f s)\n", c.name.c_str(), launches.size(),
                  static_cast<unsigned long long>(most), s);
    } else {
      ++failed;
      std::printf("[  FAILED  ] %s: %s (%.2f s)\n", c.name.c_str(), why.c_str(), s);
    }
    std::fflush(stdout);
  }
  if (o.list) return 0;
  if (ran == 0) {
    std::fprintf(stderr, "error: no test matches --gtest_filter=%s\n", o.filter.c_str());
    return 2;
  }
  std::printf("%d of %d cases passed\n", ran - failed, ran);
  return failed == 0 ? 0 : 1;
}
