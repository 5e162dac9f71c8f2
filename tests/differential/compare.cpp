#include "tests/differential/compare.hpp"

#include "sim/runtime/guarded_tries.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tests/differential/runtime_program.hpp"

namespace mbcheck::diff {

std::string bug_kind(const sim::Outcome& out) {
  return out.misuse && out.verdict != sim::Verdict::aliasing
             ? fmt::format("{}:{}", sim::to_string(out.verdict), sim::to_string(*out.misuse))
             : std::string(sim::to_string(out.verdict));
}

SearchReach search_reach(const DiffProgram& p, sim::SearchKind kind, std::uint64_t max_executions, unsigned jobs) {
  RuntimeProgram prog(p);
  sim::ExploreOptions o;
  o.kind = kind;
  // A bug ends the comparison (whether one exists, and that the reference finds its kind); a bug-free program is
  // explored to the end, so every outcome is seen.
  o.stop_at_first_bug = true;
  // With jobs, an execution limit would put the search on one core: a time limit bounds it instead.
  if (jobs > 1) {
    o.jobs = jobs;
    o.make_program = [&p] { return std::make_unique<RuntimeProgram>(p); };
    o.time_limit_s = 60;
  } else {
    o.max_executions = max_executions;
  }
  SearchReach r;
  const sim::ExploreResult er = sim::explore(prog, o, [&](const sim::Outcome& out) {
    for (sim::AgentId a : out.schedule) r.schedules = (r.schedules ^ a) * 0x100000001b3ull;  // FNV-1a
    r.schedules = (r.schedules ^ 0xffffffffull) * 0x100000001b3ull;                          // the execution's end
    // (With jobs, an execution ran on another Program: prog.observed() is not its outcome.)
    if (out.verdict == sim::Verdict::completed && jobs == 1) r.outcomes.insert(format_observed(prog.observed()));
    if (out.verdict == sim::Verdict::diverged) r.diverged = true;
    if (sim::is_bug(out.verdict)) {
      r.bug = true;
      r.bug_kinds.insert(bug_kind(out));
    }
  });
  r.stats = er.stats;
  return r;
}

namespace {
std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += "\n      " + x;
  return out;
}

// The search with 2 jobs (sibling subtrees as parallel waves, their races against the nodes
// above merged in order) must give exactly one job's result, the same executions in the same
// order; empty when it does.
std::string jobs_differ(const DiffProgram& p, const SearchReach& one) {
  if (!one.stats.complete && !one.bug) return {};
  const SearchReach two = search_reach(p, sim::SearchKind::dpor, 0, 2);
  if (!two.stats.complete && !two.bug) return {};  // its time limit: nothing to compare
  auto line = [](const SearchReach& r) {
    return fmt::format("{} executions, {} redundant, {} transitions, bug {}", r.stats.executions, r.stats.redundant,
                       r.stats.transitions, r.bug ? join(r.bug_kinds) : "none");
  };
  if (line(one) == line(two) && one.schedules == two.schedules) return {};
  return fmt::format("--jobs 2 differs from one job: {} against {}{}", line(two), line(one),
                     one.schedules == two.schedules ? "" : " (and the executions' schedules or their order differ)");
}

}  // namespace

Comparison compare(const DiffProgram& p, std::uint64_t reference_max_states) {
  Comparison c;
  c.reference = reference_explore(p, reference_max_states);
  c.search = search_reach(p);
  const ReferenceResult& ref = c.reference;
  const SearchReach& s = c.search;
  if (!ref.complete) {
    c.why = fmt::format("the reference did not finish ({} states)", ref.states);
    c.reference_incomplete = true;
  } else if (!s.stats.complete && !s.bug) {
    c.why = fmt::format("the search did not finish ({} executions)", s.stats.executions);
    c.search_incomplete = true;
  } else if (s.diverged) {
    c.why = "the search produced a diverged execution";
  } else if (s.stats.fallbacks != 0) {
    c.why = fmt::format("the search needed {} fallbacks (a reversal that was not enabled)", s.stats.fallbacks);
  } else if (ref.bug != s.bug) {
    c.why = fmt::format("bug: reference {} ({}), search {} ({})", ref.bug ? "yes" : "no", join(ref.bug_kinds),
                        s.bug ? "yes" : "no", join(s.bug_kinds));
  } else if (const auto k = std::find_if(s.bug_kinds.begin(), s.bug_kinds.end(),
                                         [&](const std::string& kind) { return !ref.bug_kinds.count(kind); });
             k != s.bug_kinds.end()) {
    c.why =
        fmt::format("bug kind: the search reports {}, which the reference does not find ({})", *k, join(ref.bug_kinds));
  } else if (const std::string jobs = jobs_differ(p, s); !jobs.empty()) {
    c.why = jobs;
  } else if (!ref.bug && ref.outcomes != s.outcomes) {
    std::set<std::string> missing, extra;
    for (const auto& o : ref.outcomes)
      if (!s.outcomes.count(o)) missing.insert(o);
    for (const auto& o : s.outcomes)
      if (!ref.outcomes.count(o)) extra.insert(o);
    c.why = fmt::format("outcomes differ: the search misses{}\n    and reaches beyond the reference{}", join(missing),
                        join(extra));
  } else {
    c.agree = true;
  }
  return c;
}

}  // namespace mbcheck::diff
