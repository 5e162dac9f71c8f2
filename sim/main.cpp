// mbcheck: the command line.
//   mbcheck list
//   mbcheck check <protocol> [shape flags] [--strategy dpor|bounded] ...   explore every schedule
//   mbcheck run <protocol> [shape flags] [--seed N]     one execution under a seeded random schedule
//   mbcheck replay TOKEN | --replay-file FILE           that execution again, with its full trace
// Exit codes: 0 no bug (verified), 1 bug found, 2 usage error, 3 incomplete.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/check.hpp"
#include "sim/protocols.hpp"
#include "sim/replay_token.hpp"
#include "sim/runtime.hpp"
#include "sim/strategy.hpp"

using namespace mbcheck::sim;

namespace {

constexpr int kExitOk = 0, kExitBug = 1, kExitUsage = 2, kExitIncomplete = 3;

// Every shape flag of every bundled protocol, on one subcommand; the protocol rejects those
// it does not have.
struct ShapeFlags {
  std::map<std::string, std::string> values;
  std::map<std::string, CLI::Option*> options;
  void add_to(CLI::App* cmd) {
    std::set<std::string> names;
    for (const auto& p : bundled_protocols())
      for (const auto& o : p.options) names.insert(o.name);
    for (const auto& name : names) options[name] = cmd->add_option("--" + name, values[name], "shape flag (see list)");
  }
  std::map<std::string, std::string> given() const {
    std::map<std::string, std::string> out;
    for (const auto& [name, opt] : options)
      if (opt->count() > 0) out[name] = values.at(name);
    return out;
  }
};

int usage_error(const std::string& message) {
  fmt::print(stderr, "mbcheck: error: {}\n", message);
  return kExitUsage;
}

std::string shape_line(const std::map<std::string, std::string>& options) {
  std::string out;
  for (const auto& [k, v] : options) out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v);
  return out;
}

// Prints one execution's result; returns the exit code.
int report(const std::string& protocol, BundledProgram& program, const Outcome& out) {
  if (out.verdict == Verdict::completed) {
    fmt::print("verdict: ok: {}\n", program.result_summary());
  } else {
    fmt::print("verdict: bug: {}\n", to_string(out.verdict));
    fmt::print("cause:   {}\n", out.message);
    for (const auto& d : out.details) fmt::print("         {}\n", d);
  }
  fmt::print("steps:   {}\n", out.steps);
  fmt::print("replay:  {}\n", encode_token({protocol, program.options(), out.schedule}));
  return out.verdict == Verdict::completed ? kExitOk : kExitBug;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mbcheck: a simulator and model checker for GPU mbarrier pipelines"};
  app.require_subcommand(1);

  auto* list = app.add_subcommand("list", "list the bundled protocols, their shape flags and mutations");

  auto* check = app.add_subcommand("check", "explore every distinct schedule of a protocol (or a bounded part)");
  std::string check_protocol, strategy_name = "dpor";
  CheckOptions check_opts;
  bool json = false;
  ShapeFlags check_flags;
  check->add_option("protocol", check_protocol, "a bundled protocol (see `mbcheck list`)")->required();
  check->add_option("--strategy", strategy_name, "dpor (every class of schedules) or bounded (DPOR up to --preemptions)")
      ->check(CLI::IsMember({"dpor", "bounded"}))
      ->capture_default_str();
  check->add_option("--preemptions", check_opts.preemptions, "preemption bound for --strategy bounded")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  check->add_option("--max-executions", check_opts.max_executions, "stop after this many executions (0: no limit)");
  check->add_option("--time-limit", check_opts.time_limit_s, "stop after this many seconds (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  check->add_option("--max-steps", check_opts.max_steps, "steps per execution before it counts as a step-limit bug")
      ->capture_default_str();
  check->add_flag("--json", json, "print one JSON object instead of text");
  check_flags.add_to(check);

  auto* run = app.add_subcommand("run", "run one execution of a protocol under a seeded random schedule");
  std::string protocol;
  std::uint64_t seed = 1;
  std::uint64_t max_steps = 10'000'000;
  run->add_option("protocol", protocol, "a bundled protocol (see `mbcheck list`)")->required();
  run->add_option("--seed", seed, "seed of the random schedule")->capture_default_str();
  run->add_option("--max-steps", max_steps, "give up after this many steps")->capture_default_str();
  ShapeFlags run_flags;
  run_flags.add_to(run);

  auto* replay = app.add_subcommand("replay", "replay an execution from its token, printing every step");
  std::string token_text, token_file;
  auto* token_opt = replay->add_option("token", token_text, "a replay token printed by run");
  auto* file_opt = replay->add_option("--replay-file", token_file, "read the token from this file");
  token_opt->excludes(file_opt);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }

  try {
    if (*list) {
      for (const auto& p : bundled_protocols()) {
        fmt::print("{}\n  {}\n  shape flags:\n", p.name, p.summary);
        for (const auto& o : p.options) fmt::print("    --{:<18} {} (default {})\n", o.name, o.help, o.default_value);
        fmt::print("  mutations:");
        for (const auto& m : p.mutations) fmt::print(" {}", m);
        fmt::print("\n");
      }
      return kExitOk;
    }

    if (*check) {
      auto program = make_protocol(check_protocol, check_flags.given());
      check_opts.strategy = strategy_name == "bounded" ? CheckStrategy::bounded : CheckStrategy::dpor;
      if (!json)
        fmt::print("mbcheck check {}  {}  strategy={}{}\n", check_protocol, shape_line(program->options()), strategy_name,
                   strategy_name == "bounded" ? fmt::format(" preemptions={}", check_opts.preemptions) : "");
      std::fflush(stdout);
      CheckResult result = check_program(*program, check_opts);
      std::string token;
      if (result.counterexample)
        token = encode_token({check_protocol, program->options(), result.counterexample->schedule});
      if (json) {
        nlohmann::json j;
        const ExploreStats& s = result.stats;
        j["protocol"] = check_protocol;
        j["options"] = program->options();
        j["strategy"] = strategy_name;
        j["verdict"] = to_string(result.verdict);
        j["kind"] = result.counterexample ? nlohmann::json(to_string(result.counterexample->kind)) : nlohmann::json();
        j["executions"] = s.executions;
        j["blocked"] = s.blocked;
        j["redundant"] = s.redundant;
        j["transitions"] = s.transitions;
        j["seconds"] = s.seconds;
        j["complete"] = s.complete;
        if (result.preemption_bound >= 0) {
          j["preemption_bound"] = result.preemption_bound;
          j["beyond_bound"] = s.bound_cut;
        }
        j["replay"] = token.empty() ? nlohmann::json() : nlohmann::json(token);
        if (const auto& c = result.counterexample) {
          j["cause"] = c->cause;
          j["details"] = c->details;
          if (c->misuse) j["misuse"] = std::string(to_string(*c->misuse));
          j["steps"] = c->steps;
          j["timeline"] = c->timeline;
        }
        fmt::print("{}\n", j.dump(2));
      } else {
        fmt::print("{}", format_report(result, token));
      }
      switch (result.verdict) {
        case CheckVerdict::verified: return kExitOk;
        case CheckVerdict::bug: return kExitBug;
        case CheckVerdict::incomplete: return kExitIncomplete;
      }
    }

    if (*run) {
      auto program = make_protocol(protocol, run_flags.given());
      fmt::print("mbcheck run {}  {}  seed={}\n", protocol, shape_line(program->options()), seed);
      Runtime rt;
      RandomStrategy strategy(seed);
      RunLimits limits;
      limits.max_steps = max_steps;
      Outcome out = rt.execute(*program, strategy, limits);
      return report(protocol, *program, out);
    }

    if (*replay) {
      if (token_opt->count() == 0 && file_opt->count() == 0)
        return usage_error("replay needs a TOKEN or --replay-file FILE");
      if (file_opt->count() > 0) {
        std::ifstream in(token_file);
        if (!in) return usage_error(fmt::format("cannot read --replay-file {}", token_file));
        std::stringstream ss;
        ss << in.rdbuf();
        token_text = ss.str();
      }
      ReplayToken token;
      try {
        token = decode_token(token_text);
      } catch (const TokenError& e) {
        return usage_error(fmt::format("malformed replay token: {}", e.what()));
      }
      auto program = make_protocol(token.protocol, token.options);
      fmt::print("mbcheck replay {}  {}  ({} steps recorded)\n", token.protocol, shape_line(program->options()),
                 token.schedule.size());
      Runtime rt;
      ReplayStrategy strategy(token.schedule);
      RunLimits limits;
      limits.max_steps = token.schedule.size() + 1;
      limits.record_trace = true;
      Outcome out = rt.execute(*program, strategy, limits);
      for (const auto& t : rt.trace()) fmt::print("#{:<5} {}: {}\n", t.step, t.who, t.what);
      if (out.verdict != Verdict::diverged && !strategy.finished()) {
        out.verdict = Verdict::diverged;
        out.message = fmt::format("the execution ended after {} steps but the token records {}", out.steps,
                                  token.schedule.size());
      }
      return report(token.protocol, *program, out);
    }
  } catch (const ShapeError& e) {
    return usage_error(e.what());
  }
  return kExitUsage;
}
