// --on-misuse, a shape option of every protocol (bundled or a user's): `stop` (the default)
// reports a misuse where it happens; `continue` answers the misuses the hardware answers as it
// does (LaunchShape::on_misuse, sim/runtime/misuse.cpp) and goes on to their consequence. It
// wraps the protocol's program, so a replay token that records on-misuse=continue replays in
// that mode whatever the protocol.
#include <fmt/format.h>

#include "sim/cli/commands.hpp"

namespace mbcheck::sim::cli {

namespace {

class ProceedingProgram final : public CliProgram {
 public:
  explicit ProceedingProgram(std::unique_ptr<CliProgram> inner) : inner_(std::move(inner)) {}
  LaunchShape shape() const override {
    LaunchShape s = inner_->shape();
    s.on_misuse = OnMisuse::proceed;
    return s;
  }
  void reset() override { inner_->reset(); }
  void thread_main() override { inner_->thread_main(); }
  std::optional<std::string> check_result() override { return inner_->check_result(); }
  std::map<std::string, std::string> options() const override {
    auto o = inner_->options();
    o[kOnMisuseOption] = "continue";
    return o;
  }
  std::string result_summary() const override { return inner_->result_summary(); }

 private:
  std::unique_ptr<CliProgram> inner_;
};

}  // namespace

OptionInfo on_misuse_option() {
  return {kOnMisuseOption, "stop",
          "at a misuse the hardware answers (missing-wait, phase-aliasing): stop and report it, or "
          "continue as the hardware does and report the deadlock, race or wrong result it leads to"};
}

std::unique_ptr<CliProgram> make_with_on_misuse(
    const std::function<std::unique_ptr<CliProgram>(const std::map<std::string, std::string>&)>& make,
    std::map<std::string, std::string> options) {
  bool proceed = false;
  if (auto it = options.find(kOnMisuseOption); it != options.end()) {
    if (it->second != "stop" && it->second != "continue")
      throw ShapeError(fmt::format("--{} {}: one of stop, continue", kOnMisuseOption, it->second.substr(0, 40)));
    proceed = it->second == "continue";
    options.erase(it);
  }
  auto program = make(options);
  if (!proceed) return program;
  return std::make_unique<ProceedingProgram>(std::move(program));
}

}  // namespace mbcheck::sim::cli
