// Fuzzing held to the reference: random-walk and PCT runs of a DiffProgram, each judged
// against the reference enumerator's result for that program.
//  - Every run that ends in a bug must end in a bug kind the reference finds for the program
//    (a kind it does not find is a false fuzz alarm), and every run that completes must leave
//    an outcome the reference reaches (else the runtime did something the hardware cannot).
//  - A program whose bug a schedule with no preemption reaches (depth 1: the exhaustive
//    search with --preemption-bound 0 finds it) must be found. The budget the caller gives
//    finds almost all of them; PCT's guarantee is per run (at least 1/n for n agents at depth
//    1), so a bug that needs one agent held back over a long window can slip through 40 + 40
//    runs by chance (about 1 program in 100,000: soak seed 85,381,005 is found by 2.6% of
//    depth-2 PCT runs and 0.1% of random ones). Such a program gets up to kLateRuns more
//    runs, in turn PCT of depth 1, PCT of depth 2 and random walks: missing it then is a
//    blind spot of the fuzzer, not chance. Depth 1 alone is not enough: PCT of depth 1 keeps
//    one priority order for the whole run, while a schedule without preemption may choose
//    differently at each point where a thread blocks or ends. Soak seed 85,899,936 needs T0
//    before T2 at one such point and T2 before T0 at a later one: 0 of 3,000 depth-1 PCT runs
//    reach it, 2.2% of depth-2 runs and 0.7% of random walks do.
// The runs use the strategies and per-run seeds of sim::fuzz (RandomStrategy / PctStrategy,
// run_seed(seed, i)), so a failing run is re-run alone with `check --fuzz ... --seed`.
#pragma once

#include <cstdint>
#include <string>

#include "tests/differential/diff_program.hpp"
#include "tests/differential/reference.hpp"

namespace mbcheck::diff {

struct FuzzComparison {
  std::uint64_t runs = 0, bug_runs = 0, step_limited = 0;
  std::uint64_t false_alarms = 0;      // runs with a bug kind the reference does not find
  std::uint64_t unknown_outcomes = 0;  // completed runs whose outcome the reference does not reach
  bool depth1 = false;                 // the reference finds a bug and a 0-preemption schedule reaches it
  bool found = false;                  // some random or PCT run found a bug
  std::uint64_t late_runs = 0;         // depth-1 bug missed by the budget: the extra runs it took (if found)
  std::uint64_t first_random_bug = 0;  // 1-based index of the first random run with a bug (0: none)
  std::string why;                     // the first false alarm or unknown outcome, described
};

// `random_runs` random walks and `pct_runs` PCT runs (depth 2), seeds run_seed(seed, i); then,
// for a depth-1 bug none of them found, up to kLateRuns more (PCT depth 1, PCT depth 2, random).
constexpr std::uint64_t kLateRuns = 2000;
FuzzComparison fuzz_compare(const DiffProgram& p, const ReferenceResult& reference, std::uint64_t random_runs,
                            std::uint64_t pct_runs, std::uint64_t seed);

}  // namespace mbcheck::diff
