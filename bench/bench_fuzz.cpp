// Median runs to the first bug for every bug-zoo mutation, uniform random walk vs PCT,
// over 15 base seeds, printed as a Markdown table (docs/validation.md's
// runs-to-the-first-bug table comes from here).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "sim/fuzz.hpp"
#include "sim/protocols/protocols.hpp"

using namespace mbcheck::sim;

int main(int argc, char** argv) {
  const std::string tiles = argc > 1 ? argv[1] : "8";
  const std::uint64_t max_runs = 2000;
  fmt::print(
      "epi-load, full size (1 load + 4 store warps of 32), {} tiles; median (and worst) runs to the first bug "
      "over 15 base seeds, at most {} runs\n\n",
      tiles, max_runs);
  fmt::print("| mutation | random walk | PCT d=1 | PCT d=3 |\n| --- | --- | --- | --- |\n");
  std::vector<std::string> rows = bundled_protocols().front().mutations;
  rows.push_back("ordering-bug");  // a depth-1 ordering bug: where PCT earns its keep
  for (const auto& mutation : rows) {
    static const std::string kEpiLoad = "epi-load", kOrderingBug = "ordering-bug";
    const std::string& protocol = mutation == kOrderingBug ? kOrderingBug : kEpiLoad;
    std::map<std::string, std::string> opts{{"tiles", tiles}, {"mutation", mutation}};
    if (mutation == "single-stage-wrong-parity") opts["stages"] = "1";
    if (mutation == "consumer-do-while") opts["tiles"] = "0";  // bites only in a CTA with no tile
    if (protocol == "ordering-bug") opts = {{"n", "20"}};
    fmt::memory_buffer row;
    fmt::format_to(std::back_inserter(row), "| {} |",
                   protocol == "epi-load" ? mutation : "ordering-bug --n 20 (not epi-load)");
    for (auto [kind, depth] :
         {std::pair{FuzzKind::random, 0}, std::pair{FuzzKind::pct, 1}, std::pair{FuzzKind::pct, 3}}) {
      std::vector<std::uint64_t> runs;
      for (std::uint64_t seed = 1; seed <= 15; ++seed) {
        FuzzOptions o;
        o.kind = kind;
        o.depth = std::max(depth, 1);
        o.runs = max_runs;
        o.seed = seed;
        o.jobs = 1;
        o.shrink = false;
        FuzzResult r = fuzz([&] { return std::unique_ptr<Program>(make_protocol(protocol, opts)); }, o);
        runs.push_back(r.bug_run ? *r.bug_run + 1 : max_runs + 1);
      }
      std::sort(runs.begin(), runs.end());
      auto show = [&](std::uint64_t n) { return n > max_runs ? fmt::format(">{}", max_runs) : std::to_string(n); };
      fmt::format_to(std::back_inserter(row), " {} ({}) |", show(runs[runs.size() / 2]), show(runs.back()));
    }
    fmt::print("{}\n", fmt::to_string(row));
  }

  // Speed-up of fuzzing with 2 jobs over 1, on a bug-free full-size shape, same runs.
  fmt::print("\nfuzzing speed-up (epi-load full size, 2 stages, 8 tiles, 600 random runs, no bug):\n");
  double one = 0;
  for (unsigned jobs : {1u, 2u}) {
    FuzzOptions o;
    o.runs = 600;
    o.jobs = jobs;
    FuzzResult r = fuzz([&] { return std::unique_ptr<Program>(make_protocol("epi-load", {{"tiles", "8"}})); }, o);
    if (jobs == 1) one = r.seconds;
    fmt::print("  --jobs {}: {} runs in {:.2f} s = {:.0f} runs/s{}\n", jobs, r.runs, r.seconds, r.runs / r.seconds,
               jobs == 1 ? "" : fmt::format(", speed-up {:.2f}x", one / r.seconds));
  }
  return 0;
}
