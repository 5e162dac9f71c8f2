// mbcheck list [--json]: the bundled (or registered) protocols, their shape flags and mutations.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"

namespace mbcheck::sim::cli {

void ListCommand::add(CLI::App& parent) {
  app = parent.add_subcommand("list", "list the protocols, their shape flags and mutations");
  app->add_flag("--json", json, "print one JSON array instead of text");
}

int ListCommand::run(const Registry& registry) const {
  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& p : registry.infos()) {
      nlohmann::json options = nlohmann::json::array();
      for (const auto& o : p.options)
        options.push_back({{"name", o.name}, {"default", o.default_value}, {"help", o.help}});
      all.push_back({{"name", p.name}, {"summary", p.summary}, {"options", options}, {"mutations", p.mutations}});
    }
    fmt::print("{}\n", all.dump(2));
    return kExitOk;
  }
  for (const auto& p : registry.infos()) {
    fmt::print("{}\n  {}\n  shape flags:\n", p.name, p.summary);
    for (const auto& o : p.options) fmt::print("    --{:<18} {} (default {})\n", o.name, o.help, o.default_value);
    fmt::print("  mutations:");
    for (const auto& m : p.mutations) fmt::print(" {}", m);
    fmt::print("\n");
  }
  return kExitOk;
}

}  // namespace mbcheck::sim::cli
