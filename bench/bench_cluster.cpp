// The bundled cluster-gemm protocol at full size (2 consumer warp groups of 128 per CTA):
// exhaustive checks of the correct shapes (executions, seconds), then every mutation: the
// verdict DPOR finds first, and the median (and worst) runs to the first bug of a random walk
// and of PCT over 15 base seeds. docs/validation.md's cluster-gemm table comes from here.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "sim/explore/explore.hpp"
#include "sim/fuzz.hpp"
#include "sim/protocols/protocols.hpp"

using namespace mbcheck::sim;

namespace {
using Options = std::map<std::string, std::string>;

std::unique_ptr<Program> make(const Options& o) { return std::unique_ptr<Program>(make_protocol("cluster-gemm", o)); }

std::string describe(const Options& o) {
  std::string s;
  for (const auto& [k, v] : o) s += fmt::format("{}--{} {}", s.empty() ? "" : " ", k, v);
  return s;
}
}  // namespace

int main() {
  fmt::print(
      "cluster-gemm, exhaustive (dpor, 1 job): 384 threads per CTA\n\n| shape | verdict | executions | seconds |\n"
      "| --- | --- | --- | --- |\n");
  const std::vector<Options> shapes{
      {{"cluster", "2x1"}},
      {{"cluster", "2x1"}, {"order", "named-barriers"}},
      {{"cluster", "2x1"}, {"stages", "4"}, {"tiles", "4"}, {"k-blocks", "4"}},
      {{"cluster", "2x2"}},
      {{"cluster", "2x2"}, {"order", "named-barriers"}, {"stages", "3"}, {"tiles", "3"}, {"k-blocks", "3"}},
  };
  for (const Options& o : shapes) {
    auto program = make(o);
    ExploreOptions eo;
    const auto start = std::chrono::steady_clock::now();
    const ExploreResult r = explore(*program, eo);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("| {} | {} | {} | {:.2f} |\n", describe(o),
               r.bug ? to_string(r.bug->verdict) : (r.stats.complete ? "verified" : "incomplete"), r.stats.executions,
               s);
  }

  const std::uint64_t max_runs = 200;
  fmt::print(
      "\nmutations at 2x1 (named-barrier ones with --order named-barriers): DPOR's first verdict, and median "
      "(worst) runs to the first bug over 15 base seeds, at most {} runs\n\n"
      "| mutation | dpor | random walk | PCT d=1 | PCT d=3 |\n| --- | --- | --- | --- | --- |\n",
      max_runs);
  const ProtocolInfo* info = nullptr;
  for (const auto& p : bundled_protocols())
    if (p.name == "cluster-gemm") info = &p;
  for (const std::string& mutation : info->mutations) {
    Options o{{"cluster", "2x1"}, {"mutation", mutation}};
    if (mutation == "order-count-mismatch" || mutation == "double-arrive" || mutation == "no-order")
      o["order"] = "named-barriers";
    if (mutation == "local-release-only") o["tiles"] = "2";
    if (mutation == "peeled-first-k-block") o["k-blocks"] = "0";  // bites only on a tile with no k-block
    auto program = make(o);
    const ExploreResult r = explore(*program, ExploreOptions{});
    fmt::memory_buffer row;
    fmt::format_to(std::back_inserter(row), "| {} | {} |", mutation, r.bug ? to_string(r.bug->verdict) : "none");
    for (auto [kind, depth] :
         {std::pair{FuzzKind::random, 1}, std::pair{FuzzKind::pct, 1}, std::pair{FuzzKind::pct, 3}}) {
      std::vector<std::uint64_t> runs;
      for (std::uint64_t seed = 1; seed <= 15; ++seed) {
        FuzzOptions fo;
        fo.kind = kind;
        fo.depth = depth;
        fo.runs = max_runs;
        fo.seed = seed;
        fo.jobs = 1;
        fo.shrink = false;
        const FuzzResult f = fuzz([&] { return make(o); }, fo);
        runs.push_back(f.bug_run ? *f.bug_run + 1 : max_runs + 1);
      }
      std::sort(runs.begin(), runs.end());
      auto show = [&](std::uint64_t n) { return n > max_runs ? fmt::format(">{}", max_runs) : std::to_string(n); };
      fmt::format_to(std::back_inserter(row), " {} ({}) |", show(runs[runs.size() / 2]), show(runs.back()));
    }
    fmt::print("{}\n", fmt::to_string(row));
  }
  return 0;
}
