// One program, two searches: the reference enumerator and DPOR over the fiber runtime.
// They agree when both find a bug (the search's of a kind the reference finds), or neither
// does and both reach the same final outcomes; and DPOR with 2 jobs gives exactly one job's
// result (executions, redundant, transitions, bug kinds, the executions in order).
#pragma once

#include <set>
#include <string>

#include "sim/explore/explore.hpp"
#include "tests/differential/diff_program.hpp"
#include "tests/differential/reference.hpp"

namespace mbcheck::diff {

// An outcome's bug kind as the reference names them: "deadlock", "race", "aliasing",
// "misuse:<kind>", ...
std::string bug_kind(const sim::Outcome& out);

struct SearchReach {
  std::set<std::string> outcomes;   // format_observed of every completed execution
  std::set<std::string> bug_kinds;  // verdicts (and misuse kinds) of the buggy executions
  bool bug = false;
  bool diverged = false;                            // an execution the search itself could not follow
  std::uint64_t schedules = 0xcbf29ce484222325ull;  // a hash of every execution's schedule, in order
  sim::ExploreStats stats;
};

// `jobs` > 1: the search in parallel waves, bounded by a minute instead of an execution count.
SearchReach search_reach(const DiffProgram& p, sim::SearchKind kind = sim::SearchKind::dpor,
                         std::uint64_t max_executions = 200000, unsigned jobs = 1);

struct Comparison {
  bool agree = false;
  // The search stopped at its execution limit on a bug-free program: not a disagreement,
  // a size problem (counted and reported apart).
  bool search_incomplete = false;
  // The reference reached its state limit: nothing to compare against (counted apart too).
  bool reference_incomplete = false;
  std::string why;  // what differs, when they disagree
  ReferenceResult reference;
  SearchReach search;
};

Comparison compare(const DiffProgram& p, std::uint64_t reference_max_states = 2'000'000);

}  // namespace mbcheck::diff
