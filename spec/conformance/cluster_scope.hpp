// Cross-CTA publication at cluster scope: a peer's stores into this CTA's shared memory,
// released by its .release.cluster arrive, acquired by a .acquire.cluster wait (and, recorded,
// by a .acquire.cta wait, the wrong scope).
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

// Recorded, not judged (RecordedTests): the same publication acquired at the WRONG scope. A
// cluster of 2; thread 0 of each CTA initialises full (barrier 0) and empty (barrier 1), count
// 1, and fences the inits; the cluster meets. Then 2000 rounds g: CTA 1's thread 0 stores 32
// fresh words ((g + 1) << 8 | i) into CTA 0's shared memory (mapa + st) and arrives on CTA 0's
// full (mbarrier.arrive.release.cluster); CTA 0's thread 0 waits for full's phase g, reads the
// 32 words, counts those that differ, and arrives on CTA 1's empty, which CTA 1 waits for
// (.acquire.cluster: it orders CTA 0's reads before the next round's stores) before round
// g + 1. In rounds 0..999 CTA 0 waits with try_wait.parity.acquire.cta (mbarrier_wait_parity,
// the default wait). PTX ISA 9.1, 8.7: "Two operations are said to be morally strong relative
// to each other if ... each operation is strong and specifies a scope that includes the thread
// executing the other operation", and a release synchronizes with an acquire only if they are
// morally strong (8.9.4): a .cta acquire's scope does not include CTA 1's thread, so nothing
// orders CTA 1's stores before CTA 0's loads (a race the host reports). Rounds 1000..1999 are the control with
// .acquire.cluster (mbarrier_wait_parity_cluster), whose outcome PTX defines: no stale word. All threads end at a
// cluster barrier (barrier.cluster.arrive.release / wait.acquire, not .aligned: the lanes diverged), so neither CTA
// exits while the other may still reach its shared memory.
//   out[0] stale words with .acquire.cta, out[1] words compared, out[2] rounds with a stale
//   word; out[3..5] the same with .acquire.cluster (the control)
struct CtaAcquireOfPeerRelease {
  static constexpr const char* kName = "cta-acquire-of-peer-release (recorded)";
  static constexpr std::uint32_t kWords = 32, kRounds = 1000;
  static constexpr std::uint32_t kThreads = 32, kCtas = 2, kClusterX = 2, kSmemBytes = 128 + kWords * 4, kResults = 6;
  static constexpr bool kSumLaunches = true;  // the runner prints out[] summed over launches
  static constexpr const char* kAsExpected = "no stale word seen, with either acquire scope";
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t t = P::thread_idx(), rank = P::cluster_ctarank();
    auto* words = e.template smem_at<std::int32_t>(128);
    auto& full = e.bar(0).raw();   // CTA 0's: CTA 1 arrives on it
    auto& empty = e.bar(1).raw();  // CTA 1's: CTA 0 arrives on it
    if (t == 0) {
      e.bar(0).init(1);
      e.bar(1).init(1);
      P::fence_mbarrier_init_release_cluster();
    }
    P::barrier_cluster_arrive_relaxed_aligned();
    P::barrier_cluster_wait_aligned();
    if (t == 0 && rank == 1) {
      for (std::uint32_t g = 0; g < 2 * kRounds; ++g) {
        if (g > 0) P::mbarrier_wait_parity_cluster(empty, static_cast<std::int64_t>(g - 1));
        for (std::uint32_t i = 0; i < kWords; ++i)
          P::store(P::map_shared_rank(words + i, 0), static_cast<std::int32_t>((g + 1) << 8 | i));
        P::mbarrier_arrive_cluster(full, 0);
      }
    } else if (t == 0) {
      for (std::uint32_t variant = 0; variant < 2; ++variant) {
        std::int32_t stale = 0, stale_rounds = 0;
        for (std::uint32_t r = 0; r < kRounds; ++r) {
          const std::uint32_t g = variant * kRounds + r;
          if (variant == 0)
            P::mbarrier_wait_parity(full, static_cast<std::int64_t>(g));  // .acquire.cta: the wrong scope
          else
            P::mbarrier_wait_parity_cluster(full, static_cast<std::int64_t>(g));  // the control
          std::int32_t here = 0;
          for (std::uint32_t i = 0; i < kWords; ++i)
            here += P::load(words + i) != static_cast<std::int32_t>((g + 1) << 8 | i) ? 1 : 0;
          stale += here;
          stale_rounds += here != 0 ? 1 : 0;
          P::mbarrier_arrive_cluster(empty, 1);
        }
        e.result(3 * variant, stale);
        e.result(3 * variant + 1, static_cast<std::int32_t>(kRounds * kWords));
        e.result(3 * variant + 2, stale_rounds);
      }
    }
    P::barrier_cluster_arrive();
    P::barrier_cluster_wait();
  }
  // True when no word was stale with either scope; the runner records, it does not judge.
  static bool expected(const std::int32_t* out, char* why) {
    if (out[0] != 0 || out[3] != 0)
      return fail(why, "stale words: %d of %d after .acquire.cta (in %d rounds), %d of %d after .acquire.cluster",
                  static_cast<int>(out[0]), static_cast<int>(out[1]), static_cast<int>(out[2]),
                  static_cast<int>(out[3]), static_cast<int>(out[4]));
    return true;
  }
};

}  // namespace mbcheck::conformance
