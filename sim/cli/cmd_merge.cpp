// mbcheck merge FILE...: the --json results of the shards of one search, as one verdict.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/explore/merge.hpp"

namespace mbcheck::sim::cli {

void MergeCommand::add(CLI::App& parent) {
  app = parent.add_subcommand("merge", "combine the --json results of the shards of one search into one verdict");
  app->add_option("results", files, "one `check --shard ... --json` output file per shard")->required();
  app->add_flag("--json", json, "print one JSON object instead of text");
}

int MergeCommand::run() const {
  std::vector<ShardInput> inputs;
  for (const auto& file : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) return usage_error(fmt::format("{}: not a file", file));
    std::ifstream in(file);
    if (!in) return usage_error(fmt::format("cannot read {}", file));
    try {
      inputs.push_back({file, nlohmann::json::parse(in)});
    } catch (const nlohmann::json::exception& e) {
      return usage_error(fmt::format("{} is not a check --json result: {}", file, e.what()));
    }
  }
  const MergedResult m = merge_shard_results(inputs);
  const int code = m.verdict == "verified" ? kExitOk : m.verdict == "bug" ? kExitBug : kExitIncomplete;
  if (json) {
    nlohmann::json j = {{"protocol", m.protocol},
                        {"options", inputs.front().json.at("options")},
                        {"strategy", inputs.front().json.at("strategy")},
                        {"verdict", m.verdict},
                        {"kind", m.kind.empty() ? nlohmann::json() : nlohmann::json(m.kind)},
                        {"replay", m.replay.empty() ? nlohmann::json() : nlohmann::json(m.replay)},
                        {"executions", m.executions},
                        {"transitions", m.transitions},
                        {"blocked", m.blocked},
                        {"redundant", m.redundant},
                        {"shards", inputs.size()},
                        {"own_executions_total", m.own_total}};
    print_out("{}\n", j.dump(2));
    return code;
  }
  const std::string strategy = inputs.front().json.value("strategy", "");
  if (strategy == "random" || strategy == "pct")
    print_out(
        "merged {} shard results of mbcheck check {}: runs by each: {} (the bug of the lowest run index "
        "is the campaign's)\n",
        inputs.size(), m.protocol, m.shares);
  else
    print_out(
        "merged {} shard results of mbcheck check {}: executions run by each: {} ({} in all; the "
        "stretches between waves run in every shard)\n",
        inputs.size(), m.protocol, m.shares, m.own_total);
  if (m.verdict == "bug") print_out("replay:  {}\n", m.replay);
  // The verdict line of the unsharded search, without its time.
  print_out("{}{}: {} executions, {} transitions, {} blocked, {} redundant\n", m.verdict,
            m.verdict == "bug" ? fmt::format(": {}", m.kind) : "", m.executions, m.transitions, m.blocked, m.redundant);
  return code;
}

}  // namespace mbcheck::sim::cli
