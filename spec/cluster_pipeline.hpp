// A TMA pipeline across the CTAs of a cluster, in the style of CUTLASS's PipelineTmaAsync
// (include/cutlass/pipeline/sm90_pipeline.hpp), written once for every Platform P.
//
// Each CTA has Stages stages with full[s] and empty[s] barriers. Its producer fills stage s of
// its own CTA with tiles that arrive by multicast from the CTAs of its cluster row and column:
// full[s] counts 1 arrival (the own producer's arrive.expect_tx of the stage's bytes) and the
// bytes every multicast lands. Because a CTA's producer writes into its peers' stages, it must
// know that THEIR consumers are done with the stage: empty[s] counts one arrival per consumer
// warp of every CTA in the same row or column ((cluster_x + cluster_y - 1) x groups x warps),
// and each consumer warp releases a stage on the empty barrier of every CTA in its row and
// column, its lane 0 arriving once per destination after a __syncwarp. (CUTLASS spreads one
// arrival per destination and warp group over 16 signalling threads: right for the reads its
// MMA makes, which the group's wgmma.wait_group covers; the consumers here read the stage with
// ordinary loads, which only a __syncwarp orders before another lane's arrive: PTX gives
// wgmma's fence, commit and wait no memory order.)
//
// Barrier layout in shared memory: full[0..S) then empty[0..S). Phases are passed as bits
// (PipelineStateBit): consumers start at bit 0, the producer at bit 1 (the phase before init).
#pragma once

#include "spec/mbarrier.hpp"
#include "spec/pipeline.hpp"
#include "spec/platform.hpp"

namespace mbcheck {

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
  MBCHECK_HD std::uint32_t consumer_arrivals() const {
    return (P::cluster_dim_x() + P::cluster_dim_y() - 1) * groups_ * (128u / P::warp_size());
  }

  MBCHECK_HD Mbarrier<P> full(std::uint32_t s) const { return Mbarrier<P>(bars_[s]); }
  MBCHECK_HD Mbarrier<P> empty(std::uint32_t s) const { return Mbarrier<P>(bars_[Stages + s]); }

  // --- producer: one thread per CTA ------------------------------------------------------
  static MBCHECK_HD State producer_start() { return State(1u); }
  // Waits until every consumer that stage s of this CTA's multicasts reaches released it,
  // then announces the stage's bytes on its own full barrier. The releases come from peer CTAs
  // (.release.cluster): only an .acquire.cluster wait synchronizes with them (PTX ISA 8.7,
  // morally strong), so that the consumers' reads of the stage come before the refill.
  // (CUTLASS's ClusterBarrier::wait is .acquire.cta: its peers' reads are ordered before the
  // refill only by the hardware, not by PTX.)
  MBCHECK_HD void producer_acquire(const State& st, std::uint32_t stage_bytes) const {
    empty(st.index()).wait_parity_cluster(st.phase());
    full(st.index()).arrive_expect_tx(stage_bytes);
  }
  // Waits for the release of every stage in flight: the peers' last arrivals on this CTA's
  // empty barriers have happened, so the CTA may exit (its shared memory stays until then).
  MBCHECK_HD void producer_tail(State st) const {
    for (int s = 0; s < Stages; ++s, ++st) empty(st.index()).wait_parity_cluster(st.phase());
  }

  // --- consumers ------------------------------------------------------------------------
  static MBCHECK_HD State consumer_start() { return State(0u); }
  MBCHECK_HD void consumer_wait(const State& st) const { full(st.index()).wait_parity(st.phase()); }
  // Every lane of a consumer warp calls it: the warp's reads of the stage are ordered before
  // its lane 0's arrival on the empty barrier of each CTA in its row and column (.release
  // .cluster; the producers wait at .acquire.cluster). `own_only`: no peer's barrier (a
  // mutation, or a relay warp that skips its remote arrivals); `redirect_own`: each arrival
  // meant for a peer made on the own CTA's barrier instead (a mutation).
  MBCHECK_HD void consumer_release(const State& st, bool own_only = false, bool redirect_own = false) const {
    P::syncwarp();
    if (P::lane_idx() != 0) return;
    const std::uint32_t cx = P::cluster_dim_x(), cy = P::cluster_dim_y();
    const std::uint32_t x = P::cluster_ctaid_x(), y = P::cluster_ctaid_y(), me = P::cluster_ctarank();
    for (std::uint32_t r = 0; r < cx * cy; ++r)
      if ((r % cx == x || r / cx == y) && (r == me || !own_only))
        P::mbarrier_arrive_cluster(bars_[Stages + st.index()], redirect_own ? me : r);
  }

 private:
  Barrier* bars_;
  std::uint32_t groups_;
};

}  // namespace mbcheck
