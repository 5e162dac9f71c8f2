// The litmus suite (spec/litmus/tests.hpp) as host Programs, and the set of outcomes the
// emulator allows for each: every schedule enumerated by brute force. An outcome is the
// test's results joined by commas ("0,1"), the same text device/litmus_runner prints; an
// execution that is not `completed` gives its verdict instead ("misuse:expect_tx_completes").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/explore/explore.hpp"
#include "sim/host_platform.hpp"
#include "spec/litmus/tests.hpp"

namespace mbcheck::sim {

template <class Test>
class LitmusProgram final : public Program {
 public:
  LitmusProgram() {
    for (std::uint32_t i = 0; i < litmus::kScratchBytes; ++i) src_[i] = static_cast<unsigned char>(i);
  }
  LaunchShape shape() const override {
    LaunchShape s;
    s.ctas = 1;
    s.threads_per_cta = Test::kThreads;
    s.warp_size = 1;  // each litmus thread its own warp, as on the device
    s.smem_bytes = litmus::smem_bytes<HostPlatform>();
    s.copy_pieces = Test::kCopyPieces;
    return s;
  }
  void reset() override { results_.fill(-1); }  // -1: never written, as on the device
  void thread_main() override {
    using P = HostPlatform;
    const auto env =
        litmus::make_env<P>(P::shared_memory(), src_.data(), results_.data(), P::thread_idx(), litmus::NoDelay{});
    litmus::run_instance<Test>(env, true);
  }
  // The outcome of the execution that just ended.
  std::string outcome_key(const Outcome& o) const {
    if (o.verdict != Verdict::completed) {
      std::string key = to_string(o.verdict);
      if (o.misuse) key += ":" + std::string(to_string(*o.misuse));
      return key;
    }
    std::string key;
    for (std::uint32_t r = 0; r < Test::kResults; ++r) {
      if (r) key += ',';
      key += std::to_string(results_[r]);
    }
    return key;
  }

 private:
  alignas(16) std::array<unsigned char, litmus::kScratchBytes> src_{};
  std::array<std::int32_t, litmus::kMaxResults> results_{};
};

// What the emulator allows for one litmus test: outcome -> number of schedules giving it.
struct LitmusAllowed {
  std::string name;
  bool host_flags_misuse = false;
  std::map<std::string, std::uint64_t> outcomes;
  ExploreStats stats;
};

template <class Test>
LitmusAllowed litmus_allowed() {
  LitmusProgram<Test> program;
  ExploreOptions options;
  options.kind = SearchKind::brute_force;
  options.stop_at_first_bug = false;
  LitmusAllowed allowed{Test::kName, Test::kHostFlagsMisuse, {}, {}};
  allowed.stats =
      explore(program, options, [&](const Outcome& o) { ++allowed.outcomes[program.outcome_key(o)]; }).stats;
  return allowed;
}

template <class... Tests>
std::vector<LitmusAllowed> litmus_allowed_all(litmus::TestList<Tests...>) {
  return {litmus_allowed<Tests>()...};
}

}  // namespace mbcheck::sim
