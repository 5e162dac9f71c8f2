// Counterexamples for people to look at: a Chrome trace-event JSON file (opens in Perfetto
// or chrome://tracing) and a self-contained HTML timeline page (no network needed).
#pragma once

#include <string>
#include <vector>

#include "sim/check.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

struct VisualInput {
  std::string title;    // "epi-load stages=2 ..."
  std::string verdict;  // "deadlock", "race", ... or "ok"
  std::string cause;
  std::vector<std::string> details;
  std::vector<TraceEntry> trace;  // every step of the execution
  std::vector<AgentId> culprits;  // highlighted
  std::string replay_token;
};

// Replays `schedule` on `program` and fills the input for the writers below.
VisualInput visual_input(Program& program, const std::vector<AgentId>& schedule, const std::string& title,
                         const std::string& replay_token);
// The same from an execution already run with RunLimits::record_trace (its outcome and its
// runtime's trace): every output of one command draws on the one run.
VisualInput visual_input(const Outcome& out, std::vector<TraceEntry> trace, const std::string& title,
                         const std::string& replay_token);

std::string chrome_trace_json(const VisualInput& in);
// The counterexample as --json reports it (schema: sim/output.schema.json, "counterexample").
std::string counterexample_json(const VisualInput& in);
std::string html_timeline(const VisualInput& in);
// SARIF 2.1.0 for code-scanning views: the bug as one result at the failing step's source
// line, with the culprits' steps as its code flow; `in` null: a run with no result.
// Locations are relative to a source root, as code-scanning views map them (uriBaseId
// SRCROOT, with originalUriBaseIds giving the root): `source_root`, else the repository (the
// nearest directory holding .git) containing the first located file; a file outside the root
// keeps an absolute file:// URI.
std::string sarif_json(const VisualInput* in, const std::string& tool_version, const std::string& source_root = "");

}  // namespace mbcheck::sim
