// mbcheck replay TOKEN | --replay-file FILE: the execution a token records, with every step.
// It runs once: the trace, the verdict, --json's counterexample and the --html / --trace /
// --sarif files all come from that one execution.
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/report.hpp"

namespace mbcheck::sim::cli {

void ReplayCommand::add(CLI::App& parent) {
  app = parent.add_subcommand("replay", "replay an execution from its token, printing every step");
  token_opt = app->add_option("token", token_text, "a replay token printed by run");
  file_opt = app->add_option("--replay-file", token_file, "read the token from this file");
  token_opt->excludes(file_opt);
  visuals.add_to(app);
  app->add_flag("--json", json, "print one JSON object (the verdict and every step) instead of text");
}

int ReplayCommand::read_token_file() {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(token_file, ec))
    return usage_error(fmt::format("--replay-file {}: not a file", token_file));
  std::ifstream in(token_file);
  if (!in) return usage_error(fmt::format("cannot read --replay-file {}", token_file));
  std::stringstream ss;
  ss << in.rdbuf();
  token_text = ss.str();
  while (!token_text.empty() && std::isspace(static_cast<unsigned char>(token_text.back()))) token_text.pop_back();
  return 0;
}

int ReplayCommand::run(const Registry& registry) {
  if (!visuals.check_paths()) return kExitUsage;
  if (token_opt->count() == 0 && file_opt->count() == 0)
    return usage_error("replay needs a TOKEN or --replay-file FILE");
  if (file_opt->count() > 0)
    if (const int code = read_token_file()) return code;
  ReplayToken token;
  try {
    token = decode_token(token_text);
  } catch (const TokenError& e) {
    return usage_error(fmt::format("malformed replay token: {}", e.what()));
  }
  // With the crash reporter's signal handlers: a crash replays as a crash verdict.
  auto program = make_reported(registry, token.protocol, token.options);
  const std::string title = fmt::format("{} {} (replay)", token.protocol, shape_line(program->options()));
  if (!json)
    print_out("mbcheck replay {}  {}  ({} steps recorded)\n", token.protocol, shape_line(program->options()),
              token.schedule.size());
  std::vector<TraceEntry> trace;
  // SIGINT/SIGTERM stop the replay itself (exit 3).
  Outcome out = replay(*program, token, &trace, &stop_flag());
  if (!json)
    for (const auto& t : trace)
      print_out("#{:<5} {}: {}{}\n", t.step, t.who, t.what, t.where.empty() ? "" : fmt::format("  ({})", t.where));
  // A token that does not fit (cut short, from before a fix, of another shape) is a result,
  // not a usage error: the steps that did fit were printed, then where it went elsewhere.
  const bool diverged = out.verdict == Verdict::diverged;
  const std::string encoded = encode_token(token);
  if (json) {
    nlohmann::json j = {
        {"protocol", token.protocol},
        {"options", program->options()},
        {"verdict", out.cut_short                       ? "incomplete"
                    : out.verdict == Verdict::completed ? "ok"
                    : diverged                          ? "diverged"
                                                        : "bug"},
        {"kind", out.verdict == Verdict::completed || out.cut_short ? nlohmann::json()
                                                                    : nlohmann::json(to_string(out.verdict))},
        {"cause", out.message},
        {"details", out.details},
        {"steps", out.steps},
        {"replay", encoded}};
    const VisualInput drawn = visual_input(out, std::move(trace), title, encoded);
    j["counterexample"] = nlohmann::json::parse(counterexample_json(drawn));
    print_out("{}\n", j.dump(2));
    if (visuals.wanted()) (void)visuals.write(drawn);
    return out.cut_short ? kExitIncomplete : out.verdict == Verdict::completed ? kExitOk : kExitBug;
  }
  if (diverged) {
    print_out("diverged: at step {}: {}\n", out.steps, out.message);
    return kExitBug;
  }
  const int code = report(token.protocol, *program, out, true);
  if (visuals.wanted() && !visuals.write(visual_input(out, std::move(trace), title, encoded)))
    return code == kExitOk ? kExitUsage : code;
  return code;
}

}  // namespace mbcheck::sim::cli
