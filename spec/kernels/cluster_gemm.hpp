// A warp-specialized GEMM-style mainloop over thread block clusters, in the style of
// CUTLASS's sm90 TMA warp-specialized kernels with multicast (ClusterTmaPipeline).
//
// Launch: clusters of cluster_x by cluster_y CTAs of 384 threads, as CUTLASS's: warp group 0
// is the producer's (its warp 0's elected lane streams, the rest exit), warp groups 1 and 2
// consume. CTA (x, y) of
// cluster c computes `tiles` output tiles of 256 values (with `persistent`, those of the grid's
// `tiles` cluster tiles a persistent scheduler deals it: tile w to cluster w % clusters, as its
// tile j = w / clusters, so a cluster may get none); tile j takes k_blocks blocks, and
// block k brings the A block of row m = c*cluster_x + x (a_elems floats) and the B block of
// column n = c*cluster_y + y (b_elems floats) through the next stage. A is shared by the CTAs
// of the same x, B by those of the same y: each of them loads its slice and multicasts it
// to all of them.
// Consumer thread i (0..255) of warp group g = i / 128, t = i % 128 adds
// A[t % a_elems] * B[t % b_elems] of every block to its accumulator, and meets its warp group
// at the wgmma fence / commit / wait (where the real kernel's MMA would be; they order no
// memory, so each warp orders its reads before its release with a __syncwarp).
//
// With `ordered`, the two groups accumulate into ONE shared-memory tile in turn, ordered by
// named barriers (FlashAttention-3's warp-group scheduling): group g syncs order[g] (ids 1, 2;
// 256 threads) before its turn and arrives on order[1-g] after it; group 1 arrives on
// order[0] once at the start. Group 1, the last of each block, writes the tile's result; with
// no block it stores the tile's zeros itself (as FlashAttention-3's store_zero for a tile with
// no work), since no turn comes.
//
// Output: out[(cta * tiles + j) * 256 + i] (unordered), or the combined value at
// out[(cta * tiles + j) * 256 + t] (ordered; the rest stays as reset left it); tiles not
// dealt to the CTA stay as reset left them.
#pragma once

#include "spec/cluster_pipeline.hpp"
#include "spec/named_barrier.hpp"
#include "spec/platform.hpp"

namespace mbcheck {

enum class ClusterGemmMutation : std::uint32_t {
  none = 0,
  no_producer_tail,      // the producer exits without waiting for the last releases: a peer
                         // arrives on the empty barrier of a CTA that may be gone (lifetime)
  local_release_only,    // consumers release only their own CTA's empty barrier: a peer's
                         // producer multicasts into a stage still being read (race)
  unscaled_empty_count,  // empty[s] counts the CTA's own consumer groups, not the cluster's:
                         // the row's and column's arrivals over-arrive (misuse)
  no_init_fence,         // no fence.mbarrier_init before the relaxed cluster arrive: a peer
                         // uses a barrier whose init it cannot see (misuse unfenced-init)
  no_cluster_sync,       // no cluster barrier after init: a peer may arrive before init
  wrong_multicast_mask,  // B slices go to the own CTA only: the row's full barriers never
                         // receive their bytes (deadlock)
  skip_remote_arrivals,  // a relay warp skips its remote arrivals on the last k-block (as in
                         // a DeepGEMM-derived kernel): a peer's producer_tail waits forever
  order_count_mismatch,  // (ordered) group 1 names the order barriers with 128 threads
  double_arrive,         // (ordered) group 1 arrives twice for its first turn (early-return
                         // arrive, then the loop's: vllm PR #26026): group 0 takes a turn early
  no_order,              // (ordered) group 0 does not wait for its turn (race on the tile)
  peeled_first_k_block,  // the consumers peel a tile's first k-block (wait for it before
                         // testing the count, right while there is one): with no k-block they
                         // wait for a fill that never comes (deadlock)
};

struct ClusterGemmParams {
  const float* a = nullptr;  // [(m * tiles + j) * k_blocks + k][a_elems], 16-byte aligned
  const float* b = nullptr;  // [(n * tiles + j) * k_blocks + k][b_elems]
  float* out = nullptr;      // [ctas * tiles * 256]
  std::uint32_t tiles = 2;   // per CTA, or (persistent) the grid's cluster tiles
  std::uint32_t k_blocks = 2;
  std::uint32_t a_elems = 64;  // a multiple of 4 * cluster_y (each slice is whole 16 bytes)
  std::uint32_t b_elems = 64;  // a multiple of 4 * cluster_x
  bool ordered = false;
  ClusterGemmMutation mutation = ClusterGemmMutation::none;
  bool persistent = false;  // `tiles` cluster tiles in all, dealt round-robin to the clusters
};

// How many tiles the CTAs of cluster `c` (of `clusters`) compute: slots j = 0, 1, ... of the
// layout above.
MBCHECK_HD inline std::uint32_t cluster_gemm_tiles(const ClusterGemmParams& p, std::uint32_t c,
                                                   std::uint32_t clusters) {
  if (!p.persistent) return p.tiles;
  return c < p.tiles ? (p.tiles - c + clusters - 1) / clusters : 0;
}

inline constexpr std::uint32_t kClusterGemmThreads = 3 * 128;
inline constexpr std::uint32_t kClusterOrderBarrier = 1;  // ids 1 and 2

template <class P, int Stages>
MBCHECK_HD std::uint32_t cluster_gemm_smem_bytes(const ClusterGemmParams& p) {
  return barrier_bytes<P>(2 * Stages) + Stages * (p.a_elems + p.b_elems) * 4u + 128u * 4u;
}

template <class P, int Stages>
MBCHECK_HD void cluster_gemm_kernel(const ClusterGemmParams& p) {
  using M = ClusterGemmMutation;
  unsigned char* smem = P::shared_memory();
  auto* bars = reinterpret_cast<typename P::Barrier*>(smem);
  auto* stage_a = reinterpret_cast<float*>(smem + barrier_bytes<P>(2 * Stages));
  auto* stage_b = stage_a + Stages * p.a_elems;
  float* tile = stage_b + Stages * p.b_elems;  // the shared accumulator of the ordered form
  const std::uint32_t cx = P::cluster_dim_x(), cy = P::cluster_dim_y();
  const std::uint32_t x = P::cluster_ctaid_x(), y = P::cluster_ctaid_y();
  const std::uint32_t me = P::thread_idx();
  ClusterTmaPipeline<P, Stages> pipe(bars, 2);

  if (me == 0) {
    const std::uint32_t groups_per_cta = 2;
    pipe.init_barriers(
        p.mutation == M::unscaled_empty_count ? groups_per_cta * (128u / P::warp_size()) : pipe.consumer_arrivals(),
        p.mutation != M::no_init_fence);
    for (int s = 0; s < Stages; ++s) {
      label_memory<P>(stage_a + s * p.a_elems, p.a_elems, "A stage", s);
      label_memory<P>(stage_b + s * p.b_elems, p.b_elems, "B stage", s);
    }
    label_memory<P>(tile, 128, "tile");
  }
  if (p.mutation == M::no_cluster_sync) {
    P::sync_threads();
  } else {
    P::barrier_cluster_arrive_relaxed_aligned();  // as CUTLASS: arrive relaxed after init,
    P::barrier_cluster_wait_aligned();            // wait before the first use
  }

  const std::uint32_t stage_bytes = (p.a_elems + p.b_elems) * 4u;
  const std::uint32_t a_slice = p.a_elems / cy, b_slice = p.b_elems / cx;
  const std::uint32_t m = P::cluster_idx() * cx + x, n = P::cluster_idx() * cy + y;
  const std::uint32_t tiles = cluster_gemm_tiles(p, P::cluster_idx(), P::grid_dim() / (cx * cy));
  if (me < 128) {  // the producer warp group: warp 0's elected lane streams, the others exit
    if (P::warp_idx() != 0 || !P::elect_sync(0xffffffffu)) return;
    auto st = pipe.producer_start();
    for (std::uint32_t j = 0; j < tiles; ++j)
      for (std::uint32_t k = 0; k < p.k_blocks; ++k, ++st) {
        pipe.producer_acquire(st, stage_bytes);
        const std::size_t block_a = (std::size_t{m} * p.tiles + j) * p.k_blocks + k;
        const std::size_t block_b = (std::size_t{n} * p.tiles + j) * p.k_blocks + k;
        float* dst_a = stage_a + st.index() * p.a_elems + y * a_slice;
        float* dst_b = stage_b + st.index() * p.b_elems + x * b_slice;
        const float* src_a = p.a + block_a * p.a_elems + y * a_slice;
        const float* src_b = p.b + block_b * p.b_elems + x * b_slice;
        auto& full = pipe.full(st.index()).raw();
        if (cy > 1)
          P::cp_async_bulk_global_to_shared_multicast(dst_a, src_a, a_slice * 4u, full, same_x_mask(cx, cy, x));
        else
          P::cp_async_bulk_global_to_shared(dst_a, src_a, a_slice * 4u, full);
        const std::uint16_t mask_b =
            p.mutation == M::wrong_multicast_mask ? std::uint16_t(1u << P::cluster_ctarank()) : same_y_mask(cx, y);
        if (cx > 1)
          P::cp_async_bulk_global_to_shared_multicast(dst_b, src_b, b_slice * 4u, full, mask_b);
        else
          P::cp_async_bulk_global_to_shared(dst_b, src_b, b_slice * 4u, full);
      }
    if (p.mutation != M::no_producer_tail) pipe.producer_tail(st);
    return;
  }

  const std::uint32_t i = me - 128, g = i / 128, t = i % 128;
  const std::uint32_t order_threads = p.mutation == M::order_count_mismatch && g == 1 ? 128u : 256u;
  const NamedBarrier<P> my_turn(order_threads, kClusterOrderBarrier + g);
  const NamedBarrier<P> their_turn(order_threads, kClusterOrderBarrier + 1 - g);
  if (p.ordered) {
    if (g == 0) P::store(tile + t, 0.0f);
    if (g == 1) their_turn.arrive();  // group 0 goes first (and has zeroed the tile)
  }
  auto st = pipe.consumer_start();
  const bool peeled = p.mutation == M::peeled_first_k_block;
  for (std::uint32_t j = 0; j < tiles; ++j) {
    float acc = 0;
    for (std::uint32_t k = 0; k < p.k_blocks || (peeled && k == 0); ++k, ++st) {
      pipe.consumer_wait(st);
      P::wgmma_fence();
      const float product = P::load(stage_a + st.index() * p.a_elems + t % p.a_elems) *
                            P::load(stage_b + st.index() * p.b_elems + t % p.b_elems);
      P::wgmma_commit_group();
      P::wgmma_wait_group(0);
      if (p.ordered) {
        if (!(p.mutation == M::no_order && g == 0)) my_turn.sync();
        if (p.mutation == M::double_arrive && g == 1 && j == 0 && k == 0) their_turn.arrive();
        const float sum = P::load(tile + t) + product;
        if (g == 1 && k + 1 == p.k_blocks) {
          P::store(p.out + (std::size_t{P::block_idx()} * p.tiles + j) * 256 + t, sum);
          P::store(tile + t, 0.0f);
        } else {
          P::store(tile + t, sum);
        }
        their_turn.arrive();
      } else {
        acc += product;
      }
      const bool skip = p.mutation == M::skip_remote_arrivals && k + 1 == p.k_blocks && j + 1 == tiles && t < 32;
      // The stage was read with ordinary loads; the next fill (a multicast may come from a peer)
      // writes it with the async proxy: this CTA's reads need the proxy fence (docs/semantics.md).
      P::fence_proxy_async_shared_cta();
      pipe.consumer_release(st, skip, p.mutation == M::local_release_only);
    }
    if (!p.ordered)
      P::store(p.out + (std::size_t{P::block_idx()} * p.tiles + j) * 256 + i, acc);
    else if (p.k_blocks == 0 && g == 1)  // no turn came to write the tile: its sum is empty
      P::store(p.out + (std::size_t{P::block_idx()} * p.tiles + j) * 256 + t, 0.0f);
  }
}

}  // namespace mbcheck
