// The command line's shared pieces: exit codes, flag validators, shape flags, the progress
// line, output files (--html, --trace) and stdout, and the process-wide handlers (out of
// memory, SIGINT/SIGTERM) with the memory limit. The subcommands are in sim/cli/cmd_*.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/check.hpp"
#include "sim/protocols/protocols.hpp"
#include "sim/report.hpp"

namespace mbcheck::sim::cli {

// Exit codes: 0 verified (no bug), 1 a bug in the protocol, 2 usage or input error, 3
// incomplete (a limit or an interrupt cut the search short).
constexpr int kExitOk = 0, kExitBug = 1, kExitUsage = 2, kExitIncomplete = 3;

// One line on stderr ("mbcheck: error: ..."), exit code 2.
int usage_error(const std::string& message);

extern const CLI::Validator kWholeNumber;  // a count or a seed: digits only, below 2^64
extern const CLI::Validator kSeconds;      // a finite number of seconds in [0, 1e9]

// Every shape flag of every protocol, on one subcommand; one of another protocol than the
// one given is refused (foreign_shape_flag). --help with a protocol shows only its own.
struct ShapeFlags {
  std::map<std::string, std::string> values;
  std::map<std::string, CLI::Option*> options;
  void add_to(CLI::App* cmd, const std::vector<ProtocolInfo>& protocols) {
    std::map<std::string, std::string> owners;  // flag -> the protocols that have it
    for (const auto& p : protocols)
      for (const auto& o : p.options) owners[o.name] += (owners[o.name].empty() ? "" : ", ") + p.name;
    const std::string group = fmt::format("Shape flags (`{} {} PROTOCOL --help` shows one protocol's)",
                                          cmd->get_parent()->get_name(), cmd->get_name());
    for (const auto& [name, of] : owners)
      options[name] = cmd->add_option("--" + name, values[name], "shape flag of " + of)->group(group);
  }
  // For --help with a protocol: its own flags, with their meaning and default; no others.
  void describe_for(const ProtocolInfo& protocol) {
    for (auto& [name, opt] : options) opt->group("");
    for (const auto& o : protocol.options) {
      std::string text = fmt::format("{} (default {})", o.help, o.default_value);
      if (o.name == "mutation" && !protocol.mutations.empty())
        text += fmt::format("; one of: none, {}", fmt::join(protocol.mutations, ", "));
      options.at(o.name)->description(text)->group(fmt::format("Shape flags of {}", protocol.name));
    }
  }
  std::map<std::string, std::string> given() const {
    std::map<std::string, std::string> out;
    for (const auto& [name, opt] : options)
      if (opt->count() > 0) out[name] = values.at(name);
    return out;
  }
};

// Flag errors in the user's words (sim/cli/flag_errors.cpp). After a CLI11 parse error: the
// first flag in argv that the subcommand and protocol given do not know (with the nearest
// known one) or that lacks its value; nullopt if CLI11's own message is the one to show.
std::optional<std::string> explain_parse_error(const CLI::App& app, int argc, char** argv,
                                               const std::vector<ProtocolInfo>& protocols);
// "unknown flag --stage for 'check epi-load'; did you mean --stages?" (`cmd` null: top level).
std::string unknown_flag_message(const CLI::App& app, const CLI::App* cmd, const std::string& flag,
                                 const std::string& protocol, const std::vector<ProtocolInfo>& protocols);
// After parsing: a shape flag given that belongs to another protocol than `protocol`.
std::optional<std::string> foreign_shape_flag(const CLI::App& app, const CLI::App& cmd, const std::string& protocol,
                                              const std::map<std::string, std::string>& given,
                                              const std::vector<ProtocolInfo>& protocols);

// Prints one execution's result (the replay token of a correct one only if asked); returns
// the exit code.
int report(const std::string& protocol, CliProgram& program, const Outcome& out, bool print_token_always = false);

// The fields --json shares between every strategy: what was checked, the verdict, and the
// counterexample (schema: sim/output.schema.json).
nlohmann::json result_json(const std::string& protocol, CliProgram& program, const std::string& strategy,
                           CheckVerdict verdict, const std::optional<Counterexample>& cex, const std::string& token);

// A progress line on stderr, rewritten in place: only on a terminal, only after a second.
struct Progress {
  bool enabled = false;
  bool shown = false;
  void line(double seconds, const std::string& text) {
    if (!enabled || seconds < 1.0) return;
    fmt::print(stderr, "\r\033[K{}", text);
    std::fflush(stderr);
    shown = true;
  }
  void clear() {
    if (shown) fmt::print(stderr, "\r\033[K");
    shown = false;
  }
};

// Checks before a search that `path` can be written: the file the write goes through is
// created and removed. If not, one line on stderr naming `flag` and `path`, and false.
bool check_output_path(const std::string& flag, const std::string& path);

// --html / --trace / --sarif: the flags of ReportFiles (sim/report.hpp), which writes them.
struct VisualFiles : ReportFiles {
  CLI::Option* html_opt = nullptr;
  CLI::Option* trace_opt = nullptr;
  CLI::Option* sarif_opt = nullptr;
  void add_to(CLI::App* cmd) {
    sarif_opt = cmd->add_option("--sarif", sarif, "write the result as SARIF 2.1.0 (code-scanning views)");
    cmd->add_option("--source-root", source_root,
                    "--sarif: paths relative to this directory (uriBaseId SRCROOT; default: the repository "
                    "holding the source file)")
        ->check(CLI::ExistingDirectory);
    html_opt = cmd->add_option("--html", html, "write the execution as a self-contained HTML timeline");
    trace_opt = cmd->add_option("--trace", trace,
                                "write the execution as Chrome trace-event JSON (Perfetto, chrome://tracing)");
  }
  // Before the search: every path given can be written (one line on stderr and false if not).
  bool check_paths() const {
    return (html_opt->count() == 0 || check_output_path("--html", html)) &&
           (trace_opt->count() == 0 || check_output_path("--trace", trace)) &&
           (sarif_opt->count() == 0 || check_output_path("--sarif", sarif));
  }
  // Returns false (after one line on stderr) when a file cannot be written.
  bool write(Program& program, const std::vector<AgentId>& schedule, const std::string& title,
             const std::string& token) const {
    if (!wanted()) return true;
    return write(visual_input(program, schedule, title, token));
  }
  bool write(const VisualInput& in) const { return written(ReportFiles::write(in)); }
  // A run with no bug: --sarif gets a file with no results (the pictures need an execution).
  bool write_no_result() const { return written(ReportFiles::write_no_result()); }
  static bool written(const std::optional<std::string>& error) {
    if (error) fmt::print(stderr, "mbcheck: error: {}\n", *error);
    return !error;
  }
};

// The process-wide handlers: out of memory (one line, exit 2, also where nothing may throw)
// and SIGINT/SIGTERM (the first asks for a clean stop: request_stop(); a second exits).
void install_process_handlers();
// --memory-limit (GiB; 0: 90% of physical memory), as RLIMIT_AS. Returns the limit in bytes.
std::uint64_t apply_memory_limit(double gib);
// The result on stdout. fmt::print throws on a failed write (a full disk), which ended the
// process with std::terminate mid-report; these keep the first error instead, for
// flush_stdout() to report once, so that the --sarif/--html files are still written.
void write_stdout(std::string_view text);
template <typename... T>
void print_out(fmt::format_string<T...> format, T&&... args) {
  write_stdout(fmt::format(format, std::forward<T>(args)...));
}
// Flushes stdout; a write error (a full disk, a closed pipe), now or before, is reported
// (one line on stderr, once): false.
bool flush_stdout();

}  // namespace mbcheck::sim::cli
