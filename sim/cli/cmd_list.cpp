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
    print_out("{}\n", all.dump(2));
    return kExitOk;
  }
  for (const auto& p : registry.infos()) {
    print_out("{}\n  {}\n  shape flags:\n", p.name, p.summary);
    for (const auto& o : p.options) print_out("    --{:<18} {} (default {})\n", o.name, o.help, o.default_value);
    print_out("  mutations:");
    for (const auto& m : p.mutations) print_out(" {}", m);
    print_out("\n");
  }
  return kExitOk;
}

}  // namespace mbcheck::sim::cli
