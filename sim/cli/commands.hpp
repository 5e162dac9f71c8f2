// The subcommands of the mbcheck command line, one type each (one file each: cmd_*.cpp):
// add() declares its flags on the CLI11 app, validate() refuses what does not apply (a flag
// that does not apply is an error, never silently ignored), run() does the work and returns
// the exit code (sim/cli/cli_support.hpp: 0 verified/ok, 1 bug, 2 usage, 3 incomplete).
// cli.cpp parses and hands over to the one that was asked for.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/check.hpp"
#include "sim/cli.hpp"
#include "sim/cli/cli_support.hpp"
#include "sim/fuzz.hpp"

namespace mbcheck::sim::cli {

// Steps one execution may take, for every command (check, fuzzing and run alike).
inline constexpr std::uint64_t kDefaultMaxSteps = 10'000'000;

// The protocols this command line knows, each with the options every protocol has.
class Registry {
 public:
  explicit Registry(const std::vector<ProtocolEntry>& entries);
  std::vector<ProtocolInfo> infos() const;
  // Throws ShapeError naming the known protocols.
  std::unique_ptr<CliProgram> make(const std::string& name, const std::map<std::string, std::string>& options) const;

 private:
  std::vector<ProtocolEntry> entries_;
};

struct ListCommand {
  CLI::App* app = nullptr;
  bool json = false;
  void add(CLI::App& parent);
  int run(const Registry& registry) const;
};

struct CheckCommand {
  CLI::App* app = nullptr;
  std::string protocol, strategy = "dpor";
  CheckOptions search;
  FuzzOptions fuzzing;
  bool json = false, keep_original = false, no_shrink = false, quiet = false;
  ShapeFlags flags;
  VisualFiles visuals;
  std::string shard_spec, shard_dir;
  unsigned shard_i = 1, shard_n = 1;  // --shard i/n, once validated
  CLI::Option *runs_opt = nullptr, *seed_opt = nullptr, *depth_opt = nullptr, *keep_opt = nullptr,
              *no_shrink_opt = nullptr, *shard_opt = nullptr, *shard_dir_opt = nullptr, *preemptions_opt = nullptr,
              *max_exec_opt = nullptr;
  void add(CLI::App& parent, const Registry& registry);
  int validate();  // after parsing: 0, or the usage error's exit code
  int run(const Registry& registry);

 private:
  bool fuzz_strategy() const { return strategy == "random" || strategy == "pct"; }
  int parse_shard();
  int run_fuzz(const Registry& registry);
  int run_search(const Registry& registry);
  int setup_shard_dir(const CliProgram& program);
  // --html / --trace / --sarif after a search or a fuzzing campaign: the counterexample's
  // execution, or (no counterexample) a SARIF file with no results.
  void write_files(CliProgram& program, const std::optional<Counterexample>& counterexample,
                   const std::string& token) const;
};

struct RunCommand {
  CLI::App* app = nullptr;
  std::string protocol;
  std::uint64_t seed = 1, max_steps = kDefaultMaxSteps;
  double time_limit_s = 0;
  bool token = false;
  ShapeFlags flags;
  VisualFiles visuals;
  void add(CLI::App& parent, const Registry& registry);
  int run(const Registry& registry);
};

struct ReplayCommand {
  CLI::App* app = nullptr;
  std::string token_text, token_file;
  CLI::Option *token_opt = nullptr, *file_opt = nullptr;
  VisualFiles visuals;
  bool json = false;
  void add(CLI::App& parent);
  int run(const Registry& registry);

 private:
  int read_token_file();
};

struct MergeCommand {
  CLI::App* app = nullptr;
  std::vector<std::string> files;
  bool json = false;
  void add(CLI::App& parent);
  int run() const;
};

// The protocol a command runs, with the crash reporter set to name its schedules (a crash,
// a stack overflow or the watchdog prints a replay token of this protocol and options).
std::unique_ptr<CliProgram> make_reported(const Registry& registry, const std::string& protocol,
                                          const std::map<std::string, std::string>& options);

// --shard auto (or auto/N) from the batch scheduler's environment: "i/n", or "" with `why`.
std::string resolve_shard_spec(const std::string& spec, std::string* why);

}  // namespace mbcheck::sim::cli
