#include "sim/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sim/explore/strategy.hpp"

namespace mbcheck::sim {

const char* to_string(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::verified: return "verified";
    case CheckVerdict::bug: return "bug";
    case CheckVerdict::incomplete: return "incomplete";
  }
  return "?";
}

Outcome replay_schedule(Program& program, const std::vector<AgentId>& schedule, bool record_trace,
                        std::vector<TraceEntry>* trace) {
  Runtime rt;
  ReplayStrategy replay(schedule);
  RunLimits limits;
  limits.max_steps = schedule.size();
  limits.record_trace = record_trace;
  Outcome out = rt.execute(program, replay, limits);
  if (trace) *trace = rt.trace();
  return out;
}

namespace {
std::string op_text(const TraceEntry& t) { return t.what.substr(0, t.what.find("  =>")); }
std::string state_text(const TraceEntry& t) {
  auto at = t.what.find("  =>");
  return at == std::string::npos ? "" : t.what.substr(at);
}
}  // namespace

Counterexample make_counterexample(Program& program, const Outcome& bug, std::size_t timeline_lines) {
  Counterexample cex;
  cex.kind = bug.verdict;
  cex.misuse = bug.misuse;
  if (bug.root) cex.root_misuse = bug.root->kind;
  cex.cause = bug.message;
  cex.details = bug.details;
  // The hardware goes on past these two (and one overrun of a phase reads as either, by which
  // side runs first): say how to see what follows.
  if (!bug.root && bug.misuse && (*bug.misuse == MisuseKind::missing_wait || *bug.misuse == MisuseKind::phase_aliasing))
    cex.details.push_back(
        "the hardware goes on: --on-misuse continue (LaunchShape::on_misuse) shows the hang, race or wrong result "
        "this leads to (a missing-wait and a phase-aliasing are often one overrun of a phase)");
  cex.schedule = bug.schedule;
  cex.steps = bug.steps;

  std::vector<TraceEntry> trace;
  replay_schedule(program, bug.schedule, true, &trace);
  // Relevant: the threads the cause names, and every step on a barrier they used.
  std::set<AgentId> agents(bug.culprits.begin(), bug.culprits.end());
  std::set<std::string> barriers;
  for (const auto& t : trace)
    if (agents.count(t.agent) && !t.barrier.empty()) barriers.insert(t.barrier);
  std::vector<const TraceEntry*> relevant;
  for (const auto& t : trace)
    if (agents.count(t.agent) || (!t.barrier.empty() && barriers.count(t.barrier))) relevant.push_back(&t);
  cex.elided = trace.size() - relevant.size();

  // The named threads' steps one per line; each run of other threads' steps in between
  // collapsed into one line that counts their operations (lanes that behave alike).
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < relevant.size();) {
    const TraceEntry& first = *relevant[i];
    if (agents.count(first.agent)) {
      lines.push_back(fmt::format("#{:<6} {}: {}{}", first.step, first.who, first.what,
                                  first.where.empty() ? "" : fmt::format("  ({})", first.where)));
      ++i;
      continue;
    }
    std::size_t j = i;
    std::vector<std::pair<std::string, std::size_t>> ops;  // op text -> count, in first-seen order
    std::set<AgentId> who;
    for (; j < relevant.size() && !agents.count(relevant[j]->agent); ++j) {
      who.insert(relevant[j]->agent);
      std::string op = op_text(*relevant[j]);
      auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& p) { return p.first == op; });
      if (it == ops.end())
        ops.emplace_back(op, 1);
      else
        ++it->second;
    }
    const TraceEntry& last = *relevant[j - 1];
    if (j - i == 1) {
      lines.push_back(fmt::format("#{:<6} {}: {}{}", first.step, first.who, first.what,
                                  first.where.empty() ? "" : fmt::format("  ({})", first.where)));
    } else {
      std::string summary;
      for (const auto& [op, n] : ops)
        summary += fmt::format("{}{}{}", summary.empty() ? "" : ", ", op, n > 1 ? fmt::format(" x{}", n) : "");
      lines.push_back(fmt::format("#{}-#{} {} other thread{}: {}{}", first.step, last.step, who.size(),
                                  who.size() == 1 ? "" : "s", summary, state_text(last)));
    }
    i = j;
  }
  if (lines.size() > timeline_lines) {
    const std::size_t cut = lines.size() - timeline_lines;
    lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(cut));
    lines.insert(lines.begin(), fmt::format("... {} earlier lines", cut));
  }
  cex.timeline = std::move(lines);
  // The diagnostics: each culprit's last step with a source line; the error at the one the
  // execution stopped in (the latest), notes at the others.
  std::vector<const TraceEntry*> last;
  for (AgentId a : bug.culprits) {
    const TraceEntry* found = nullptr;
    for (const auto& t : trace)
      if (t.agent == a && !t.where.empty()) found = &t;
    if (found) last.push_back(found);
  }
  std::sort(last.begin(), last.end(), [](const TraceEntry* x, const TraceEntry* y) { return x->step > y->step; });
  // The lines the cause is about come first: the error at the first (a race's access that
  // completed it, a deadlock's first blocked group), a note at each; then the culprits' last
  // barrier operations (for a race: those that should have ordered the accesses).
  bool error_given = false;
  for (const Outcome::Located& l : bug.located) {
    if (l.where.empty()) continue;
    if (!error_given)
      cex.diagnostics.push_back(fmt::format("{}: error: {}: {}", l.where, to_string(bug.verdict), bug.message));
    error_given = true;
    cex.diagnostics.push_back(
        fmt::format("{}: note: {}{}", l.where, l.text, l.function.empty() ? "" : fmt::format(", in {}", l.function)));
  }
  for (std::size_t i = 0; i < last.size(); ++i) {
    const TraceEntry& t = *last[i];
    if (i == 0 && !error_given)
      cex.diagnostics.push_back(fmt::format("{}: error: {}: {}", t.where, to_string(bug.verdict), bug.message));
    cex.diagnostics.push_back(fmt::format("{}: note: {} last ran '{}' here (step {}{})", t.where, t.who, op_text(t),
                                          t.step, t.function.empty() ? "" : fmt::format(", in {}", t.function)));
  }
  return cex;
}

CheckResult check_program(Program& program, const CheckOptions& options) {
  ExploreOptions eo = options;
  eo.kind = SearchKind::dpor;
  eo.preemption_bound = options.strategy == CheckStrategy::bounded ? options.preemptions : -1;
  ExploreResult er = explore(program, eo);
  CheckResult result;
  result.stats = er.stats;
  result.preemption_bound = eo.preemption_bound;
  result.protocol = options.protocol;
  if (er.bug && er.bug->verdict == Verdict::step_limit) {
    // An execution longer than --max-steps proves nothing either way: incomplete.
    result.verdict = CheckVerdict::incomplete;
    result.stats.complete = false;
    result.step_limited = true;
  } else if (er.bug) {
    result.verdict = CheckVerdict::bug;
    result.counterexample = make_counterexample(program, *er.bug, options.timeline_lines);
  } else {
    result.verdict = er.stats.complete ? CheckVerdict::verified : CheckVerdict::incomplete;
  }
  return result;
}

std::string format_report(const CheckResult& r, const std::string& replay_token) {
  std::string out;
  if (r.counterexample) {
    const Counterexample& c = *r.counterexample;
    out += fmt::format("bug:      {}\n", to_string(c.kind));
    out += fmt::format("cause:    {}\n", c.cause);
    for (const auto& d : c.details) out += fmt::format("          {}\n", d);
    out += fmt::format("timeline: the threads involved and the barriers they use ({} other steps elided)\n", c.elided);
    for (const auto& line : c.timeline) out += fmt::format("          {}\n", line);
    for (const auto& line : c.diagnostics) out += fmt::format("{}\n", line);
    if (!replay_token.empty()) out += fmt::format("replay:   {}\n", replay_token);
  }
  const ExploreStats& s = r.stats;
  if (r.verdict == CheckVerdict::verified)
    out += fmt::format(
        "proved:   for this shape, every schedule ({} class{} of equivalent interleavings{}) ends with every thread "
        "finished: no deadlock, livelock, data race, barrier misuse, phase aliasing or shared-memory lifetime bug, and "
        "the protocol's own "
        "output check passes{}\n",
        s.executions, s.executions == 1 ? "" : "es",
        r.preemption_bound >= 0 ? "; no schedule needed more preemptions than the bound" : "",
        s.spin_iterations || s.spin_noops
            ? fmt::format("; assuming each thread's state is its registers and stack ({} polls or loads were spin "
                          "iterations made from exactly the state of the thread's previous one, run as waits or "
                          "left out){}",
                          s.spin_iterations - s.backoff_merges + s.spin_noops,
                          s.backoff_merges
                              ? fmt::format(", and that a back-off loop's exit does not depend on how many of its "
                                            "polls failed ({} polls of loops whose state changed from poll to poll "
                                            "were run as waits after {} ordinary re-polls)",
                                            s.backoff_merges, Runtime::kBackoffExplored)
                              : std::string())
            : std::string());
  if (s.early_arrive_ons > 0)
    out += fmt::format(
        "warning:  {} arrive-on{} came before any wait saw {} barrier's previous phase complete (PTX's missing-wait "
        "rule: \"some test_wait/try_wait that returns true must happen before any arrive-on of the next phase\"); "
        "none completed {} phase, so no wait's answer changed, which compute-sanitizer's synccheck does not report "
        "either (docs/semantics.md); one that completes it is the misuse missing-wait\n",
        s.early_arrive_ons, s.early_arrive_ons == 1 ? "" : "s", s.early_arrive_ons == 1 ? "its" : "their",
        s.early_arrive_ons == 1 ? "its" : "their");
  std::string what = to_string(r.verdict);
  if (r.counterexample) what = fmt::format("bug: {}", to_string(r.counterexample->kind));
  std::string scope;
  if (r.preemption_bound >= 0)
    scope = s.bound_cut
                ? fmt::format(" (schedules with up to {} preemptions; {} alternatives beyond the bound not run)",
                              r.preemption_bound, s.bound_cut)
                : fmt::format(" (no schedule needed more than {} preemptions)", r.preemption_bound);
  else if (r.verdict == CheckVerdict::incomplete && r.step_limited)
    scope = " (an execution ran past --max-steps: not every schedule was explored; raise --max-steps, 0 for none)";
  else if (r.verdict == CheckVerdict::incomplete && s.interrupted)
    scope = " (interrupted: not every schedule was explored)";
  else if (r.verdict == CheckVerdict::incomplete)
    scope = " (cut short by --max-executions or --time-limit: not every schedule was explored)";
  out += fmt::format("{}: {} executions, {} transitions, {} blocked, {} redundant, {:.3f} s{}\n", what, s.executions,
                     s.transitions, s.blocked, s.redundant, s.seconds, scope);
  return out;
}

}  // namespace mbcheck::sim
