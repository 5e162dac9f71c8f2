// The protocols bundled with mbcheck, built from command-line style options.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

// A shape or option the protocol cannot run with; the message says which and why.
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct OptionInfo {
  std::string name;  // flag name without dashes, e.g. "stages"
  std::string default_value;
  std::string help;
};

struct ProtocolInfo {
  std::string name;
  std::string summary;
  std::vector<OptionInfo> options;
  std::vector<std::string> mutations;  // values of the "mutation" option besides "none"
};

// A protocol of the command line (bundled, or a user's registered with cli::main): a Program
// that also says which shape it was built with and what its last result was.
class CliProgram : public Program {
 public:
  // The full option set (defaults filled in), as a replay token records it.
  virtual std::map<std::string, std::string> options() const = 0;
  // One line about the result of the last completed execution ("D matches ...").
  virtual std::string result_summary() const = 0;
};
using BundledProgram = CliProgram;  // its old name, kept for protocols written against it

// --on-misuse and --proxy-fences (sim/protocols/launch_modes.cpp): options every protocol has
// (bundled or a user's), taken out of the options before the protocol sees them.
inline constexpr const char* kOnMisuseOption = "on-misuse";
inline constexpr const char* kProxyFencesOption = "proxy-fences";
OptionInfo on_misuse_option();
OptionInfo proxy_fences_option();
// make(options without those), run as they say; ShapeError for a value not one of theirs.
std::unique_ptr<CliProgram> make_with_modes(
    const std::function<std::unique_ptr<CliProgram>(const std::map<std::string, std::string>&)>& make,
    std::map<std::string, std::string> options);

const std::vector<ProtocolInfo>& bundled_protocols();
// Throws ShapeError for an unknown protocol, unknown option, bad value or impossible shape.
std::unique_ptr<CliProgram> make_protocol(const std::string& name, const std::map<std::string, std::string>& options);

}  // namespace mbcheck::sim
