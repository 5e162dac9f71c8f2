// The mbcheck command line (sim/cli.hpp): every subcommand over a list of protocols.
//   mbcheck list
//   mbcheck check <protocol> [shape flags] [--strategy dpor|bounded] ...   explore every schedule
//   mbcheck run <protocol> [shape flags] [--seed N]     one execution under a seeded random schedule
//   mbcheck replay TOKEN | --replay-file FILE           that execution again, with its full trace
// Exit codes: 0 no bug (verified), 1 bug found, 2 usage error, 3 incomplete.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "sim/check.hpp"
#include "sim/cli.hpp"
#include "sim/cli/cli_support.hpp"
#include "sim/runtime/crash.hpp"
#include "sim/fuzz.hpp"
#include "sim/explore/merge.hpp"
#include "sim/report/visual.hpp"
#include "sim/protocols/protocols.hpp"
#include "sim/report/replay_token.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/explore/strategy.hpp"

using namespace mbcheck::sim;

#ifndef MBCHECK_VERSION
#define MBCHECK_VERSION "unknown"
#endif
constexpr const char* kMbcheckVersion = MBCHECK_VERSION;
// Steps one execution may take, for every command (check, fuzzing and run alike).
constexpr std::uint64_t kDefaultMaxSteps = 10'000'000;

namespace mbcheck::sim::cli {

namespace {
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
}  // namespace

namespace {

// The protocols this command line knows.
class Registry {
 public:
  explicit Registry(const std::vector<ProtocolEntry>& entries) : entries_(entries) {}
  std::vector<ProtocolInfo> infos() const {
    std::vector<ProtocolInfo> out;
    for (const auto& e : entries_) out.push_back(e.info);
    return out;
  }
  std::unique_ptr<BundledProgram> make(const std::string& name, const std::map<std::string, std::string>& options) const {
    for (const auto& e : entries_)
      if (e.info.name == name) return e.make(options);
    std::string known;
    for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.info.name;
    throw ShapeError(fmt::format("unknown protocol '{}' (known: {})", name.substr(0, 60) + (name.size() > 60 ? "..." : ""),
                                 known));
  }

 private:
  const std::vector<ProtocolEntry>& entries_;
};

int run_cli(int argc, char** argv, const Registry& registry) {
  CLI::App app{"mbcheck: a simulator and model checker for GPU mbarrier pipelines"};
  double memory_limit_gib = 0;
  app.add_option("--memory-limit", memory_limit_gib,
                 "address-space limit in GiB (default: 90% of physical memory); beyond it, a clear error")
      ->check(CLI::Range(0.1, 1e6));
  app.fallthrough();  // --memory-limit also after the subcommand
  app.set_version_flag("--version", std::string("mbcheck ") + kMbcheckVersion);
  app.require_subcommand(1);

  auto* list = app.add_subcommand("list", "list the bundled protocols, their shape flags and mutations");
  bool list_json = false;
  list->add_flag("--json", list_json, "print one JSON array instead of text");

  auto* check = app.add_subcommand("check", "explore every distinct schedule of a protocol (or a bounded part)");
  std::string check_protocol, strategy_name = "dpor";
  CheckOptions check_opts;
  bool json = false;
  ShapeFlags check_flags;
  check->add_option("protocol", check_protocol, "a bundled protocol (see `mbcheck list`)")->required();
  check->add_option("--strategy", strategy_name,
                    "dpor (every class of schedules), bounded (DPOR up to --preemptions), random (uniform random "
                    "walk) or pct (priority change points, --depth)")
      ->check(CLI::IsMember({"dpor", "bounded", "random", "pct"}))
      ->capture_default_str();
  FuzzOptions fuzz_opts;
  fuzz_opts.jobs = std::max(1u, std::thread::hardware_concurrency());
  bool keep_original = false, no_shrink = false;
  auto* runs_opt = check->add_option("--runs", fuzz_opts.runs, "random/pct: runs (0: until --time-limit)")
      ->check(kWholeNumber)
      ->capture_default_str();
  auto* fuzz_seed_opt = check->add_option("--seed", fuzz_opts.seed, "random/pct: base seed; run i uses a seed derived from (seed, i)")
      ->check(kWholeNumber)
      ->capture_default_str();
  auto* depth_opt = check->add_option("--depth", fuzz_opts.depth, "pct: the bug depth d")->check(CLI::Range(1, 64))->capture_default_str();
  check->add_option("--jobs", fuzz_opts.jobs,
                    "worker threads (default: all cores); the result is the same as with one")
      ->check(CLI::Range(1, 1024));
  auto* keep_opt = check->add_flag("--keep-original", keep_original, "random/pct: also print the unshrunk counterexample");
  auto* no_shrink_opt = check->add_flag("--no-shrink", no_shrink, "random/pct: print the failing run's own schedule");
  bool quiet = false;
  check->add_flag("--quiet", quiet, "no progress line on stderr");
  std::string shard_spec, shard_dir;
  auto* shard_opt = check->add_option("--shard", shard_spec,
                                      "run as shard i of n (i/n, 1-based; auto: from Slurm's or Kubernetes' array "
                                      "index): dpor/bounded share the search through --shard-dir, random/pct take "
                                      "the run indices i-1, i-1+n, ...");
  auto* shard_dir_opt =
      check->add_option("--shard-dir", shard_dir, "dpor/bounded: a directory all shards see")->needs(shard_opt);
  auto* preemptions_opt = check->add_option("--preemptions", check_opts.preemptions, "preemption bound for --strategy bounded")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  auto* max_exec_opt = check->add_option("--max-executions", check_opts.max_executions, "stop after this many executions (0: no limit)")
      ->check(kWholeNumber);
  check->add_option("--time-limit", check_opts.time_limit_s, "stop after this many seconds (0: no limit)")
      ->check(kSeconds);
  check_opts.max_steps = kDefaultMaxSteps;
  check->add_option("--max-steps", check_opts.max_steps,
                    "steps per execution; one that runs past it leaves the search incomplete (0: no limit)")
      ->check(kWholeNumber)
      ->capture_default_str();
  check->add_flag("--json", json, "print one JSON object instead of text");
  check_flags.add_to(check, registry.infos());
  VisualFiles check_visuals;
  check_visuals.add_to(check);
  check_visuals.tool_version = kMbcheckVersion;

  auto* run = app.add_subcommand("run", "run one execution of a protocol under a seeded random schedule");
  std::string protocol;
  std::uint64_t seed = 1;
  std::uint64_t max_steps = kDefaultMaxSteps;
  run->add_option("protocol", protocol, "a bundled protocol (see `mbcheck list`)")->required();
  bool run_token = false;
  run->add_flag("--token", run_token, "print the replay token also when the execution is correct");
  run->add_option("--seed", seed, "seed of the random schedule")->check(kWholeNumber)->capture_default_str();
  run->add_option("--max-steps", max_steps, "give up after this many steps (0: no limit)")->check(kWholeNumber)->capture_default_str();
  ShapeFlags run_flags;
  run_flags.add_to(run, registry.infos());
  VisualFiles run_visuals;
  run_visuals.add_to(run);

  auto* replay = app.add_subcommand("replay", "replay an execution from its token, printing every step");
  std::string token_text, token_file;
  auto* token_opt = replay->add_option("token", token_text, "a replay token printed by run");
  auto* file_opt = replay->add_option("--replay-file", token_file, "read the token from this file");
  token_opt->excludes(file_opt);
  VisualFiles replay_visuals;
  replay_visuals.add_to(replay);
  bool replay_json = false;
  replay->add_flag("--json", replay_json, "print one JSON object (the verdict and every step) instead of text");

  std::size_t stack_size = default_stack_bytes();
  const CLI::Validator kStackSize(
      [](std::string& v) -> std::string {
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
          return "must be a number of bytes, got '" + v.substr(0, 40) + "'";
        if (v.size() > 9) return "must be at most 16 MiB (16777216)";
        const auto err = stack_size_error(std::stoull(v));
        return err ? *err : std::string();
      },
      "BYTES");
  for (CLI::App* cmd : {check, run, replay})
    cmd->add_option("--stack-size", stack_size,
                    "fiber stack bytes per simulated thread (a multiple of the page size, 16 KiB to 16 MiB); "
                    "overflowing it is reported as a stack overflow")
        ->check(kStackSize)
        ->capture_default_str();

  auto* merge = app.add_subcommand("merge", "combine the --json results of the shards of one search into one verdict");
  std::vector<std::string> merge_files;
  merge->add_option("results", merge_files, "one `check --shard ... --json` output file per shard")->required();
  bool merge_json = false;
  merge->add_flag("--json", merge_json, "print one JSON object instead of text");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-')
      return usage_error(fmt::format("unknown subcommand '{}': one of list, check, run, replay, merge", argv[1]));
    return usage_error(e.what());
  }
  // A flag that does not apply to what was asked is an error, never silently ignored.
  if (*check) {
    const bool fuzzing = strategy_name == "random" || strategy_name == "pct";
    auto misplaced = [&](CLI::Option* opt, bool applies, const char* where) {
      return opt->count() > 0 && !applies
                 ? usage_error(fmt::format("{} applies only to {} (this is --strategy {})", opt->get_name(), where,
                                           strategy_name))
                 : 0;
    };
    for (int code : {misplaced(runs_opt, fuzzing, "--strategy random or pct"),
                     misplaced(fuzz_seed_opt, fuzzing, "--strategy random or pct"),
                     misplaced(keep_opt, fuzzing, "--strategy random or pct"),
                     misplaced(no_shrink_opt, fuzzing, "--strategy random or pct"),
                     misplaced(depth_opt, strategy_name == "pct", "--strategy pct"),
                     misplaced(preemptions_opt, strategy_name == "bounded", "--strategy bounded"),
                     misplaced(max_exec_opt, !fuzzing, "--strategy dpor or bounded (fuzzing counts --runs)"),
                     misplaced(shard_dir_opt, !fuzzing, "--strategy dpor or bounded (fuzzing shards by run index)")})
      if (code) return code;
    if (!fuzzing && shard_opt->count() > 0 && shard_dir_opt->count() == 0)
      return usage_error("--shard needs --shard-dir: a directory all shards of the search see");
    if (shard_opt->count() > 0 && max_exec_opt->count() > 0)
      return usage_error("--shard and --max-executions do not combine: a shard's count of executions depends on "
                         "what the other shards did (use --time-limit)");
    if (check_opts.max_steps == 0) check_opts.max_steps = std::numeric_limits<std::uint64_t>::max();
  }
  if (*run && max_steps == 0) max_steps = std::numeric_limits<std::uint64_t>::max();

  set_default_stack_bytes(stack_size);
  check_opts.memory_budget = apply_memory_limit(memory_limit_gib);
  try {
    if (*list && list_json) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& p : registry.infos()) {
        nlohmann::json options = nlohmann::json::array();
        for (const auto& o : p.options) options.push_back({{"name", o.name}, {"default", o.default_value}, {"help", o.help}});
        all.push_back({{"name", p.name}, {"summary", p.summary}, {"options", options}, {"mutations", p.mutations}});
      }
      fmt::print("{}\n", all.dump(2));
      return kExitOk;
    }
    if (*list) {
      for (const auto& p : registry.infos()) {
        fmt::print("{}\n  {}\n  shape flags:\n", p.name, p.summary);
        for (const auto& o : p.options) fmt::print("    --{:<18} {} (default {})\n", o.name, o.help, o.default_value);
        fmt::print("  mutations:");
        for (const auto& m : p.mutations) fmt::print(" {}", m);
        fmt::print("\n");
      }
      return kExitOk;
    }

    if ((*check && !check_visuals.check_paths()) || (*run && !run_visuals.check_paths()) ||
        (*replay && !replay_visuals.check_paths()))
      return kExitUsage;

    unsigned shard_i = 1, shard_n = 1;  // --shard i/n
    if (*check && !shard_spec.empty()) {
      std::string why;
      const std::string spec = resolve_shard_spec(shard_spec, &why);
      if (spec.empty()) return usage_error(fmt::format("--shard {}: {}", shard_spec, why));
      // Digits only: no sign, no spaces, no wrap-around.
      static const std::regex kShardSpec("([0-9]{1,6})/([0-9]{1,6})");
      std::smatch m;
      if (std::regex_match(spec, m, kShardSpec)) shard_i = std::stoul(m[1]), shard_n = std::stoul(m[2]);
      else shard_i = shard_n = 0;
      if (shard_n < 1 || shard_i < 1 || shard_i > shard_n || shard_n > 100000)
        return usage_error(fmt::format("--shard {}: expected i/n with 1 <= i <= n <= 100000{}", shard_spec,
                                       spec != shard_spec ? fmt::format(" (from the environment: {})", spec) : ""));
    }

    if (*check && (strategy_name == "random" || strategy_name == "pct")) {
      const auto given = check_flags.given();
      fuzz_opts.shard_index = shard_i - 1;
      fuzz_opts.shard_count = shard_n;
      auto program = registry.make(check_protocol, given);
      install_crash_reporter([&](const std::vector<AgentId>& s) { return encode_token({check_protocol, program->options(), s}); }, encode_schedule_to);
      fuzz_opts.kind = strategy_name == "pct" ? FuzzKind::pct : FuzzKind::random;
      fuzz_opts.time_limit_s = check_opts.time_limit_s;
      fuzz_opts.max_steps = check_opts.max_steps;
      fuzz_opts.shrink = !no_shrink;
      if (fuzz_opts.runs == 0 && fuzz_opts.time_limit_s <= 0)
        return usage_error("--runs 0 needs a --time-limit");
      if (!json)
        fmt::print("mbcheck check {}  {}  strategy={}{} runs={} seed={} jobs={}\n", check_protocol,
                   shape_line(program->options()), strategy_name,
                   fuzz_opts.kind == FuzzKind::pct ? fmt::format(" depth={}", fuzz_opts.depth) : "", fuzz_opts.runs,
                   fuzz_opts.seed, fuzz_opts.jobs);
      std::fflush(stdout);
      Progress progress;
      progress.enabled = !quiet && !json && isatty(STDERR_FILENO);
      if (progress.enabled)
        fuzz_opts.progress = [&](std::uint64_t runs, std::uint64_t transitions, double secs) {
          progress.line(secs, fmt::format("{} runs ({:.0f}/s), {} transitions, {:.0f} s", runs, runs / secs, transitions, secs));
        };
      FuzzResult r = fuzz([&] { return std::unique_ptr<Program>(registry.make(check_protocol, given)); }, fuzz_opts);
      progress.clear();
      std::string token, original_token;
      if (r.counterexample) token = encode_token({check_protocol, program->options(), r.counterexample->schedule});
      if (r.original) original_token = encode_token({check_protocol, program->options(), r.original->schedule});
      const std::string what = fuzz_opts.kind == FuzzKind::pct ? "PCT" : "random";
      if (json) {
        nlohmann::json j = result_json(check_protocol, *program, strategy_name, r.verdict, r.counterexample, token);
        j["runs"] = r.runs;
        j["executions"] = r.runs;
        j["transitions"] = r.transitions;
        j["seconds"] = r.seconds;
        j["seed"] = fuzz_opts.seed;
        j["runs_requested"] = fuzz_opts.runs;
        j["interrupted"] = r.interrupted;
        if (shard_n > 1) j["shard"] = fmt::format("{}/{}", shard_i, shard_n);
        if (fuzz_opts.kind == FuzzKind::pct) {
          j["depth"] = fuzz_opts.depth;
          j["pct_bound"] = r.pct_bound;
        }
        if (r.counterexample) {
          j["bug_run"] = *r.bug_run;
          j["preemptions"] = r.shrunk_preemptions;
          j["original_preemptions"] = r.original_preemptions;
          if (keep_original) j["original_replay"] = original_token;
        }
        fmt::print("{}\n", j.dump(2));
      } else {
        if (fuzz_opts.kind == FuzzKind::pct)
          fmt::print("pct: n = {} agents, k = {} steps: each run finds a depth-{} bug with probability >= 1/(n k^{}) "
                     "= {:.3g}\n",
                     r.agents, r.steps_estimate, fuzz_opts.depth, fuzz_opts.depth - 1, r.pct_bound);
        if (r.counterexample) {
          CheckResult shown;
          shown.verdict = CheckVerdict::bug;
          shown.counterexample = r.counterexample;
          std::string report = format_report(shown, token);
          fmt::print("{}", report.substr(0, report.rfind("bug: ")));  // the verdict line follows
          if (fuzz_opts.shrink)
            fmt::print("shrunk:   {} preemptions (the failing run had {}){}\n", r.shrunk_preemptions,
                       r.original_preemptions, keep_original ? fmt::format("; original: {}", original_token) : "");
          fmt::print("bug: {}: {} run {} of {} (seed {} run {}), {} transitions, {:.3f} s\n",
                     to_string(r.counterexample->kind), what, *r.bug_run + 1, r.runs, fuzz_opts.seed, *r.bug_run,
                     r.transitions, r.seconds);
        } else {
          fmt::print("incomplete: no bug in {} {} runs (fuzzing proves nothing), {} transitions, {:.3f} s\n", r.runs,
                     what, r.transitions, r.seconds);
        }
      }
      if (r.counterexample)  // a failed write says so on stderr; the exit code stays the bug's
        (void)check_visuals.write(*program, r.counterexample->schedule,
                                  fmt::format("{} {}", check_protocol, shape_line(program->options())), token);
      if (!r.counterexample) (void)check_visuals.write_no_result();
      if (!r.counterexample && (!check_visuals.html.empty() || !check_visuals.trace.empty()))
        fmt::print(stderr, "mbcheck: no counterexample to draw (mbcheck run writes one execution)\n");
      return r.verdict == CheckVerdict::bug ? kExitBug : kExitIncomplete;
    }

    if (*check) {
      const auto given = check_flags.given();
      auto program = registry.make(check_protocol, given);
      install_crash_reporter([&](const std::vector<AgentId>& s) { return encode_token({check_protocol, program->options(), s}); }, encode_schedule_to);
      check_opts.strategy = strategy_name == "bounded" ? CheckStrategy::bounded : CheckStrategy::dpor;
      check_opts.jobs = fuzz_opts.jobs;
      check_opts.make_program = [&] { return std::unique_ptr<Program>(registry.make(check_protocol, given)); };
      if (!shard_spec.empty()) {
        const unsigned i = shard_i, n = shard_n;
        check_opts.shard_index = i - 1;
        check_opts.shard_count = n;
        check_opts.shard_dir = shard_dir;
        std::error_code ec;
        std::filesystem::create_directories(shard_dir, ec);
        if (ec) return usage_error(fmt::format("--shard-dir {}: {}", shard_dir, ec.message()));
        // The directory belongs to one search: its files carry this, and others are refused.
        check_opts.shard_identity = fmt::format("mbcheck {} check {} {} strategy={} preemptions={} max-steps={} shards={}",
                                                kMbcheckVersion, check_protocol, shape_line(program->options()),
                                                strategy_name, strategy_name == "bounded" ? check_opts.preemptions : -1,
                                                check_opts.max_steps, check_opts.shard_count);
        if (const char* stale = std::getenv("MBCHECK_SHARD_STALE_S")) check_opts.shard_stale_s = std::atof(stale);
        if (n > 1) claim_shard_dir(shard_dir, check_opts.shard_index, check_opts.shard_identity);
      }
      if (!json)
        fmt::print("mbcheck check {}  {}  strategy={}{} jobs={}\n", check_protocol, shape_line(program->options()),
                   strategy_name,
                   strategy_name == "bounded" ? fmt::format(" preemptions={}", check_opts.preemptions) : "",
                   check_opts.jobs);
      std::fflush(stdout);
      Progress progress;
      progress.enabled = !quiet && !json && isatty(STDERR_FILENO);
      if (progress.enabled)
        check_opts.progress = [&](const ExploreStats& s, double covered) {
          progress.line(s.seconds, fmt::format("{} executions ({:.0f}/s), {} redundant, {:.0f} s, ~{:.1f}% of the tree",
                                               s.executions, s.executions / s.seconds, s.redundant, s.seconds,
                                               100 * covered));
        };
      CheckResult result = check_program(*program, check_opts);
      progress.clear();
      std::string token;
      if (result.counterexample)
        token = encode_token({check_protocol, program->options(), result.counterexample->schedule});
      if (json) {
        const ExploreStats& s = result.stats;
        nlohmann::json j =
            result_json(check_protocol, *program, strategy_name, result.verdict, result.counterexample, token);
        j["executions"] = s.executions;
        j["blocked"] = s.blocked;
        j["redundant"] = s.redundant;
        j["transitions"] = s.transitions;
        j["spin_iterations"] = s.spin_iterations;
        j["seconds"] = s.seconds;
        j["complete"] = s.complete;
        j["interrupted"] = s.interrupted;
        j["step_limited"] = result.step_limited;
        if (check_opts.shard_count > 1) {
          j["shard"] = fmt::format("{}/{}", check_opts.shard_index + 1, check_opts.shard_count);
          j["own_executions"] = s.own_executions;
        }
        if (result.preemption_bound >= 0) {
          j["preemption_bound"] = result.preemption_bound;
          j["beyond_bound"] = s.bound_cut;
        }
        fmt::print("{}\n", j.dump(2));
      } else {
        if (check_opts.shard_count > 1)
          fmt::print("shard {}/{}: this shard ran {} of the {} executions itself\n", check_opts.shard_index + 1,
                     check_opts.shard_count, result.stats.own_executions, result.stats.executions);
        fmt::print("{}", format_report(result, token));
      }
      if (result.counterexample)  // a failed write says so on stderr; the exit code stays the verdict's
        (void)check_visuals.write(*program, result.counterexample->schedule,
                                  fmt::format("{} {}", check_protocol, shape_line(program->options())), token);
      if (!result.counterexample) (void)check_visuals.write_no_result();
      if (!result.counterexample && (!check_visuals.html.empty() || !check_visuals.trace.empty()))
        fmt::print(stderr, "mbcheck: no counterexample to draw (mbcheck run writes one execution)\n");
      switch (result.verdict) {
        case CheckVerdict::verified: return kExitOk;
        case CheckVerdict::bug: return kExitBug;
        case CheckVerdict::incomplete: return kExitIncomplete;
      }
    }

    if (*run) {
      auto program = registry.make(protocol, run_flags.given());
      install_crash_reporter([&](const std::vector<AgentId>& s) { return encode_token({protocol, program->options(), s}); }, encode_schedule_to);
      fmt::print("mbcheck run {}  {}  seed={}\n", protocol, shape_line(program->options()), seed);
      Runtime rt;
      RandomStrategy strategy(seed);
      RunLimits limits;
      limits.max_steps = max_steps;
      Outcome out = rt.execute(*program, strategy, limits);
      const int code = report(protocol, *program, out, run_token);
      // A failed write says so on stderr; a bug's exit code stays the verdict's.
      if (!run_visuals.write(*program, out.schedule, fmt::format("{} {} seed={}", protocol, shape_line(program->options()), seed),
                             encode_token({protocol, program->options(), out.schedule})))
        return code == kExitOk ? kExitUsage : code;
      return code;
    }

    if (*merge) {
      std::vector<ShardInput> inputs;
      for (const auto& file : merge_files) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(file, ec))
          return usage_error(fmt::format("{}: not a file", file));
        std::ifstream in(file);
        if (!in) return usage_error(fmt::format("cannot read {}", file));
        try {
          inputs.push_back({file, nlohmann::json::parse(in)});
        } catch (const nlohmann::json::exception& e) {
          return usage_error(fmt::format("{} is not a check --json result: {}", file, e.what()));
        }
      }
      const MergedResult m = merge_shard_results(inputs);
      const int merged_code = m.verdict == "verified" ? kExitOk : m.verdict == "bug" ? kExitBug : kExitIncomplete;
      if (merge_json) {
        nlohmann::json j = {{"protocol", m.protocol},       {"options", inputs.front().json.at("options")},
                            {"strategy", inputs.front().json.at("strategy")},
                            {"verdict", m.verdict},         {"kind", m.kind.empty() ? nlohmann::json() : nlohmann::json(m.kind)},
                            {"replay", m.replay.empty() ? nlohmann::json() : nlohmann::json(m.replay)},
                            {"executions", m.executions},   {"transitions", m.transitions},
                            {"blocked", m.blocked},         {"redundant", m.redundant},
                            {"shards", inputs.size()},      {"own_executions_total", m.own_total}};
        fmt::print("{}\n", j.dump(2));
        return merged_code;
      }
      const bool fuzzing = inputs.front().json.value("strategy", "") == "random" ||
                           inputs.front().json.value("strategy", "") == "pct";
      if (fuzzing)
        fmt::print("merged {} shard results of mbcheck check {}: runs by each: {} (the bug of the lowest run index "
                   "is the campaign's)\n",
                   inputs.size(), m.protocol, m.shares);
      else
        fmt::print("merged {} shard results of mbcheck check {}: executions run by each: {} ({} in all; the "
                   "stretches between waves run in every shard)\n",
                   inputs.size(), m.protocol, m.shares, m.own_total);
      if (m.verdict == "bug") fmt::print("replay:  {}\n", m.replay);
      // The verdict line of the unsharded search, without its time.
      fmt::print("{}{}: {} executions, {} transitions, {} blocked, {} redundant\n", m.verdict,
                 m.verdict == "bug" ? fmt::format(": {}", m.kind) : "", m.executions, m.transitions, m.blocked,
                 m.redundant);
      return m.verdict == "verified" ? kExitOk : m.verdict == "bug" ? kExitBug : kExitIncomplete;
    }

    if (*replay) {
      if (token_opt->count() == 0 && file_opt->count() == 0)
        return usage_error("replay needs a TOKEN or --replay-file FILE");
      if (file_opt->count() > 0) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(token_file, ec))
          return usage_error(fmt::format("--replay-file {}: not a file", token_file));
        std::ifstream in(token_file);
        if (!in) return usage_error(fmt::format("cannot read --replay-file {}", token_file));
        std::stringstream ss;
        ss << in.rdbuf();
        token_text = ss.str();
        while (!token_text.empty() && std::isspace(static_cast<unsigned char>(token_text.back()))) token_text.pop_back();
      }
      ReplayToken token;
      try {
        token = decode_token(token_text);
      } catch (const TokenError& e) {
        return usage_error(fmt::format("malformed replay token: {}", e.what()));
      }
      auto program = registry.make(token.protocol, token.options);
      if (!replay_json)
        fmt::print("mbcheck replay {}  {}  ({} steps recorded)\n", token.protocol, shape_line(program->options()),
                   token.schedule.size());
      Runtime rt;
      ReplayStrategy strategy(token.schedule);
      RunLimits limits;
      limits.max_steps = token.schedule.size() + 1;
      limits.record_trace = true;
      Outcome out = rt.execute(*program, strategy, limits);
      if (!replay_json)
        for (const auto& t : rt.trace())
          fmt::print("#{:<5} {}: {}{}\n", t.step, t.who, t.what, t.where.empty() ? "" : fmt::format("  ({})", t.where));
      // A schedule that names an agent the protocol does not have (the search's own "pruned"
      // stop included), or that the execution does not follow, does not fit the protocol.
      if (out.verdict == Verdict::pruned || (out.verdict != Verdict::diverged && !strategy.finished())) {
        out.verdict = Verdict::diverged;
        out.message = fmt::format("the execution ended after {} steps but the token records {}", out.steps,
                                  token.schedule.size());
      }
      if (out.verdict == Verdict::diverged)
        return usage_error(fmt::format("the token does not fit {} {}: {} (a token of another shape or protocol, or "
                                       "protocol code that does not repeat itself)",
                                       token.protocol, shape_line(program->options()), out.message));
      if (replay_json) {
        nlohmann::json j = {{"protocol", token.protocol},
                            {"options", program->options()},
                            {"verdict", out.verdict == Verdict::completed ? "ok" : "bug"},
                            {"kind", out.verdict == Verdict::completed ? nlohmann::json() : nlohmann::json(to_string(out.verdict))},
                            {"cause", out.message},
                            {"details", out.details},
                            {"steps", out.steps},
                            {"replay", encode_token(token)}};
        j["counterexample"] = nlohmann::json::parse(counterexample_json(
            visual_input(*program, token.schedule, fmt::format("{} {} (replay)", token.protocol, shape_line(program->options())),
                         encode_token(token))));
        fmt::print("{}\n", j.dump(2));
        (void)replay_visuals.write(*program, token.schedule,
                                   fmt::format("{} {} (replay)", token.protocol, shape_line(program->options())),
                                   encode_token(token));
        return out.verdict == Verdict::completed ? kExitOk : kExitBug;
      }
      const int code = report(token.protocol, *program, out, true);
      if (out.verdict != Verdict::diverged &&
          !replay_visuals.write(*program, token.schedule,
                                fmt::format("{} {} (replay)", token.protocol, shape_line(program->options())),
                                encode_token(token)))
        return code == kExitOk ? kExitUsage : code;
      return code;
    }
  } catch (const ShapeError& e) {
    return usage_error(e.what());
  } catch (const ShardError& e) {
    return usage_error(e.what());
  } catch (const MergeError& e) {
    return usage_error(e.what());
  } catch (const ProgramError& e) {
    return usage_error(e.what());
  } catch (const SearchTooLarge& e) {
    return usage_error(e.what());
  }
  return kExitUsage;
}
}  // namespace

std::vector<ProtocolEntry> bundled_entries() {
  std::vector<ProtocolEntry> out;
  for (const auto& info : bundled_protocols())
    out.push_back({info, [name = info.name](const std::map<std::string, std::string>& options) {
                     return make_protocol(name, options);
                   }});
  return out;
}

int main(int argc, char** argv, const std::vector<ProtocolEntry>& protocols) {
  install_process_handlers();
  const Registry registry(protocols);
  const int code = run_cli(argc, argv, registry);
  // The result is on stdout: if it could not be written (a full disk, a closed pipe), say so.
  return flush_stdout() ? code : kExitUsage;
}

}  // namespace mbcheck::sim::cli
