// Flag errors in the user's words: CLI11 says "The following arguments were not expected: 3
// --stage"; this names the flag that is unknown for the subcommand and protocol given, with
// the nearest one they know, or the flag that lacks its value.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "sim/cli/cli_support.hpp"

namespace mbcheck::sim::cli {

namespace {

// Edit distance with adjacent transpositions ("--stgaes" is one edit from "--stages").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// "--x", "-x" or "--x=v"; "-1" is a value (a negative number for a flag to refuse).
bool looks_like_flag(const std::string& token) {
  return token.size() > 1 && token[0] == '-' && !std::isdigit(static_cast<unsigned char>(token[1])) && token[1] != '.';
}

const ProtocolInfo* find_protocol(const std::vector<ProtocolInfo>& protocols, const std::string& name) {
  for (const auto& p : protocols)
    if (p.name == name) return &p;
  return nullptr;
}

// Shape flags are registered for every protocol on one subcommand: one of another protocol
// than the one given is no flag of this command line.
bool is_foreign_shape_flag(const std::string& name, const ProtocolInfo* protocol,
                           const std::vector<ProtocolInfo>& protocols) {
  if (!protocol) return false;
  for (const auto& o : protocol->options)
    if (o.name == name) return false;
  for (const auto& p : protocols)
    for (const auto& o : p.options)
      if (o.name == name) return true;
  return false;
}

// The option `token` names on `cmd` (or on the top level), nullptr if none.
const CLI::Option* known_option(const CLI::App& app, const CLI::App* cmd, const std::string& name,
                                const ProtocolInfo* protocol, const std::vector<ProtocolInfo>& protocols) {
  if (name.rfind("--", 0) == 0 && is_foreign_shape_flag(name.substr(2), protocol, protocols)) return nullptr;
  if (cmd)
    if (const CLI::Option* opt = cmd->get_option_no_throw(name)) return opt;
  return app.get_option_no_throw(name);
}

// " for 'check epi-load'": the subcommand, and the protocol if it is one.
std::string where(const CLI::App* cmd, const std::string& protocol, const std::vector<ProtocolInfo>& protocols) {
  if (!cmd) return "";
  return fmt::format(" for '{}{}'", cmd->get_name(), find_protocol(protocols, protocol) ? " " + protocol : "");
}

}  // namespace

std::string unknown_flag_message(const CLI::App& app, const CLI::App* cmd, const std::string& flag,
                                 const std::string& protocol, const std::vector<ProtocolInfo>& protocols) {
  const ProtocolInfo* info = find_protocol(protocols, protocol);
  std::vector<std::string> known;
  for (const CLI::App* level : {cmd, &app}) {
    if (!level) continue;
    for (const CLI::Option* opt : level->get_options())
      for (const std::string& name : opt->get_lnames())
        if (!is_foreign_shape_flag(name, info, protocols)) known.push_back("--" + name);
  }
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& k : known)
    if (const std::size_t d = edit_distance(flag, k); d < best_distance) best = k, best_distance = d;
  // A suggestion only where it is near: a third of the name may differ (at least 2 edits).
  const std::size_t bare = flag.size() - std::min<std::size_t>(flag.find_first_not_of('-'), flag.size());
  if (!best.empty() && best_distance < bare && best_distance <= std::max<std::size_t>(2, bare / 3))
    return fmt::format("unknown flag {}{}; did you mean {}?", flag, where(cmd, protocol, protocols), best);
  return fmt::format("unknown flag {}{} (`{}{}{} --help` lists {} flags)", flag, where(cmd, protocol, protocols),
                     app.get_name(), cmd ? " " + cmd->get_name() : "", info ? " " + protocol : "", cmd ? "its" : "the");
}

std::optional<std::string> explain_parse_error(const CLI::App& app, int argc, char** argv,
                                               const std::vector<ProtocolInfo>& protocols) {
  const CLI::App* cmd = nullptr;
  std::string protocol;
  std::size_t positionals = 0, slots = 0;  // given after the subcommand, and how many it takes
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (token == "--") break;
    if (looks_like_flag(token)) {
      const std::string name = token.substr(0, token.find('='));
      const CLI::Option* opt = known_option(app, cmd, name, find_protocol(protocols, protocol), protocols);
      if (!opt) return unknown_flag_message(app, cmd, name, protocol, protocols);
      if (opt->get_items_expected_min() > 0 && name.size() == token.size()) {
        if (i + 1 >= argc || looks_like_flag(argv[i + 1])) return fmt::format("{} needs a value", name);
        ++i;  // its value
      }
      continue;
    }
    if (!cmd) {
      const auto found = app.get_subcommands([&](const CLI::App* c) { return c->check_name(token); });
      if (found.empty()) return std::nullopt;  // an unknown subcommand: said elsewhere
      cmd = found.front();
      for (const CLI::Option* opt : cmd->get_options([](const CLI::Option* o) { return o->get_positional(); }))
        slots += static_cast<std::size_t>(std::max(0, opt->get_items_expected_max()));
      continue;
    }
    if (++positionals > slots)
      return fmt::format("unexpected argument '{}'{}", token.substr(0, 60), where(cmd, protocol, protocols));
    if (protocol.empty() && cmd->get_option_no_throw("protocol")) protocol = token;
  }
  return std::nullopt;
}

std::optional<std::string> foreign_shape_flag(const CLI::App& app, const CLI::App& cmd, const std::string& protocol,
                                              const std::map<std::string, std::string>& given,
                                              const std::vector<ProtocolInfo>& protocols) {
  for (const auto& [name, value] : given)
    if (is_foreign_shape_flag(name, find_protocol(protocols, protocol), protocols))
      return unknown_flag_message(app, &cmd, "--" + name, protocol, protocols);
  return std::nullopt;
}

}  // namespace mbcheck::sim::cli
