// A TMA pipeline across the CTAs of a cluster, in the style of CUTLASS's PipelineTmaAsync
// (include/cutlass/pipeline/sm90_pipeline.hpp), written once for every Platform P.
//
// Each CTA has Stages stages with full[s] and empty[s] barriers. Its producer fills stage s of
// its own CTA with tiles that arrive by multicast from the CTAs of its cluster row and column:
// full[s] counts 1 arrival (the own producer's arrive.expect_tx of the stage's bytes) and the
// bytes every multicast lands. Because a CTA's producer writes into its peers' stages, it must
// know that THEIR consumers are done with the stage: empty[s] counts one arrival per consumer
// warp group of every CTA in the same row or column ((cluster_x + cluster_y - 1) x groups),
// and each consumer warp group releases a stage on the empty barrier of every CTA in its row
// and column, the arrivals spread over its threads as CUTLASS spreads them (16 signalling
// threads per warp group, one per destination rank).
//
// Barrier layout in shared memory: full[0..S) then empty[0..S). Phases are passed as bits
// (PipelineStateBit): consumers start at bit 0, the producer at bit 1 (the phase before init).
#pragma once

#include "spec/mbarrier.hpp"
#include "spec/pipeline.hpp"
#include "spec/platform.hpp"

namespace mbcheck {

// CUTLASS's spread_arrivals_to_warpgroup + is_same_row_or_col: whether thread `t` (0..127)
// of a consumer warp group signals, and the rank it signals. Thread t%8==0 of warp w takes
// destination (4*(w%4) + (t/8)%4) swizzled by Swizzle<2,0,-2> (v ^ ((v & 3) << 2)).
struct ReleaseTarget {
  bool signals = false;
  std::uint32_t rank = 0;
};
MBCHECK_HD inline ReleaseTarget release_target(std::uint32_t t, std::uint32_t cluster_x, std::uint32_t cluster_y,
                                               std::uint32_t my_x, std::uint32_t my_y) {
  const std::uint32_t v = ((t / 32) % 4) * 4 + (t / 8) % 4;
  const std::uint32_t dst = v ^ ((v & 3u) << 2);
  const bool same_row_or_col = dst % cluster_x == my_x || dst / cluster_x == my_y;
  return {t % 8 == 0 && dst < cluster_x * cluster_y && same_row_or_col, dst};
}

// The ranks of the CTAs in a CTA's cluster column (same x: they share A tiles) and row (same
// y: they share B tiles), as multicast masks.
MBCHECK_HD inline std::uint16_t same_x_mask(std::uint32_t cluster_x, std::uint32_t cluster_y, std::uint32_t x) {
  std::uint16_t m = 0;
  for (std::uint32_t y = 0; y < cluster_y; ++y) m = static_cast<std::uint16_t>(m | (1u << (x + y * cluster_x)));
  return m;
}
MBCHECK_HD inline std::uint16_t same_y_mask(std::uint32_t cluster_x, std::uint32_t y) {
  std::uint16_t m = 0;
  for (std::uint32_t x = 0; x < cluster_x; ++x) m = static_cast<std::uint16_t>(m | (1u << (x + y * cluster_x)));
  return m;
}

template <class P, int Stages>
class ClusterTmaPipeline {
 public:
  using Barrier = typename P::Barrier;
  using State = PipelineStateBit<Stages>;

  // `consumer_groups`: consumer warp groups per CTA, each releasing every stage it consumes.
  MBCHECK_HD ClusterTmaPipeline(Barrier* barriers, std::uint32_t consumer_groups)
      : bars_(barriers), groups_(consumer_groups) {}

  // One thread per CTA, before the cluster barrier that every thread of the cluster passes
  // before its first use. `empty_count` is what empty[s] counts: the right value is
  // consumer_arrivals(); other values exist to study what goes wrong without it.
  MBCHECK_HD void init_barriers(std::uint32_t empty_count, bool fence = true) const {
    for (int s = 0; s < Stages; ++s) {
      P::label(bars_[s], "full", s);
      P::label(bars_[Stages + s], "empty", s);
      full(s).init(1);
      empty(s).init(empty_count);
    }
    // The peers' consumers arrive on empty[s] and their multicasts complete full[s].
    if (fence) P::fence_mbarrier_init_release_cluster();
  }
  MBCHECK_HD std::uint32_t consumer_arrivals() const { return (P::cluster_dim_x() + P::cluster_dim_y() - 1) * groups_; }

  MBCHECK_HD Mbarrier<P> full(std::uint32_t s) const { return Mbarrier<P>(bars_[s]); }
  MBCHECK_HD Mbarrier<P> empty(std::uint32_t s) const { return Mbarrier<P>(bars_[Stages + s]); }

  // --- producer: one thread per CTA ------------------------------------------------------
  static MBCHECK_HD State producer_start() { return State(1u); }
  // Waits until every consumer that stage s of this CTA's multicasts reaches released it,
  // then announces the stage's bytes on its own full barrier.
  MBCHECK_HD void producer_acquire(const State& st, std::uint32_t stage_bytes) const {
    empty(st.index()).wait_parity(st.phase());
    full(st.index()).arrive_expect_tx(stage_bytes);
  }
  // Waits for the release of every stage in flight: the peers' last arrivals on this CTA's
  // empty barriers have happened, so the CTA may exit (its shared memory stays until then).
  MBCHECK_HD void producer_tail(State st) const {
    for (int s = 0; s < Stages; ++s, ++st) empty(st.index()).wait_parity(st.phase());
  }

  // --- consumers ------------------------------------------------------------------------
  static MBCHECK_HD State consumer_start() { return State(0u); }
  MBCHECK_HD void consumer_wait(const State& st) const { full(st.index()).wait_parity(st.phase()); }
  // Thread t (0..127) of a consumer warp group releases the stage on the empty barrier of
  // the rank it signals, if it is a signalling thread.
  MBCHECK_HD void consumer_release(const State& st, const ReleaseTarget& target) const {
    P::mbarrier_arrive_cluster_if(bars_[Stages + st.index()], target.rank, target.signals);
  }

 private:
  Barrier* bars_;
  std::uint32_t groups_;
};

}  // namespace mbcheck
