// This project's own mbcheck: the whole command line (check, run, replay, merge, --json,
// --html, --trace, fuzzing, shards) over the handoff protocol, through the registration API.
//   handoff_cli check handoff --rounds 4 --consumers 3
#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "handoff.hpp"
#include "sim/cli.hpp"
#include "sim/host_platform.hpp"

using namespace mbcheck::sim;

namespace {

const ProtocolInfo kHandoff{"handoff",
                            "thread 0 hands values to consumer threads through one slot (full/empty barriers)",
                            {{"rounds", "3", "values handed over"},
                             {"consumers", "2", "consumer threads"},
                             {"mutation", "none", "expect-extra-consumer: the empty barrier counts one too many"}},
                            {"expect-extra-consumer"}};

unsigned whole(const std::map<std::string, std::string>& o, const char* key, unsigned lo, unsigned hi) {
  const std::string& v = o.at(key);
  unsigned out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || out < lo || out > hi)
    throw ShapeError(fmt::format("--{} {}: must be a whole number in [{}, {}]", key, v, lo, hi));
  return out;
}

class HandoffProgram final : public CliProgram {
 public:
  explicit HandoffProgram(const std::map<std::string, std::string>& given) {
    for (const auto& o : kHandoff.options) options_[o.name] = o.default_value;
    for (const auto& [k, v] : given) {
      if (!options_.count(k)) throw ShapeError(fmt::format("handoff has no option --{}", k));
      options_[k] = v;
    }
    rounds_ = static_cast<int>(whole(options_, "rounds", 1, 1000));
    consumers_ = whole(options_, "consumers", 1, 1000);
    if (options_["mutation"] != "none" && options_["mutation"] != "expect-extra-consumer")
      throw ShapeError(fmt::format("--mutation {}: must be none or expect-extra-consumer", options_["mutation"]));
    sums_.assign(consumers_ + 1, 0);
  }
  LaunchShape shape() const override {
    return {.ctas = 1, .threads_per_cta = consumers_ + 1, .warp_size = 32, .smem_bytes = 64};
  }
  void reset() override { std::fill(sums_.begin(), sums_.end(), 0); }
  void thread_main() override {
    const unsigned expected = consumers_ + (options_.at("mutation") == "expect-extra-consumer" ? 1 : 0);
    handoff<HostPlatform>(&slot_, sums_.data(), rounds_, expected);
  }
  std::optional<std::string> check_result() override {
    const int want = rounds_ * (rounds_ - 1) / 2;
    for (unsigned c = 1; c <= consumers_; ++c)
      if (sums_[c] != want) return fmt::format("consumer {} summed {}, expected {}", c, sums_[c], want);
    return std::nullopt;
  }
  std::map<std::string, std::string> options() const override { return options_; }
  std::string result_summary() const override { return fmt::format("every consumer got all {} values", rounds_); }

 private:
  std::map<std::string, std::string> options_;
  int rounds_ = 3;
  unsigned consumers_ = 2;
  int slot_ = 0;
  std::vector<int> sums_;
};

}  // namespace

int main(int argc, char** argv) {
  return cli::main(argc, argv, {{kHandoff, [](const std::map<std::string, std::string>& o) {
                                   return std::unique_ptr<CliProgram>(std::make_unique<HandoffProgram>(o));
                                 }}});
}
