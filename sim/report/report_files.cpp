// The pages of a CheckResult and the files the command line's --html, --trace and --sarif
// name, written from one replay of the counterexample.
#include <fmt/format.h>
#include <unistd.h>

#include "sim/report.hpp"
#include "sim/support/atomic_file.hpp"

#ifndef MBCHECK_VERSION
#define MBCHECK_VERSION "unknown"
#endif

namespace mbcheck::sim {

const char* const kMbcheckVersion = MBCHECK_VERSION;

VisualInput visual_input(Program& program, const CheckResult& result) {
  const ProtocolId& p = result.protocol;
  const std::string title = p.options.empty() ? p.name : fmt::format("{} {}", p.name, shape_line(p.options));
  return visual_input(program, result.counterexample.value().schedule, title, replay_token(result));
}

std::string html_page(Program& program, const CheckResult& result) {
  return result.counterexample ? html_timeline(visual_input(program, result)) : "";
}

std::string trace_json(Program& program, const CheckResult& result) {
  return result.counterexample ? chrome_trace_json(visual_input(program, result)) : "";
}

std::string sarif_log(Program& program, const CheckResult& result, const std::string& source_root) {
  if (!result.counterexample) return sarif_json(nullptr, kMbcheckVersion, source_root);
  const VisualInput in = visual_input(program, result);
  return sarif_json(&in, kMbcheckVersion, source_root);
}

namespace {
// Through a temporary name of this process's own in the same directory.
std::optional<std::string> write_whole(const std::string& path, const std::string& text) {
  return write_file_atomically(path, fmt::format("{}.{}.tmp", path, ::getpid()), text);
}
}  // namespace

std::optional<std::string> ReportFiles::write(const VisualInput& in) const {
  if (!html.empty())
    if (auto error = write_whole(html, html_timeline(in))) return error;
  if (!trace.empty())
    if (auto error = write_whole(trace, chrome_trace_json(in))) return error;
  if (!sarif.empty())
    return write_whole(sarif, sarif_json(in.verdict == "ok" ? nullptr : &in, tool_version, source_root));
  return std::nullopt;
}

std::optional<std::string> ReportFiles::write_no_result() const {
  if (sarif.empty()) return std::nullopt;
  return write_whole(sarif, sarif_json(nullptr, tool_version, source_root));
}

std::optional<std::string> write_reports(Program& program, const CheckResult& result, const ReportFiles& files) {
  if (!result.counterexample) return files.write_no_result();
  if (!files.wanted()) return std::nullopt;
  return files.write(visual_input(program, result));
}

}  // namespace mbcheck::sim
