#include "tests/differential/fuzz_compare.hpp"

#include <fmt/format.h>

#include "sim/explore/explore.hpp"
#include "sim/explore/strategy.hpp"
#include "sim/fuzz.hpp"
#include "tests/differential/compare.hpp"
#include "tests/differential/runtime_program.hpp"

namespace mbcheck::diff {

FuzzComparison fuzz_compare(const DiffProgram& p, const ReferenceResult& reference, std::uint64_t random_runs,
                            std::uint64_t pct_runs, std::uint64_t seed) {
  FuzzComparison f;
  RuntimeProgram prog(p);
  if (reference.bug) {
    sim::ExploreOptions o;
    o.preemption_bound = 0;
    o.max_executions = 20000;
    f.depth1 = sim::explore(prog, o).bug.has_value();
  }
  sim::Runtime rt;
  sim::RunLimits limits;
  limits.max_steps = 100000;
  std::uint64_t steps_estimate = 1;
  auto judge = [&](const sim::Outcome& out, const char* strategy, std::uint64_t i) {
    ++f.runs;
    steps_estimate = std::max<std::uint64_t>(steps_estimate, out.steps);
    std::string wrong;
    if (out.verdict == sim::Verdict::step_limit) {
      ++f.step_limited;  // proves nothing either way (as in sim::fuzz)
    } else if (sim::is_bug(out.verdict)) {
      ++f.bug_runs;
      f.found = true;
      if (!reference.bug_kinds.count(bug_kind(out))) {
        ++f.false_alarms;
        wrong = fmt::format("{} run {} reports {} ({}), which the reference does not find", strategy, i, bug_kind(out),
                            out.message);
      }
    } else if (out.verdict == sim::Verdict::completed) {
      const std::string o = format_observed(prog.observed());
      if (!reference.outcomes.count(o)) {
        ++f.unknown_outcomes;
        wrong = fmt::format("{} run {} completes with {}, which the reference never reaches", strategy, i, o);
      }
    } else {
      ++f.false_alarms;
      wrong = fmt::format("{} run {} ends {}: {}", strategy, i, sim::to_string(out.verdict), out.message);
    }
    if (!wrong.empty() && f.why.empty()) f.why = wrong;
  };
  for (std::uint64_t i = 0; i < random_runs; ++i) {
    sim::RandomStrategy s(sim::run_seed(seed, i));
    const sim::Outcome out = rt.execute(prog, s, limits);
    judge(out, "random", i);
    if (f.found && !f.first_random_bug) f.first_random_bug = i + 1;
  }
  for (std::uint64_t i = 0; i < pct_runs; ++i) {
    sim::PctStrategy s(sim::run_seed(seed, i), 2, steps_estimate);
    judge(rt.execute(prog, s, limits), "pct", i);
  }
  if (f.depth1 && !f.found) {
    // In turn PCT of depth 1, PCT of depth 2 and a random walk (fuzz_compare.hpp says why).
    const std::uint64_t budget = f.runs;
    for (std::uint64_t i = 0; i < kLateRuns && !f.found; ++i) {
      const std::uint64_t run_seed = sim::run_seed(seed, budget + i);
      if (i % 3 == 2) {
        sim::RandomStrategy s(run_seed);
        judge(rt.execute(prog, s, limits), "late random", budget + i);
      } else {
        sim::PctStrategy s(run_seed, i % 3 == 0 ? 1 : 2, steps_estimate);
        judge(rt.execute(prog, s, limits), i % 3 == 0 ? "late pct depth 1" : "late pct depth 2", budget + i);
      }
      if (f.found) f.late_runs = i + 1;
    }
  }
  return f;
}

}  // namespace mbcheck::diff
