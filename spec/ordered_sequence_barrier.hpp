// CUTLASS's OrderedSequenceBarrier (include/cutlass/pipeline/sm90_pipeline.hpp), written once
// for every Platform P: `Length` groups of threads take turns in a fixed order, with up to
// `Depth` turns of lookahead. Barrier [d][g] (count: the group's threads) is group g's "your
// turn" at turn stage d: group g's turn waits on [stage][g] and ends by arriving on
// [stage][(g + 1) % Length]. Group 0 starts at phase bit 1 (the phase before init: its first
// Depth turns need no one), the others at bit 0 (they wait for the group before them). Waits
// pass only the phase bit, as CUTLASS does.
#pragma once

#include "spec/mbarrier.hpp"
#include "spec/platform.hpp"

namespace mbcheck {

template <class P, int Depth, int Length>
class OrderedSequenceBarrier {
  static_assert(Depth >= 1 && Length >= 2, "a sequence needs a stage and two groups");

 public:
  static constexpr int kBarriers = Depth * Length;

  // `barriers`: Depth * Length barriers in shared memory.
  MBCHECK_HD OrderedSequenceBarrier(typename P::Barrier* barriers, std::uint32_t group_id)
      : bars_(barriers), group_(group_id), phase_(group_id == 0 ? 1u : 0u) {}

  // One thread, before every group's first use (then sync_threads or a cluster barrier).
  MBCHECK_HD void init(std::uint32_t group_threads) const {
    for (int d = 0; d < Depth; ++d)
      for (int g = 0; g < Length; ++g) {
        P::label(bars_[d * Length + g], "sequence", d * Length + g);
        Mbarrier<P>(bars_[d * Length + g]).init(group_threads);
      }
  }
  // Waits for this group's turn at the current stage.
  MBCHECK_HD void wait() const { at(group_).wait_parity(phase_); }
  // Ends the turn: the next group's turn at this stage may begin; moves to the next stage.
  MBCHECK_HD void arrive() {
    at((group_ + 1) % Length).arrive();
    if (++stage_ == static_cast<std::uint32_t>(Depth)) {
      stage_ = 0;
      phase_ ^= 1u;
    }
  }

 private:
  MBCHECK_HD Mbarrier<P> at(std::uint32_t group) const { return Mbarrier<P>(bars_[stage_ * Length + group]); }
  typename P::Barrier* bars_;
  std::uint32_t group_;
  std::uint32_t stage_ = 0;
  std::uint32_t phase_;
};

}  // namespace mbcheck
