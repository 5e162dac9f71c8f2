// The mbcheck command line as a library: a binary of one's own that registers its protocols
// is a complete mbcheck (list, check, run, replay, merge with every flag, its own shape
// flags, tokens, --json, --html, --trace, fuzzing, shards). The bundled CLI is this over the
// bundled protocols (sim/cli/main.cpp): one code path.
//
//   int main(int argc, char** argv) {
//     return mbcheck::sim::cli::main(argc, argv, {{my_info, [](const auto& opts) { return make_mine(opts); }}});
//   }
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/protocols/protocols.hpp"

namespace mbcheck::sim::cli {

// One protocol on the command line: its name, summary, shape flags (with defaults) and
// mutations, and how to build it from the flags given (throw ShapeError for a bad value).
struct ProtocolEntry {
  ProtocolInfo info;
  std::function<std::unique_ptr<CliProgram>(const std::map<std::string, std::string>& options)> make;
};

// The bundled protocols (sim/protocols/protocols.hpp) as entries.
std::vector<ProtocolEntry> bundled_entries();

// Runs the command line over `protocols`; returns the exit code (0 verified, 1 bug, 2 usage
// or input error, 3 incomplete).
int main(int argc, char** argv, const std::vector<ProtocolEntry>& protocols);

}  // namespace mbcheck::sim::cli
