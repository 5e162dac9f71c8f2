// mbcheck check --strategy random|pct: fuzzing, its shrunk counterexample and its result.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/report/replay_token.hpp"

namespace mbcheck::sim::cli {

namespace {
// Why a shrunk counterexample has as many preemptions as the failing run, if it has.
std::string why_not_shrunk(const FuzzResult& r) {
  if (r.shrunk_preemptions < r.original_preemptions) return "";
  if (r.original_preemptions == 0) return ": none to remove";
  if (r.shrink_cut) return ": no time was left to shrink it";
  return ": no run of the same kind with fewer was found within the shrinker's time (6 s, or what the time limit left)";
}

struct FuzzReport {
  const CheckCommand& cmd;
  CliProgram& program;
  const FuzzResult& r;
  std::string token, original_token;

  void print_json() const {
    const FuzzOptions& o = cmd.fuzzing;
    nlohmann::json j = result_json(cmd.protocol, program, cmd.strategy, r.verdict, r.counterexample, token);
    j["runs"] = r.runs;
    j["executions"] = r.runs;
    j["transitions"] = r.transitions;
    j["seconds"] = r.seconds;
    j["seed"] = o.seed;
    j["runs_requested"] = o.runs;
    j["interrupted"] = r.interrupted;
    if (cmd.shard_n > 1) j["shard"] = fmt::format("{}/{}", cmd.shard_i, cmd.shard_n);
    if (o.kind == FuzzKind::pct) {
      j["depth"] = o.depth;
      j["pct_bound"] = r.pct_bound;
    }
    if (r.counterexample) {
      j["bug_run"] = *r.bug_run;
      j["preemptions"] = r.shrunk_preemptions;
      j["original_preemptions"] = r.original_preemptions;
      if (cmd.keep_original) j["original_replay"] = original_token;
    }
    print_out("{}\n", j.dump(2));
  }

  void print_text() const {
    const FuzzOptions& o = cmd.fuzzing;
    const std::string what = o.kind == FuzzKind::pct ? "PCT" : "random";
    if (o.kind == FuzzKind::pct)
      print_out(
          "pct: n = {} agents, k = {} steps: each run finds a depth-{} bug with probability >= 1/(n k^{}) "
          "= {:.3g}\n",
          r.agents, r.steps_estimate, o.depth, o.depth - 1, r.pct_bound);
    if (!r.counterexample) {
      print_out("incomplete: no bug in {} {} runs (fuzzing proves nothing), {} transitions, {:.3f} s\n", r.runs, what,
                r.transitions, r.seconds);
      return;
    }
    CheckResult shown;
    shown.verdict = CheckVerdict::bug;
    shown.counterexample = r.counterexample;
    std::string report = format_report(shown, token);
    print_out("{}", report.substr(0, report.rfind("bug: ")));  // the verdict line follows
    if (o.shrink)
      print_out("shrunk:   {} preemptions (the failing run had {}{}){}\n", r.shrunk_preemptions, r.original_preemptions,
                why_not_shrunk(r), cmd.keep_original ? fmt::format("; original: {}", original_token) : "");
    print_out("bug: {}: {} run {} of {} (seed {} run {}), {} transitions, {:.3f} s\n",
              to_string(r.counterexample->kind), what, *r.bug_run + 1, r.runs, o.seed, *r.bug_run, r.transitions,
              r.seconds);
  }
};
}  // namespace

int CheckCommand::run_fuzz(const Registry& registry) {
  const auto given = flags.given();
  fuzzing.shard_index = shard_i - 1;
  fuzzing.shard_count = shard_n;
  auto program = make_reported(registry, protocol, given);
  fuzzing.kind = strategy == "pct" ? FuzzKind::pct : FuzzKind::random;
  fuzzing.time_limit_s = search.time_limit_s;
  fuzzing.max_steps = search.max_steps;
  fuzzing.shrink = !no_shrink;
  if (fuzzing.runs == 0 && fuzzing.time_limit_s <= 0) return usage_error("--runs 0 needs a --time-limit");
  if (!json)
    print_out("mbcheck check {}  {}  strategy={}{} runs={} seed={} jobs={}\n", protocol, shape_line(program->options()),
              strategy, fuzzing.kind == FuzzKind::pct ? fmt::format(" depth={}", fuzzing.depth) : "", fuzzing.runs,
              fuzzing.seed, fuzzing.jobs);
  if (!flush_stdout()) return kExitUsage;  // the header did not go out: nor would the result
  Progress progress;
  progress.enabled = !quiet && !json && isatty(STDERR_FILENO);
  if (progress.enabled)
    fuzzing.progress = [&](std::uint64_t runs, std::uint64_t transitions, double secs) {
      progress.line(secs,
                    fmt::format("{} runs ({:.0f}/s), {} transitions, {:.0f} s", runs, runs / secs, transitions, secs));
    };
  const FuzzResult r = fuzz([&] { return std::unique_ptr<Program>(registry.make(protocol, given)); }, fuzzing);
  progress.clear();
  FuzzReport out{*this, *program, r, {}, {}};
  if (r.counterexample) out.token = encode_token({protocol, program->options(), r.counterexample->schedule});
  if (r.original) out.original_token = encode_token({protocol, program->options(), r.original->schedule});
  if (json)
    out.print_json();
  else
    out.print_text();
  write_files(*program, r.counterexample, out.token);
  return r.verdict == CheckVerdict::bug ? kExitBug : kExitIncomplete;
}

}  // namespace mbcheck::sim::cli
