// Cross-CTA publication at cluster scope: a peer's stores into this CTA's shared memory,
// released by its .release.cluster arrive, acquired by a .acquire.cluster wait.
#pragma once

#include "spec/conformance/conformance.hpp"

namespace mbcheck::conformance {

// A cluster of 2. Thread 0 of each CTA initialises two barriers (count 1) and fences the
// inits (fence.mbarrier_init.release.cluster); the cluster meets (barrier.cluster.arrive
// .relaxed.aligned, barrier.cluster.wait.aligned: spec/kernels/cluster_gemm.hpp's idiom), so
// the peer may use them. Lane i (i < 2) of CTA 1 stores 4242 + i into CTA 0's word i (mapa +
// st) and arrives on CTA 0's barrier i (mbarrier.arrive.release.cluster.shared::cluster). Lane
// i of CTA 0 waits for phase 0 of its barrier i with try_wait.parity.acquire.cluster (lane 0
// by the full phase, lane 1 by the phase bit) and reads word i. PTX's memory model: the
// release at cluster scope and the acquire at cluster scope, both morally strong, make the
// store happen before the load (a .cta acquire would not be guaranteed to: scopes differ).
// CTA 0 exits only after both arrivals, so its shared memory outlives every peer access.
//   out[i] = 4242 + i
struct ClusterPublication {
  static constexpr const char* kName = "cluster-scope-publication";
  static constexpr std::uint32_t kThreads = 32, kCtas = 2, kClusterX = 2, kSmemBytes = 256, kResults = 2;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t lane = P::thread_idx(), rank = P::cluster_ctarank();
    auto* words = e.template smem_at<std::int32_t>(128);
    if (lane == 0) {
      e.bar(0).init(1);
      e.bar(1).init(1);
      P::fence_mbarrier_init_release_cluster();
    }
    P::barrier_cluster_arrive_relaxed_aligned();
    P::barrier_cluster_wait_aligned();
    if (lane >= 2) return;
    auto& bar = e.bar(lane).raw();
    if (rank == 1) {
      P::store(P::map_shared_rank(words + lane, 0), static_cast<std::int32_t>(4242 + lane));
      P::mbarrier_arrive_cluster(bar, 0);
    } else {
      if (lane == 0)
        P::mbarrier_wait_parity_cluster(bar, 0);
      else
        P::mbarrier_wait_parity_bit_cluster(bar, 0);
      e.result(lane, P::load(words + lane));
    }
  }
  static bool expected(const std::int32_t* out, char* why) {
    return expect_each(
        out, 0, 2, [](std::uint32_t i) { return static_cast<std::int32_t>(4242 + i); },
        "CTA 1's store, read after its .release.cluster arrive through an .acquire.cluster wait", why);
  }
};

}  // namespace mbcheck::conformance
