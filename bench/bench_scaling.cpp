// What a step of the exhaustive search costs as shapes grow (issue #20): per-step time from
// the full-size epi-load (160 threads) to cluster-gemm 4x2 (3,072 threads), and epi-load with
// thousands of tiles (a bulk-copy agent per tile: the agents' count grows with the steps).
// Every figure is measured in this run; the ratios compare runs of this process.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/check.hpp"
#include "sim/protocols/protocols.hpp"

using namespace mbcheck::sim;

namespace {
using Options = std::map<std::string, std::string>;

struct Run {
  CheckResult result;
  double ns_per_step = 0;
};

// The median of `runs` checks (after one more that warms the process's pools and stacks).
Run check(const std::string& protocol, const Options& o, int runs = 1) {
  auto prog = make_protocol(protocol, o);
  CheckOptions co;
  co.max_steps = std::numeric_limits<std::uint64_t>::max();  // 8,192 tiles take 2.1 million steps
  std::vector<Run> all;
  for (int i = 0; i < (runs > 1 ? runs + 1 : 1); ++i) all.push_back({check_program(*prog, co)});
  if (runs > 1) all.erase(all.begin());
  std::sort(all.begin(), all.end(),
            [](const Run& a, const Run& b) { return a.result.stats.seconds < b.result.stats.seconds; });
  Run r = all[all.size() / 2];
  r.ns_per_step =
      r.result.stats.seconds * 1e9 / static_cast<double>(std::max<std::uint64_t>(1, r.result.stats.transitions));
  return r;
}

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}
}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";  // skips the 8,192-tile run
  // Start-up (fibers, buffers) is paid once per check and grows with the threads; the per-step
  // figure is the marginal one: the same shape at two lengths, (t2 - t1) / (steps2 - steps1).
  fmt::print(
      "per-step time of the exhaustive search (1 job), by threads, medians of 5; marginal: two lengths of one "
      "shape\n\n");
  fmt::print(
      "| shape | threads | verdict | transitions | seconds | ns per transition | marginal ns per transition |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n");
  struct Shape {
    std::string protocol;
    Options options;
    std::string length;  // the option that is doubled
    unsigned threads;
  };
  const std::vector<Shape> shapes{
      {"epi-load", {{"stages", "4"}, {"tiles", "512"}}, "tiles", 160},
      {"cluster-gemm", {{"cluster", "2x1"}, {"tiles", "4"}}, "tiles", 768},
      {"cluster-gemm", {{"cluster", "2x2"}, {"tiles", "4"}}, "tiles", 1536},
      {"cluster-gemm", {{"cluster", "4x2"}, {"tiles", "4"}}, "tiles", 3072},
  };
  std::vector<double> marginal, plain;
  for (const Shape& s : shapes) {
    Options longer = s.options;
    longer[s.length] = std::to_string(2 * std::stoul(s.options.at(s.length)));
    const Run a = check(s.protocol, s.options, 5), b = check(s.protocol, longer, 5);
    const double m = (b.result.stats.seconds - a.result.stats.seconds) * 1e9 /
                     static_cast<double>(b.result.stats.transitions - a.result.stats.transitions);
    std::string flags;
    for (const auto& [k, v] : longer) flags += fmt::format(" --{} {}", k, v);
    fmt::print("| {}{} | {} | {} | {} | {:.3f} | {:.0f} | {:.0f} |\n", s.protocol, flags, s.threads,
               to_string(b.result.verdict), b.result.stats.transitions, b.result.stats.seconds, b.ns_per_step, m);
    marginal.push_back(m);
    plain.push_back(b.ns_per_step);
  }
  fmt::print(
      "\nper-step time at 3,072 threads / at 160 threads: marginal {:.2f}x, plain {:.2f}x (the target: within 2x)\n",
      marginal.back() / marginal.front(), plain.back() / plain.front());
  // epi-load's full tiles make its steps heavy (1,024-float tiles: memory accesses between
  // steps); cluster-gemm against itself is the same kind of step at 4x the threads.
  fmt::print("cluster-gemm 4x2 / 2x1 (4x the threads): marginal {:.2f}x, plain {:.2f}x\n\n", marginal[3] / marginal[1],
             plain[3] / plain[1]);

  fmt::print("epi-load --tile-elems 4 (a bulk-copy agent per tile), 1 job:\n\n");
  fmt::print(
      "| tiles | verdict | transitions | seconds | ns per transition | max resident set / transitions |\n"
      "| --- | --- | --- | --- | --- | --- |\n");
  std::vector<unsigned> tiles{512, 2048};
  if (!quick) tiles.push_back(8192);
  double first = 0;
  for (unsigned t : tiles) {
    const Run r = check("epi-load", {{"tile-elems", "4"}, {"tiles", std::to_string(t)}});
    if (first == 0) first = r.ns_per_step;
    // The largest run comes last, so the process's peak is its own.
    fmt::print("| {} | {} | {} | {:.2f} | {:.0f} | {:.0f} bytes |\n", t, to_string(r.result.verdict),
               r.result.stats.transitions, r.result.stats.seconds, r.ns_per_step,
               max_rss_kb() * 1024.0 / static_cast<double>(r.result.stats.transitions));
    if (t == tiles.back())
      fmt::print(
          "\nper-step time at {} tiles / at {} tiles: {:.2f}x{}\n", t, tiles.front(), r.ns_per_step / first,
          t == 8192 ? fmt::format("; 8,192 tiles in {:.1f} s (the target: under 10 s)", r.result.stats.seconds) : "");
  }
  return 0;
}
