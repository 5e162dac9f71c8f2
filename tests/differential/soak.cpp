// mbcheck_soak: the reference enumerator against DPOR on many generated programs.
//   mbcheck_soak [--programs N] [--seed S] [--fuzz-runs R] [--show 1] [--slow MS] [--max-states M]
//                [--having STMT] [--pattern TEXT] [--merge-guarded-tries 1]
// --having: of the N programs generated, compare only those with statement STMT (as
// to_string(Stmt) names it, e.g. cpa_arrive): a soak of one statement's rules. --pattern: only
// those with a coverage feature whose name holds TEXT (e.g. "8 arriving lanes").
// --max-states: the reference's state limit per program (default 2,000,000); a program past it
// is counted apart ("beyond the reference's M states"), not compared: a few generated
// programs need minutes of reference exploration.
// Prints the coverage histogram, the totals and every disagreement (the program, what
// differs), shrunk to a minimal program: statements are removed one at a time while the
// disagreement stays. Then fuzzing against the same reference (tests/differential/
// fuzz_compare.hpp): R random and R PCT runs per program (default 40; 0: none), every bug
// they report held to the reference's kinds and every outcome to its outcomes, and each
// depth-1 bug (reachable without preemption) required within those 2R runs. Exit 1 on
// any disagreement, false fuzz alarm, unknown outcome or missed depth-1 bug.
// Programs of odd seed run on the race detector's chunked clocks (sim/runtime/race_clocks.hpp),
// those of even seed on its dense ones: the oracle holds both to the same verdicts.
#include <fmt/format.h>

#include "sim/runtime/guarded_tries.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

#include "sim/runtime/race_detector.hpp"
#include "tests/differential/compare.hpp"
#include "tests/differential/fuzz_compare.hpp"
#include "tests/differential/generator.hpp"

using namespace mbcheck::diff;

namespace {
DiffProgram shrink(DiffProgram p) {
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t t = 0; t < p.scripts.size(); ++t)
      for (std::size_t i = 0; i < p.scripts[t].size(); ++i) {
        DiffProgram q = p;
        q.scripts[t].erase(q.scripts[t].begin() + static_cast<std::ptrdiff_t>(i));
        if (!compare(q).agree) {
          p = std::move(q);
          progress = true;
          --i;
        }
      }
  }
  return p;
}
}  // namespace

int main(int argc, char** argv) {
  std::uint64_t programs = 1'000'000, seed = 1, fuzz_runs = 40, show = 0;
  double slow_ms = 0;                    // --slow MS: print the programs that take longer
  std::uint64_t max_states = 2'000'000;  // --max-states N: the reference's limit per program
  std::string having;                    // --having STMT
  std::string pattern;                   // --pattern TEXT
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--programs"))
      programs = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--seed"))
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--show"))  // every program with its verdicts
      show = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--fuzz-runs"))
      fuzz_runs = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--max-states"))
      max_states = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--having"))
      having = argv[i + 1];
    else if (!std::strcmp(argv[i], "--pattern"))
      pattern = argv[i + 1];
    else if (!std::strcmp(argv[i], "--merge-guarded-tries"))  // 1 by default (guarded_tries.hpp)
      mbcheck::sim::set_merge_guarded_tries(std::strtoull(argv[i + 1], nullptr, 10) != 0);
    else if (!std::strcmp(argv[i], "--slow"))
      slow_ms = std::strtod(argv[i + 1], nullptr);
  }
  Coverage coverage, kinds;
  std::uint64_t disagreements = 0, incomplete = 0, reference_incomplete = 0, bugs = 0, executions = 0, states = 0;
  std::uint64_t fuzz_total = 0, fuzz_bug_runs = 0, fuzz_false = 0, fuzz_unknown = 0, fuzz_step_limited = 0;
  std::uint64_t depth1 = 0, depth1_missed = 0, depth1_late = 0, depth1_random_missed = 0, deeper = 0, deeper_found = 0;
  std::uint64_t compared = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t k = 0; k < programs; ++k) {
    const auto program_start = std::chrono::steady_clock::now();
    const DiffProgram p = generate(seed + k);
    if (!having.empty() && std::none_of(p.scripts.begin(), p.scripts.end(), [&](const std::vector<Instr>& script) {
          return std::any_of(script.begin(), script.end(), [&](const Instr& i) { return to_string(i.op) == having; });
        }))
      continue;
    if (!pattern.empty()) {
      Coverage features;
      add_coverage(p, features);
      if (std::none_of(features.begin(), features.end(),
                       [&](const auto& f) { return f.first.find(pattern) != std::string::npos; }))
        continue;
    }
    ++compared;
    const bool chunked = (seed + k) % 2 == 1;
    mbcheck::sim::RaceDetector::chunked_from_threads() = chunked ? 0 : SIZE_MAX;
    if (chunked) ++kinds["programs on chunked race-detector clocks"];
    add_coverage(p, coverage);
    const Comparison c = compare(p, max_states);
    executions += c.search.stats.executions;
    states += c.reference.states;
    bugs += c.reference.bug;
    // the relation's provisional decs (a decrement taking tx-count below 0) and increments
    // (cp.async.mbarrier.arrive without .noinc), and the executions run again because one did
    // not hold up
    if (c.search.stats.provisional) ++kinds["search ran provisional decs"];
    if (c.search.stats.provisional_incs) ++kinds["search ran provisional increments"];
    if (c.search.stats.provisional_expects) ++kinds["search ran provisional expects"];
    if (c.search.stats.reruns) ++kinds["search re-ran an execution (a provisional op failed)"];
    for (const auto& k : c.reference.bug_kinds) ++kinds["reference finds " + k];
    if (!c.reference.bug) {
      ++kinds["bug-free"];
      // the new statements where outcomes are compared (bug-free programs), by shape
      ++kinds[fmt::format("bug-free, clusters {}x{}, warps of {}", p.cluster_x, p.cluster_y, p.warp_size)];
      std::set<Stmt> stmts;
      for (const auto& script : p.scripts)
        for (const Instr& i : script)
          if (i.op >= Stmt::remote_arrive) stmts.insert(i.op);
      for (Stmt st : stmts) ++kinds[fmt::format("bug-free, having {}", to_string(st))];
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - program_start).count();
    if (slow_ms > 0 && took * 1000 > slow_ms)
      fmt::print("SLOW program {} ({:.0f} ms, {} reference states):\n{}\n", seed + k, took * 1000, c.reference.states,
                 describe(p));
    if (c.reference_incomplete) {
      ++reference_incomplete;
      fmt::print("REFERENCE INCOMPLETE on program {} ({}):\n{}\n", seed + k, c.why, describe(p));
    } else if (c.search_incomplete) {
      ++incomplete;
      fmt::print("INCOMPLETE on program {} ({}):\n{}\n", seed + k, c.why, describe(p));
    } else if (!c.agree) {
      ++disagreements;
      const DiffProgram small = shrink(p);
      fmt::print("DISAGREEMENT on program {} ({}; {} clocks):\n{}shrunk to:\n{}{}\n\n", seed + k, c.why,
                 chunked ? "chunked" : "dense", describe(p), describe(small), compare(small).why);
    }
    if (fuzz_runs && c.reference.complete) {
      const FuzzComparison f = fuzz_compare(p, c.reference, fuzz_runs, fuzz_runs, seed + k);
      if (show) {
        std::string kinds;
        for (const auto& kind : c.reference.bug_kinds) kinds += " " + kind;
        fmt::print("program {}: reference bug kinds:{}; fuzz: {} of {} runs found a bug, first random at {}{}\n{}",
                   seed + k, kinds, f.bug_runs, f.runs, f.first_random_bug, f.depth1 ? " (depth 1)" : "", describe(p));
      }
      fuzz_total += f.runs;
      fuzz_bug_runs += f.bug_runs;
      fuzz_step_limited += f.step_limited;
      fuzz_false += f.false_alarms;
      fuzz_unknown += f.unknown_outcomes;
      if (f.depth1) {
        ++depth1;
        depth1_missed += !f.found;
        depth1_late += f.late_runs != 0;
        depth1_random_missed += !f.first_random_bug;
      } else if (c.reference.bug) {
        ++deeper;
        deeper_found += f.found;
      }
      if (!f.why.empty() || (f.depth1 && !f.found))
        fmt::print(
            "FUZZ on program {}: {}\n{}\n", seed + k,
            f.why.empty()
                ? fmt::format(
                      "a depth-1 bug not found in {} random, {} PCT and {} late runs (PCT depth 1 and 2, random)",
                      fuzz_runs, fuzz_runs, kLateRuns)
                : f.why,
            describe(p));
      else if (f.late_runs)
        fmt::print("late: program {}'s depth-1 bug found by late run {} (missed by {} + {} runs)\n", seed + k,
                   f.late_runs, fuzz_runs, fuzz_runs);
    }
    if ((k + 1) % 10000 == 0)
      fmt::print(stderr, "{} programs, {} disagreements, {:.0f} s\n", k + 1, disagreements,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}", format_coverage(coverage, compared));
  fmt::print("{}", format_coverage(kinds, compared));
  if (!having.empty()) fmt::print("{} of the {} programs have {}:\n", compared, programs, having);
  if (!pattern.empty()) fmt::print("{} of the {} programs have a feature \"{}\":\n", compared, programs, pattern);
  fmt::print(
      "{} programs (seeds {}..{}), {} with a reachable bug; reference states {}, DPOR executions {}; "
      "{} disagreements; {} bug-free programs beyond the search's 200000 executions; {} beyond the reference's "
      "{} states; {:.1f} s\n",
      compared, seed, seed + programs - 1, bugs, states, executions, disagreements, incomplete, reference_incomplete,
      max_states, seconds);
  if (fuzz_runs)
    fmt::print(
        "fuzzing: {} runs ({} random + {} PCT per program, and up to {} late runs for a missed depth-1 bug), {} "
        "with a bug, {} step-limited; {} false alarms, {} "
        "outcomes the reference never reaches; depth-1 bugs (a schedule without preemption reaches them): {} "
        "programs, {} missed ({} found only by the late runs, {} missed by the random runs alone); "
        "deeper bugs: {} programs, {} found\n",
        fuzz_total, fuzz_runs, fuzz_runs, kLateRuns, fuzz_bug_runs, fuzz_step_limited, fuzz_false, fuzz_unknown, depth1,
        depth1_missed, depth1_late, depth1_random_missed, deeper, deeper_found);
  return disagreements || fuzz_false || fuzz_unknown || depth1_missed ? 1 : 0;
}
