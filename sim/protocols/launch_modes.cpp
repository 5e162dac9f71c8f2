// Shape options every protocol has (bundled or a user's), which the command line takes out of
// the options before the protocol sees them:
//   --on-misuse stop|continue   `stop` (the default) reports a misuse where it happens;
//                               `continue` answers the misuses the hardware answers as it does
//                               (LaunchShape::on_misuse, sim/runtime/misuse.cpp) and goes on to
//                               their consequence.
//   --proxy-fences strict|writes `strict` (the default) asks for fence.proxy.async from generic
//                               writes to async-proxy reads and from generic reads to async-proxy
//                               writes (PTX's memory model, and Triton ConSan's rule:
//                               docs/semantics.md, LaunchShape::proxy_fences); `writes` from
//                               writes only (mbcheck's rule before 0.3).
// Each wraps the protocol's program, so a replay token that records the mode replays in it
// whatever the protocol.
#include <fmt/format.h>

#include <optional>

#include "sim/protocols/protocols.hpp"

namespace mbcheck::sim {

namespace {

class ModedProgram final : public CliProgram {
 public:
  ModedProgram(std::unique_ptr<CliProgram> inner, bool proceed, std::optional<bool> strict)
      : inner_(std::move(inner)), proceed_(proceed), strict_(strict) {}
  LaunchShape shape() const override {
    LaunchShape s = inner_->shape();
    if (proceed_) s.on_misuse = OnMisuse::proceed;
    if (strict_) s.proxy_fences = *strict_ ? ProxyFences::strict : ProxyFences::writes;
    return s;
  }
  void reset() override { inner_->reset(); }
  void thread_main() override { inner_->thread_main(); }
  std::optional<std::string> check_result() override { return inner_->check_result(); }
  bool device_code() const override { return inner_->device_code(); }
  std::map<std::string, std::string> options() const override {
    auto o = inner_->options();
    if (proceed_) o[kOnMisuseOption] = "continue";
    if (strict_ && !*strict_) o[kProxyFencesOption] = "writes";  // (strict: the default)
    return o;
  }
  std::string result_summary() const override { return inner_->result_summary(); }

 private:
  std::unique_ptr<CliProgram> inner_;
  bool proceed_;
  std::optional<bool> strict_;  // as --proxy-fences said (none: the protocol's shape decides)
};

// Takes `name` out of `options`: whether it had the value `on` or `off` (none: absent).
std::optional<bool> take_mode(std::map<std::string, std::string>& options, const char* name, const char* off,
                              const char* on) {
  const auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  if (it->second != off && it->second != on)
    throw ShapeError(fmt::format("--{} {}: one of {}, {}", name, it->second.substr(0, 40), off, on));
  const bool chosen = it->second == on;
  options.erase(it);
  return chosen;
}

}  // namespace

OptionInfo on_misuse_option() {
  return {kOnMisuseOption, "stop",
          "at a misuse the hardware answers (missing-wait, phase-aliasing): stop and report it, or "
          "continue as the hardware does and report the deadlock, race or wrong result it leads to"};
}

OptionInfo proxy_fences_option() {
  return {kProxyFencesOption, "strict",
          "which generic accesses need fence.proxy.async before the async proxy touches their bytes: "
          "strict: writes and reads (PTX's memory model; Triton ConSan's rule), or writes: writes only "
          "(before an async read; mbcheck before 0.3)"};
}

std::unique_ptr<CliProgram> make_with_modes(
    const std::function<std::unique_ptr<CliProgram>(const std::map<std::string, std::string>&)>& make,
    std::map<std::string, std::string> options) {
  const bool proceed = take_mode(options, kOnMisuseOption, "stop", "continue").value_or(false);
  const std::optional<bool> strict = take_mode(options, kProxyFencesOption, "writes", "strict");
  auto program = make(options);
  if (!proceed && !strict) return program;
  return std::make_unique<ModedProgram>(std::move(program), proceed, strict);
}

}  // namespace mbcheck::sim
