// mbcheck check --strategy dpor|bounded: the exhaustive (or preemption-bounded) search, alone
// or as one shard of a search shared through --shard-dir.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/report.hpp"

namespace mbcheck::sim::cli {

namespace {
void print_search_json(const CheckCommand& cmd, CliProgram& program, const CheckResult& result,
                       const std::string& token) {
  const ExploreStats& s = result.stats;
  nlohmann::json j = result_json(cmd.protocol, program, cmd.strategy, result.verdict, result.counterexample, token);
  j["executions"] = s.executions;
  j["blocked"] = s.blocked;
  j["redundant"] = s.redundant;
  j["transitions"] = s.transitions;
  j["spin_iterations"] = s.spin_iterations;
  j["backoff_merges"] = s.backoff_merges;
  j["early_arrive_ons"] = s.early_arrive_ons;
  j["seconds"] = s.seconds;
  j["complete"] = s.complete;
  j["interrupted"] = s.interrupted;
  j["step_limited"] = result.step_limited;
  if (cmd.search.shard_count > 1) {
    j["shard"] = fmt::format("{}/{}", cmd.search.shard_index + 1, cmd.search.shard_count);
    j["own_executions"] = s.own_executions;
  }
  if (result.preemption_bound >= 0) {
    j["preemption_bound"] = result.preemption_bound;
    j["beyond_bound"] = s.bound_cut;
  }
  print_out("{}\n", j.dump(2));
}
}  // namespace

int CheckCommand::setup_shard_dir(const CliProgram& program) {
  search.shard_index = shard_i - 1;
  search.shard_count = shard_n;
  search.shard_dir = shard_dir;
  std::error_code ec;
  std::filesystem::create_directories(shard_dir, ec);
  if (ec) return usage_error(fmt::format("--shard-dir {}: {}", shard_dir, ec.message()));
  // The directory belongs to one search: its files carry this, and others are refused.
  search.shard_identity =
      fmt::format("mbcheck {} check {} {} strategy={} preemptions={} max-steps={} shards={}", kMbcheckVersion, protocol,
                  shape_line(program.options()), strategy, strategy == "bounded" ? search.preemptions : -1,
                  search.max_steps, search.shard_count);
  if (shard_n > 1) claim_shard_dir(shard_dir, search.shard_index, search.shard_identity);
  return 0;
}

int CheckCommand::run_search(const Registry& registry) {
  const auto given = flags.given();
  auto program = make_reported(registry, protocol, given);
  search.strategy = strategy == "bounded" ? CheckStrategy::bounded : CheckStrategy::dpor;
  search.jobs = fuzzing.jobs;
  search.make_program = [&] { return std::unique_ptr<Program>(registry.make(protocol, given)); };
  search.protocol = {protocol, program->options()};
  if (!shard_spec.empty())
    if (const int code = setup_shard_dir(*program)) return code;
  if (!json)
    print_out("mbcheck check {}  {}  strategy={}{} jobs={}\n", protocol, shape_line(program->options()), strategy,
              strategy == "bounded" ? fmt::format(" preemptions={}", search.preemptions) : "", search.jobs);
  // The header goes out before the search: if stdout cannot take it, the result could not
  // be written either, so the search is not run.
  if (!flush_stdout()) return kExitUsage;
  Progress progress;
  progress.enabled = !quiet && !json && isatty(STDERR_FILENO);
  if (progress.enabled)
    search.progress = [&](const ExploreStats& s, double covered) {
      progress.line(s.seconds,
                    fmt::format("{} executions ({:.0f}/s), {} redundant, {:.0f} s, ~{:.1f}% of the tree", s.executions,
                                s.executions / s.seconds, s.redundant, s.seconds, 100 * covered));
    };
  CheckResult result = check_program(*program, search);
  progress.clear();
  const std::string token = replay_token(result);
  if (json) {
    print_search_json(*this, *program, result, token);
  } else {
    if (search.shard_count > 1)
      print_out("shard {}/{}: this shard ran {} of the {} executions itself\n", search.shard_index + 1,
                search.shard_count, result.stats.own_executions, result.stats.executions);
    print_out("{}", format_report(result, token));
  }
  write_files(*program, result.counterexample, token);
  switch (result.verdict) {
    case CheckVerdict::verified: return kExitOk;
    case CheckVerdict::bug: return kExitBug;
    case CheckVerdict::incomplete: return kExitIncomplete;
  }
  return kExitUsage;
}

}  // namespace mbcheck::sim::cli
