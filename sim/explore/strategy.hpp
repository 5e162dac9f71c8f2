// Scheduling strategies for the runtime: each picks one enabled agent per step.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/runtime/first_schedule.hpp"
#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

// splitmix64: tiny, fast, and the same stream on every platform (std distributions are not).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), by Lemire's multiply-shift (bias below 2^-32 for our n).
  std::uint32_t below(std::uint32_t n) { return scale(next(), n); }
  static std::uint32_t scale(std::uint64_t r, std::uint32_t n) {
    return static_cast<std::uint32_t>(((r >> 32) * static_cast<std::uint64_t>(n)) >> 32);
  }

 private:
  std::uint64_t state_;
};

// Uniform random walk: every enabled agent is equally likely at every step. The stream's next
// number is drawn one step ahead: its multiply chain then overlaps the rest of the step
// instead of delaying the pick (the same numbers, in the same order, as drawn at the pick).
class RandomStrategy final : public Strategy {
 public:
  explicit RandomStrategy(std::uint64_t seed) : seed_(seed), rng_(seed) { begin_execution(); }
  void begin_execution() override {
    rng_ = SplitMix64(seed_);
    ahead_ = rng_.next();
  }
  AgentId choose(const Runtime& rt) override {
    const auto& en = rt.enabled();
    const std::uint64_t r = ahead_;
    ahead_ = rng_.next();
    return en[SplitMix64::scale(r, static_cast<std::uint32_t>(en.size()))];
  }

 private:
  std::uint64_t seed_;
  SplitMix64 rng_;
  std::uint64_t ahead_ = 0;
};

// Replays a recorded schedule step by step. The runtime reports "diverged" when the agent
// named is not enabled; running past the end of the schedule is reported the same way.
class ReplayStrategy final : public Strategy {
 public:
  explicit ReplayStrategy(std::vector<AgentId> schedule) : schedule_(std::move(schedule)) {}
  void begin_execution() override { pos_ = 0; }
  AgentId choose(const Runtime&) override { return pos_ < schedule_.size() ? schedule_[pos_++] : kNoAgent; }
  bool finished() const { return pos_ == schedule_.size(); }

 private:
  std::vector<AgentId> schedule_;
  std::size_t pos_ = 0;
};

}  // namespace mbcheck::sim

namespace mbcheck::sim {

// PCT (Burckhardt et al., ASPLOS 2010): every agent gets a random distinct priority; the
// highest-priority enabled agent runs; at d-1 random steps (change points) in [1, k] the
// running agent drops below every initial priority. A bug of depth d is found with
// probability at least 1/(n * k^(d-1)) per run, for n agents and k steps.
class PctStrategy final : public Strategy {
 public:
  PctStrategy(std::uint64_t seed, int depth, std::uint64_t expected_steps)
      : seed_(seed), depth_(depth), k_(expected_steps) {}
  void begin_execution() override;
  AgentId choose(const Runtime& rt) override;

 private:
  std::int64_t priority(AgentId a);
  std::uint64_t seed_;
  int depth_;
  std::uint64_t k_;
  SplitMix64 rng_{0};
  std::vector<std::int64_t> priority_;  // by agent id; 0: not assigned yet
  std::vector<std::uint64_t> change_points_;
  std::uint64_t step_ = 0;
};

}  // namespace mbcheck::sim
