// A CheckResult's replay token, the exact replay of its counterexample, and its pages (HTML
// timeline, Chrome trace, SARIF), from the library: what `mbcheck check` prints and writes
// for --html, --trace and --sarif, and what `mbcheck replay` runs, without a command line.
//
//   CheckOptions options;
//   options.protocol = {"handoff", program.options()};  // optional: as registered with cli::main
//   CheckResult r = check_program(program, options);
//   std::string token = replay_token(r);  // "mb2:handoff:consumers=3,...:<schedule>"
//   Outcome again = replay(program, token);  // the same verdict, cause and schedule
//   ReportFiles files;
//   files.html = "bug.html";  // and .trace, .sarif
//   if (auto error = write_reports(program, r, files)) std::cerr << *error << "\n";
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/check.hpp"
#include "sim/report/replay_token.hpp"  // ReplayToken, TokenError, encode_token, decode_token
#include "sim/report/visual.hpp"        // VisualInput, html_timeline, chrome_trace_json, sarif_json

namespace mbcheck::sim {

// The version SARIF names as the tool's ("0.2.0").
extern const char* const kMbcheckVersion;

// The counterexample's replay token, as `mbcheck check` prints it for the same protocol and
// shape (CheckResult::protocol); "" when the result has none.
std::string replay_token(const CheckResult& result);

// Re-runs the execution `token` records on `program`, step for step, and returns its outcome:
// the counterexample's verdict, cause, details and schedule. `trace`: every step, when given.
// The program is the caller's (the token's protocol name and shape are not compared with it);
// a token that does not fit it (another shape or protocol, cut short, from before a change
// to the protocol) ends as Verdict::diverged, its message saying where. `stop`: true ends
// the replay early (Outcome::cut_short). Throws TokenError for a malformed token.
Outcome replay(Program& program, const std::string& token, std::vector<TraceEntry>* trace = nullptr,
               const std::atomic<bool>* stop = nullptr);
Outcome replay(Program& program, const ReplayToken& token, std::vector<TraceEntry>* trace = nullptr,
               const std::atomic<bool>* stop = nullptr);

// The counterexample, replayed once, as the writers of sim/report/visual.hpp take it: titled
// with the protocol and its shape, carrying the replay token. Needs a counterexample.
VisualInput visual_input(Program& program, const CheckResult& result);

// The pages of one result, each from its own replay (write_reports replays once for all).
// html_page and trace_json are "" for a result without a counterexample; sarif_log is then a
// log with no results. SARIF paths are relative to `source_root` (sarif_json).
std::string html_page(Program& program, const CheckResult& result);
std::string trace_json(Program& program, const CheckResult& result);
std::string sarif_log(Program& program, const CheckResult& result, const std::string& source_root = "");

// The files of one execution (the command line's --html, --trace, --sarif, --source-root);
// an empty name is not written. Each file is written whole or not at all (a temporary file
// renamed over it).
struct ReportFiles {
  std::string html, trace, sarif;
  std::string source_root;  // SARIF paths relative to it ("": the repository of the source)
  std::string tool_version = kMbcheckVersion;
  bool wanted() const { return !html.empty() || !trace.empty() || !sarif.empty(); }
  // The first file that could not be written, and why; nothing when all were. An execution
  // that ended well ("ok") gives SARIF no result.
  std::optional<std::string> write(const VisualInput& in) const;
  // No execution to draw: only --sarif, with no results.
  std::optional<std::string> write_no_result() const;
};

// The result's files: its counterexample's pages, or for a result without one only the
// SARIF log with no results.
std::optional<std::string> write_reports(Program& program, const CheckResult& result, const ReportFiles& files);

}  // namespace mbcheck::sim
