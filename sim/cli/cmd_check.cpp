// mbcheck check <protocol>: the exhaustive search (dpor, bounded: sharded through --shard-dir)
// or fuzzing (random, pct: sharded by run index), with its text or --json result and its
// --html / --trace / --sarif files.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/report/replay_token.hpp"

namespace mbcheck::sim::cli {

// --shard auto (or auto/N): the batch scheduler's own variables. Slurm array jobs:
// SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or with _MIN/_MAX; Kubernetes Indexed Jobs:
// JOB_COMPLETION_INDEX (0-based) with the count from auto/N or MBCHECK_SHARD_COUNT. Returns
// "i/n", or "" with `why` set.
std::string resolve_shard_spec(const std::string& spec, std::string* why) {
  if (spec != "auto" && spec.rfind("auto/", 0) != 0) return spec;
  auto env = [](const char* name) -> std::optional<long long> {
    const char* v = std::getenv(name);
    if (!v || !*v || std::string(v).find_first_not_of("0123456789") != std::string::npos || std::strlen(v) > 9)
      return std::nullopt;
    return std::stoll(v);
  };
  if (auto id = env("SLURM_ARRAY_TASK_ID")) {
    const auto lo = env("SLURM_ARRAY_TASK_MIN"), hi = env("SLURM_ARRAY_TASK_MAX");
    const auto count = env("SLURM_ARRAY_TASK_COUNT");
    const long long first = lo ? *lo : 0;
    const long long n = count ? *count : (lo && hi ? *hi - *lo + 1 : 0);
    if (n <= 0 || *id < first) {
      *why = "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT (or _MIN and _MAX) is missing or wrong";
      return "";
    }
    return fmt::format("{}/{}", *id - first + 1, n);
  }
  if (auto index = env("JOB_COMPLETION_INDEX")) {
    std::optional<long long> n = env("MBCHECK_SHARD_COUNT");
    if (spec.size() > 5) {
      const std::string count = spec.substr(5);
      if (count.find_first_not_of("0123456789") == std::string::npos && count.size() <= 6) n = std::stoll(count);
    }
    if (!n) {
      *why = "JOB_COMPLETION_INDEX is set: give the count as --shard auto/N or in MBCHECK_SHARD_COUNT";
      return "";
    }
    return fmt::format("{}/{}", *index + 1, *n);
  }
  *why = "auto needs a batch scheduler's array index (SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)";
  return "";
}

void CheckCommand::add(CLI::App& parent, const Registry& registry) {
  app = parent.add_subcommand("check", "explore every distinct schedule of a protocol (or a bounded part)");
  app->add_option("protocol", protocol, fmt::format("the protocol (`{} list` shows them)", parent.get_name()))
      ->required();
  app->add_option("--strategy", strategy,
                  "dpor (every class of schedules), bounded (DPOR up to --preemptions), random (uniform random "
                  "walk) or pct (priority change points, --depth)")
      ->check(CLI::IsMember({"dpor", "bounded", "random", "pct"}))
      ->capture_default_str();
  fuzzing.jobs = std::max(1u, std::thread::hardware_concurrency());
  runs_opt = app->add_option("--runs", fuzzing.runs, "random/pct: runs (0: until --time-limit)")
                 ->check(kWholeNumber)
                 ->capture_default_str();
  seed_opt = app->add_option("--seed", fuzzing.seed, "random/pct: base seed; run i uses a seed derived from (seed, i)")
                 ->check(kWholeNumber)
                 ->capture_default_str();
  depth_opt = app->add_option("--depth", fuzzing.depth, "pct: the bug depth d")
                  ->check(CLI::Range(1, 64))
                  ->capture_default_str();
  app->add_option("--jobs", fuzzing.jobs, "worker threads (default: all cores); the result is the same as with one")
      ->check(CLI::Range(1, 1024));
  keep_opt = app->add_flag("--keep-original", keep_original, "random/pct: also print the unshrunk counterexample");
  no_shrink_opt = app->add_flag("--no-shrink", no_shrink, "random/pct: print the failing run's own schedule");
  app->add_flag("--quiet", quiet, "no progress line on stderr");
  shard_opt = app->add_option("--shard", shard_spec,
                              "run as shard i of n (i/n, 1-based; auto: from Slurm's or Kubernetes' array "
                              "index): dpor/bounded share the search through --shard-dir, random/pct take "
                              "the run indices i-1, i-1+n, ...");
  shard_dir_opt =
      app->add_option("--shard-dir", shard_dir, "dpor/bounded: a directory all shards see")->needs(shard_opt);
  preemptions_opt = app->add_option("--preemptions", search.preemptions, "preemption bound for --strategy bounded")
                        ->check(CLI::Range(0, 1000))
                        ->capture_default_str();
  max_exec_opt =
      app->add_option("--max-executions", search.max_executions, "stop after this many executions (0: no limit)")
          ->check(kWholeNumber);
  app->add_option("--time-limit", search.time_limit_s, "stop after this many seconds (0: no limit)")->check(kSeconds);
  search.max_steps = kDefaultMaxSteps;
  app->add_option("--max-steps", search.max_steps,
                  "steps per execution; one that runs past it leaves the search incomplete (0: no limit)")
      ->check(kWholeNumber)
      ->capture_default_str();
  app->add_flag("--json", json, "print one JSON object instead of text");
  flags.add_to(app, registry.infos());
  visuals.add_to(app);
}

int CheckCommand::validate() {
  const bool fuzz = fuzz_strategy();
  auto misplaced = [&](CLI::Option* opt, bool applies, const char* where) {
    return opt->count() > 0 && !applies ? usage_error(fmt::format("{} applies only to {} (this is --strategy {})",
                                                                  opt->get_name(), where, strategy))
                                        : 0;
  };
  for (int code :
       {misplaced(runs_opt, fuzz, "--strategy random or pct"), misplaced(seed_opt, fuzz, "--strategy random or pct"),
        misplaced(keep_opt, fuzz, "--strategy random or pct"),
        misplaced(no_shrink_opt, fuzz, "--strategy random or pct"),
        misplaced(depth_opt, strategy == "pct", "--strategy pct"),
        misplaced(preemptions_opt, strategy == "bounded", "--strategy bounded"),
        misplaced(max_exec_opt, !fuzz, "--strategy dpor or bounded (fuzzing counts --runs)"),
        misplaced(shard_dir_opt, !fuzz, "--strategy dpor or bounded (fuzzing shards by run index)")})
    if (code) return code;
  if (!fuzz && shard_opt->count() > 0 && shard_dir_opt->count() == 0)
    return usage_error("--shard needs --shard-dir: a directory all shards of the search see");
  if (shard_opt->count() > 0 && max_exec_opt->count() > 0)
    return usage_error(
        "--shard and --max-executions do not combine: a shard's count of executions depends on "
        "what the other shards did (use --time-limit)");
  if (search.max_steps == 0) search.max_steps = std::numeric_limits<std::uint64_t>::max();
  return 0;
}

int CheckCommand::parse_shard() {
  if (shard_spec.empty()) return 0;
  std::string why;
  const std::string spec = resolve_shard_spec(shard_spec, &why);
  if (spec.empty()) return usage_error(fmt::format("--shard {}: {}", shard_spec, why));
  // Digits only: no sign, no spaces, no wrap-around.
  static const std::regex kShardSpec("([0-9]{1,6})/([0-9]{1,6})");
  std::smatch m;
  if (std::regex_match(spec, m, kShardSpec))
    shard_i = std::stoul(m[1]), shard_n = std::stoul(m[2]);
  else
    shard_i = shard_n = 0;
  if (shard_n < 1 || shard_i < 1 || shard_i > shard_n || shard_n > 100000)
    return usage_error(fmt::format("--shard {}: expected i/n with 1 <= i <= n <= 100000{}", shard_spec,
                                   spec != shard_spec ? fmt::format(" (from the environment: {})", spec) : ""));
  return 0;
}

void CheckCommand::write_files(CliProgram& program, const std::optional<Counterexample>& counterexample,
                               const std::string& token) const {
  if (counterexample) {  // a failed write says so on stderr; the exit code stays the verdict's
    (void)visuals.write(program, counterexample->schedule,
                        fmt::format("{} {}", protocol, shape_line(program.options())), token);
    return;
  }
  (void)visuals.write_no_result();
  if (!visuals.html.empty() || !visuals.trace.empty())
    fmt::print(stderr, "mbcheck: no counterexample to draw (mbcheck run writes one execution)\n");
}

int CheckCommand::run(const Registry& registry) {
  if (!visuals.check_paths()) return kExitUsage;
  if (const int code = parse_shard()) return code;
  return fuzz_strategy() ? run_fuzz(registry) : run_search(registry);
}

}  // namespace mbcheck::sim::cli
