// The mbcheck command line (sim/cli.hpp): parses, then hands over to the subcommand asked
// for (sim/cli/commands.hpp; one file each: cmd_list, cmd_check (+ _fuzz, _search), cmd_run,
// cmd_replay, cmd_merge).
//   mbcheck list
//   mbcheck check <protocol> [shape flags] [--strategy dpor|bounded|random|pct] ...
//   mbcheck run <protocol> [shape flags] [--seed N]     one execution under a seeded random schedule
//   mbcheck replay TOKEN | --replay-file FILE           that execution again, with its full trace
//   mbcheck merge FILE...                               the shards of one search, as one verdict
// Exit codes: 0 no bug (verified), 1 bug found, 2 usage error, 3 incomplete.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <sstream>
#include <tuple>

#include "sim/cli.hpp"
#include "sim/cli/cli_support.hpp"
#include "sim/cli/commands.hpp"
#include "sim/explore/merge.hpp"
#include "sim/protocols/protocols.hpp"
#include "sim/report/replay_token.hpp"
#include "sim/runtime/crash.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim::cli {

Registry::Registry(const std::vector<ProtocolEntry>& entries) : entries_(entries) {
  for (auto& e : entries_) {
    e.info.options.push_back(on_misuse_option());
    e.info.options.push_back(proxy_fences_option());
  }
}

std::vector<ProtocolInfo> Registry::infos() const {
  std::vector<ProtocolInfo> out;
  for (const auto& e : entries_) out.push_back(e.info);
  return out;
}

std::unique_ptr<CliProgram> Registry::make(const std::string& name,
                                           const std::map<std::string, std::string>& options) const {
  for (const auto& e : entries_)
    if (e.info.name == name) return make_with_modes(e.make, options);
  std::string known;
  for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.info.name;
  throw ShapeError(
      fmt::format("unknown protocol '{}' (known: {})", name.substr(0, 60) + (name.size() > 60 ? "..." : ""), known));
}

std::unique_ptr<CliProgram> make_reported(const Registry& registry, const std::string& protocol,
                                          const std::map<std::string, std::string>& options) {
  auto program = registry.make(protocol, options);
  install_crash_reporter(
      [protocol, shape = program->options()](const std::vector<AgentId>& s) {
        return encode_token_mb1({protocol, shape, s});  // its schedule part is written in mb1 form
      },
      encode_schedule_to);
  return program;
}

namespace {

// Help goes out through print_out, as every result does: a stdout that fails (a full disk) is
// then one error line with its cause, however long the help (CLI11's own std::cout write left
// no errno past stdio's buffer).
int print_help(CLI::App& app, const CLI::Error& e) {
  std::ostringstream out;
  const int code = app.exit(e, out);
  print_out("{}", out.str());
  return code;
}

// --stack-size on check, run and replay: one fiber stack size for the search, the shrinker
// and every replay of a counterexample.
void add_stack_size(std::initializer_list<CLI::App*> commands, std::size_t& stack_size) {
  static const CLI::Validator kStackSize(
      [](std::string& v) -> std::string {
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
          return "must be a number of bytes, got '" + v.substr(0, 40) + "'";
        if (v.size() > 9) return "must be at most 16 MiB (16777216)";
        const auto err = stack_size_error(std::stoull(v));
        return err ? *err : std::string();
      },
      "BYTES");
  for (CLI::App* cmd : commands)
    cmd->add_option("--stack-size", stack_size,
                    "fiber stack bytes per simulated thread (a multiple of the page size, 16 KiB to 16 MiB); "
                    "overflowing it is reported as a stack overflow")
        ->check(kStackSize)
        ->capture_default_str();
}

// --watchdog on check, run and replay: how long one thread may run protocol code without
// calling into mbcheck (an endless local loop) before the process ends with its report.
void add_watchdog(std::initializer_list<CLI::App*> commands, double& seconds) {
  for (CLI::App* cmd : commands)
    cmd->add_option("--watchdog", seconds,
                    "seconds one thread may run protocol code without a visible operation, load or store "
                    "before it is reported as stuck (exit 1; 0: no limit)")
        ->check(kSeconds)
        ->capture_default_str();
}

// check/run PROTOCOL --help: the protocol's summary, and its own shape flags with their
// defaults instead of every protocol's.
void describe_protocol(CLI::App& cmd, ShapeFlags& flags, const Registry& registry) {
  CLI::Option* positional = cmd.get_option("protocol");
  if (positional->results().empty()) return;
  for (const ProtocolInfo& info : registry.infos())
    if (info.name == positional->results().front()) {
      positional->description(fmt::format("{}: {}", info.name, info.summary));
      flags.describe_for(info);
    }
}

struct Commands {
  ListCommand list;
  CheckCommand check;
  RunCommand run;
  ReplayCommand replay;
  MergeCommand merge;
};

// Runs the subcommand that was parsed; the checker's own errors are usage errors.
int dispatch(Commands& c, const Registry& registry) {
  try {
    if (*c.list.app) return c.list.run(registry);
    if (*c.check.app) return c.check.run(registry);
    if (*c.run.app) return c.run.run(registry);
    if (*c.merge.app) return c.merge.run();
    if (*c.replay.app) return c.replay.run(registry);
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

int run_cli(int argc, char** argv, const Registry& registry) {
  // Named as it was called (a user's binary over its own protocols is not "mbcheck").
  CLI::App app{"mbcheck: a simulator and model checker for GPU mbarrier pipelines",
               argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "mbcheck"};
  double memory_limit_gib = 0;
  app.add_option("--memory-limit", memory_limit_gib,
                 "address-space limit in GiB (default: 90% of physical memory); beyond it, a clear error")
      ->check(CLI::Range(0.1, 1e6));
  app.fallthrough();  // --memory-limit also after the subcommand
  app.set_version_flag("--version", std::string("mbcheck ") + kMbcheckVersion);
  app.require_subcommand(1);
  Commands c;
  c.list.add(app);
  c.check.add(app, registry);
  c.run.add(app, registry);
  c.replay.add(app);
  std::size_t stack_size = default_stack_bytes();
  add_stack_size({c.check.app, c.run.app, c.replay.app}, stack_size);
  double watchdog_s = default_watchdog_seconds();
  add_watchdog({c.check.app, c.run.app, c.replay.app}, watchdog_s);
  c.merge.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    for (auto [cmd, flags] : {std::tie(c.check.app, c.check.flags), std::tie(c.run.app, c.run.flags)})
      if (*cmd) describe_protocol(*cmd, flags, registry);
    return print_help(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return print_help(app, e);
  } catch (const CLI::CallForVersion& e) {  // a request, not an error: stdout, exit 0
    print_out("{}\n", e.what());
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-')
      return usage_error(fmt::format("unknown subcommand '{}': one of list, check, run, replay, merge", argv[1]));
    return usage_error(explain_parse_error(app, argc, argv, registry.infos()).value_or(e.what()));
  }
  for (const auto& [cmd, flags, protocol] :
       {std::tie(c.check.app, c.check.flags, c.check.protocol), std::tie(c.run.app, c.run.flags, c.run.protocol)})
    if (*cmd)
      if (auto error = foreign_shape_flag(app, *cmd, protocol, flags.given(), registry.infos()))
        return usage_error(*error);
  if (*c.check.app)
    if (const int code = c.check.validate()) return code;
  set_default_stack_bytes(stack_size);
  set_default_watchdog_seconds(watchdog_s);
  c.check.search.memory_budget = apply_memory_limit(memory_limit_gib);
  return dispatch(c, registry);
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
