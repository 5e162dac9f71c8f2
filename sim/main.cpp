// mbcheck: the command line.
//   mbcheck list
//   mbcheck run <protocol> [shape flags] [--seed N]     one execution under a seeded random schedule
//   mbcheck replay TOKEN | --replay-file FILE           that execution again, with its full trace
// Exit codes: 0 no bug, 1 bug found, 2 usage error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "sim/protocols.hpp"
#include "sim/replay_token.hpp"
#include "sim/runtime.hpp"
#include "sim/strategy.hpp"

using namespace mbcheck::sim;

namespace {

constexpr int kExitOk = 0, kExitBug = 1, kExitUsage = 2;

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

  auto* run = app.add_subcommand("run", "run one execution of a protocol under a seeded random schedule");
  std::string protocol;
  std::uint64_t seed = 1;
  std::uint64_t max_steps = 10'000'000;
  run->add_option("protocol", protocol, "a bundled protocol (see `mbcheck list`)")->required();
  run->add_option("--seed", seed, "seed of the random schedule")->capture_default_str();
  run->add_option("--max-steps", max_steps, "give up after this many steps")->capture_default_str();
  // Every shape flag of every bundled protocol; the protocol rejects those it lacks.
  std::map<std::string, std::string> given;
  std::set<std::string> flag_names;
  for (const auto& p : bundled_protocols())
    for (const auto& o : p.options) flag_names.insert(o.name);
  std::map<std::string, CLI::Option*> flags;
  for (const auto& name : flag_names) flags[name] = run->add_option("--" + name, given[name], "shape flag (see list)");

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

    if (*run) {
      std::map<std::string, std::string> options;
      for (const auto& [name, opt] : flags)
        if (opt->count() > 0) options[name] = given[name];
      auto program = make_protocol(protocol, options);
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
      for (const auto& line : rt.trace()) fmt::print("{}\n", line);
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
