// The Platform contract: what a backend (sim/ on the host, device/ on the GPU) provides to
// protocol code in spec/. Spec code is a template over a type P that models this contract;
// it never names a backend. Every barrier call is one PTX instruction, named after it.
//
// Types
//   P::Barrier      an mbarrier object in shared memory (device: 8-byte word; host: the
//                   emulator state). Lives in memory from P::shared_memory().
//   P::Token        the state token returned by arrives.
//   P::WaitStatus   what a try_wait returns when only a later wait reads it (CUTLASS's
//                   BarrierStatus in a ConsumerToken): code passes it to
//                   mbarrier_wait_status and never branches on it, so the host can treat
//                   try-then-wait as the one blocking wait it amounts to.
// mbarrier instructions (phases are FULL phase numbers: see "Phases" below)
//   P::mbarrier_init(Barrier&, uint32_t count)                  mbarrier.init
//   P::mbarrier_inval(Barrier&)                                 mbarrier.inval
//   P::mbarrier_arrive(Barrier&, uint32_t count) -> Token       mbarrier.arrive (count: sm_90)
//   P::mbarrier_arrive_no_complete(Barrier&, uint32_t count) -> Token   .noComplete
//   P::mbarrier_arrive_expect_tx(Barrier&, uint32_t bytes) -> Token     mbarrier.arrive.expect_tx
//   P::mbarrier_arrive_drop(Barrier&, uint32_t count) -> Token  mbarrier.arrive_drop
//   P::mbarrier_arrive_relaxed / _expect_tx_relaxed / _drop_relaxed   the PTX 8.6 .relaxed forms:
//                          the same arrive-on, ordering none of the thread's memory operations
//   P::mbarrier_expect_tx(Barrier&, uint32_t bytes)             mbarrier.expect_tx
//   P::mbarrier_complete_tx(Barrier&, uint32_t bytes)           mbarrier.complete_tx
//   P::mbarrier_test_wait_parity(Barrier&, int64_t phase) -> bool   test_wait.parity (never blocks)
//   P::mbarrier_try_wait_parity(Barrier&, int64_t phase) -> bool    try_wait.parity (may time out)
//   P::mbarrier_test_wait(Barrier&, Token) -> bool              test_wait with a state token
//   P::mbarrier_try_wait(Barrier&, Token) -> bool               try_wait with a state token
//   P::mbarrier_pending_count(Token) -> uint32_t                mbarrier.pending_count
//   P::mbarrier_wait_parity(Barrier&, int64_t phase)            blocking wait: a try_wait loop
//                          on the device (bounded by a watchdog), one blocking step on the host
//   P::mbarrier_wait(Barrier&, Token)                           blocking wait on a state token
//   P::mbarrier_wait_parity_bit(Barrier&, uint32_t parity), P::mbarrier_test_wait_parity_bit,
//   P::mbarrier_try_wait_parity_bit -> bool, P::mbarrier_try_wait_parity_bit_status -> WaitStatus
//                          the same waits given only the phase bit, as CUTLASS and Mojo pass it
//                          (see "Phases")
//   P::mbarrier_try_wait_parity_status(Barrier&, int64_t phase) -> WaitStatus
//                          try_wait.parity, its answer kept for mbarrier_wait_status (a
//                          status belongs to the thread and the barrier that made it)
//   P::mbarrier_wait_status(Barrier&, WaitStatus)               returns at once if the try
//                          found the phase complete, else a blocking wait for that phase
// Async copies and fences
//   P::cp_async_bulk_global_to_shared(void* smem, const void* gmem, uint32_t bytes, Barrier&)
//                          cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes;
//                          bytes and both addresses are multiples of 16
//   P::cp_async_bulk_shared_to_global(void* gmem, const void* smem, uint32_t bytes)
//                          cp.async.bulk.global.shared::cta.bulk_group (a TMA store)
//   P::cp_async_bulk_commit_group()                             cp.async.bulk.commit_group
//   P::cp_async_bulk_wait_group_read0()                         cp.async.bulk.wait_group.read 0
//   P::cp_async_bulk_wait_group_read(N), P::cp_async_bulk_wait_group(N)   cp.async.bulk.wait_group
//                          {.read} N; this and every other wait_group N of the contract
//                          (cp_async_wait_group, wgmma_wait_group) takes N in 0..7 (an
//                          immediate in PTX: another N is a misuse on the host, a trap on the GPU)
//   P::fence_proxy_async_shared_cta()                           fence.proxy.async.shared::cta:
//                          needed between a thread's ordinary stores to shared memory and
//                          the async proxy (a TMA store) reading them, and between its
//                          ordinary loads and the async proxy (a TMA load) overwriting them
//                          (after the loads, before the release); it orders accesses to this
//                          CTA's shared memory only
//   P::fence_proxy_async()                                      fence.proxy.async: the same for
//                          every state space (global and shared memory)
//   P::fence_proxy_async_global()                               fence.proxy.async.global: the same
//                          for global memory (ordinary stores to global, then a TMA load of them)
//   P::fence_proxy_async_shared_cluster()                       fence.proxy.async.shared::cluster:
//                          the same for the shared memory of the cluster (this CTA's and peers')
//   P::sync_threads()                                           __syncthreads (bar.sync 0)
//   P::bar_sync(uint32_t id, uint32_t count)                    bar.sync id, count: named
//                          barrier id (0..15) for count threads (a multiple of the warp
//                          size); an arrival (release) then a wait for the generation (acquire)
//   P::bar_arrive(uint32_t id, uint32_t count)                  bar.arrive id, count: the
//                          arrival alone (spec/named_barrier.hpp wraps both)
// Clusters (a launch's CTAs in clusters of cluster_dim_x by cluster_dim_y; rank x-major)
//   P::cluster_ctarank(), P::cluster_nctarank()                 %cluster_ctarank, %cluster_nctarank
//   P::cluster_ctaid_x/y(), P::cluster_dim_x/y(), P::cluster_idx()   %cluster_ctaid, %cluster_nctaid,
//                          the cluster's linear index (block_idx() = cluster_idx * size + rank)
//   P::map_shared_rank(T* p, uint32_t rank) -> T*               mapa: p (in this CTA's shared
//                          memory) at the same offset in CTA `rank`: P::load/P::store reach it
//   P::mbarrier_arrive_cluster(Barrier& b, uint32_t rank)       mapa + mbarrier.arrive.release.cluster
//                          .shared::cluster: an arrival on the barrier at b's offset in CTA `rank`
//   P::mbarrier_arrive_cluster_if(Barrier&, rank, bool pred)    the same under a predicate
//   P::mbarrier_complete_tx_cluster(Barrier&, rank, bytes)      mbarrier.complete_tx.relaxed.cluster
//   P::mbarrier_arrive_expect_tx_cluster(Barrier&, bytes, rank) mbarrier.arrive.expect_tx.release
//                          .cluster.shared::cluster (CUTLASS's arrive_and_expect_tx(bytes, cta_id))
//   P::mbarrier_wait_parity_cluster(Barrier&, int64_t phase), P::mbarrier_wait_parity_bit_cluster(
//                          Barrier&, uint32_t parity)           blocking waits (try_wait loops on
//                          the device) with mbarrier.try_wait.parity.acquire.cluster.shared::cta:
//                          the acquire at cluster scope that synchronizes with a peer's
//                          .release.cluster arrive (the waits above are .acquire.cta)
//   P::cp_async_bulk_global_to_shared_multicast(void* smem, const void* gmem, bytes, Barrier&,
//                          uint16_t cta_mask)                   cp.async.bulk...multicast::cluster:
//                          the bytes land at smem's offset in every CTA of the mask and complete_tx
//                          the barrier at b's offset in each (separate events)
//   P::barrier_cluster_arrive(), P::barrier_cluster_arrive_relaxed(), P::barrier_cluster_wait(),
//   and their _aligned forms                                    barrier.cluster.arrive{.release,
//                          .relaxed}, barrier.cluster.wait (.acquire): every non-exited thread
//                          of the cluster arrives, a wait waits for the phase of its own arrive
//   P::fence_mbarrier_init_release_cluster()                    fence.mbarrier_init.release.cluster:
//                          makes this thread's mbarrier.inits visible to the cluster; a peer may
//                          use a barrier only once that reaches it (e.g. through barrier.cluster)
//   Rules the host checks: a peer's barrier takes only the .shared::cluster arrive/complete_tx
//   (no wait, no local arrive); a peer's use of a barrier before its init is visible is an
//   "unfenced-init" misuse; a CTA that may exit while a peer still uses its shared memory
//   (arrives, lands a multicast, loads, stores) is a "lifetime" bug.
// Warp and warp-group collectives: the lanes converge (none leaves before every non-exited
// lane of the mask reached it); only __syncwarp orders memory among them (PTX: elect.sync,
// shfl.sync and the wgmma instructions have no memory semantics; docs/semantics.md)
//   P::syncwarp(mask)                                           __syncwarp / bar.warp.sync
//   P::elect_sync(mask) -> bool                                 elect.sync: true in one lane (the
//                          lowest participating lane, as the GPU elects; PTX promises only the
//                          same leader for the same mask)
//   P::shfl_sync_idx(mask, uint32_t value, uint32_t src_lane) -> uint32_t   shfl.sync.idx.b32
//                          with c = 0x1f (__shfl_sync): the source lane is src_lane & 31; a
//                          source outside the mask or exited is undefined (a misuse on the host)
//   P::wgmma_fence(), P::wgmma_commit_group(), P::wgmma_wait_group(N)   wgmma.fence /
//                          commit_group / wait_group .sync.aligned: every thread of the warp
//                          group executes the same sequence of them
//   P::wgmma_mma_async(P::WgmmaAccumulator& acc, a, a_bytes, b, b_bytes)
//                          wgmma.mma_async.sync.aligned with operands in shared memory (a:
//                          nullptr for A in registers): the operands are read until the
//                          wgmma.wait_group that retires its group, so a stage may be released
//                          only after that wait (the host checks it as a race and does not do
//                          the arithmetic). k = b_bytes / 256 steps of m64n8k16.f32.bf16.bf16
//                          into acc, each reading 256 B of B and (A in shared memory) 2 KiB of A,
//                          no swizzle: b_bytes a multiple of 256, a_bytes 8 * b_bytes or 0 (other
//                          sizes are a misuse on the host). Every thread of the warp group
//                          issues it with the same operands (.aligned)
//   P::wgmma_fence_operand(acc)   after the wait, before reading acc (CUTLASS's
//                          warpgroup_fence_operand)
//   P::nanosleep(ns)                                            __nanosleep (no effect on the host)
// Thread identity
//   P::thread_idx(), P::block_dim(), P::block_idx(), P::grid_dim(), P::warp_size(),
//   P::warp_idx(), P::lane_idx(), P::elect_one() (elect.sync over the whole warp: every lane
//                          calls it, true in exactly one)
//   P::shared_memory() -> unsigned char*: the CTA's dynamic shared memory (zero-filled on the
//                          host, so a barrier read before init is seen as uninitialised)
// Plain atomics on 64-bit words in shared or global memory (relaxed; each a scheduling point)
//   P::atomic_load(int64_t*), P::atomic_store(int64_t*, v), P::atomic_fetch_add(int64_t*, v),
//   P::atomic_cas(int64_t*, expected, desired) -> old value
// Data and checks
//   P::load(const T* p) -> T, P::store(T* p, T v): every access to shared or global buffers
//                          goes through these so the host can track it
//   P::label(Barrier&, const char* name, int index): a name for reports, "name[index]" (index
//                          -1: "name"; no-op on GPU)
//   P::label_memory(const void* p, size_t bytes, size_t elem_bytes, const char* name, int index):
//                          optional (the host has it): reports name [p, p+bytes) "name index"
//                          and an address in it by element; spec code calls
//                          label_memory<P>(ptr, count, name, index), which does nothing where
//                          P has no label_memory
//   P::check(bool ok, const char* what): a protocol assertion (host: "assertion" verdict;
//                          device: printf + trap)
// Call sites
//   A Platform may take a CallSite (file, line, function of the protocol code that made the
//   call) as the last argument of any instruction; the host does, so every step of a report
//   names its source line. spec/ code passes its caller's site where P takes one; the device
//   Platform takes none, and nothing of it reaches the GPU.
//
// Phases
//   A wait names the FULL number of the phase whose completion it awaits; phase -1 is the
//   phase before init, complete from the start. Hardware sees only the parity (phase & 1);
//   the host also checks that the phase is the barrier's current or preceding one, which is
//   how it catches phase aliasing (a waiter two phases behind gets a wrong parity answer).
//   The _parity_bit forms take the bit alone. The host reads it as the phase the thread
//   knows complete (through happens-before: its own waits, and what releases and syncs carry
//   from others; -1 at first) when the bit is that phase's parity, else the phase after, and
//   checks that phase as above: a wait answered by a phase two ahead of it is aliasing, and a
//   thread that skips phases others consumed (a persistent ping-pong consumer) is not.
#pragma once

#include <concepts>
#include <cstdint>
#if !defined(__CUDACC__) && defined(__has_include)
#if __has_include(<source_location>)
#include <source_location>  // CallSite's column where __builtin_COLUMN is missing
#endif
#endif

#if defined(__CUDACC__)
#define MBCHECK_HD __host__ __device__
#define MBCHECK_DEVICE __device__
#else
#define MBCHECK_HD
#define MBCHECK_DEVICE
#endif

namespace mbcheck {

// Where protocol code made a Platform call: a defaulted argument, CallSite::current(),
// captures the caller's file and line (the compiler's __builtin_FILE/LINE/FUNCTION).
// The column tells two calls on one line apart (the host's spin recognition needs to know
// the call sites of two polls differ): __builtin_COLUMN where the compiler has it (Clang),
// else std::source_location's (GCC 12, Debian's compiler, has only that: a column of 0 made
// two polls on one line one place); 0 where neither is (device code).
#if defined(__has_builtin) && !defined(__CUDA_ARCH__)
#if __has_builtin(__builtin_COLUMN)
#define MBCHECK_BUILTIN_COLUMN __builtin_COLUMN()
#endif
#endif
#if !defined(MBCHECK_BUILTIN_COLUMN) && !defined(__CUDACC__) && defined(__cpp_lib_source_location)
#define MBCHECK_BUILTIN_COLUMN std::source_location::current().column()
#endif
#ifndef MBCHECK_BUILTIN_COLUMN
#define MBCHECK_BUILTIN_COLUMN 0u
#endif
struct CallSite {
  const char* file = "";
  unsigned line = 0;
  const char* function = "";
  unsigned column = 0;
  MBCHECK_HD static constexpr CallSite current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE(),
                                               const char* function = __builtin_FUNCTION(),
                                               unsigned column = MBCHECK_BUILTIN_COLUMN) {
    return {file, line, function, column};
  }
  MBCHECK_HD constexpr bool same_place(const CallSite& o) const {
    return line == o.line && column == o.column && same_text(file, o.file) && same_text(function, o.function);
  }
  // One literal may have one address per translation unit: compared by content then.
  MBCHECK_HD static constexpr bool same_text(const char* a, const char* b) {
    if (a == b) return true;
    if (!a || !b) return false;
    for (; *a && *a == *b; ++a, ++b) {}
    return *a == *b;
  }
};

// The contract as a concept: both backends are checked against it where they are defined
// (sim/host_platform.hpp, device/platform.cuh), so an operation one of them lacks, or takes
// or returns differently, fails to compile there rather than in a user's kernel. The list
// above says what each operation means; here each group's banner names its PTX.
template <class P>
concept Platform = requires(typename P::Barrier& b, typename P::Token t, typename P::WaitStatus s,
                            typename P::WgmmaAccumulator& acc, std::uint32_t n, std::int64_t phase, void* dst,
                            const void* src, std::int64_t* word, std::uint16_t mask, bool pred, const char* text) {
  // --- mbarrier.init / mbarrier.inval ----------------------------------------------------
  P::mbarrier_init(b, n);
  P::mbarrier_inval(b);
  // --- mbarrier.arrive{.noComplete,.expect_tx,_drop}{.release,.relaxed}.cta.shared::cta ----
  { P::mbarrier_arrive(b, n) } -> std::same_as<typename P::Token>;
  { P::mbarrier_arrive_no_complete(b, n) } -> std::same_as<typename P::Token>;
  { P::mbarrier_arrive_expect_tx(b, n) } -> std::same_as<typename P::Token>;
  { P::mbarrier_arrive_drop(b, n) } -> std::same_as<typename P::Token>;
  { P::mbarrier_arrive_relaxed(b, n) } -> std::same_as<typename P::Token>;
  { P::mbarrier_arrive_expect_tx_relaxed(b, n) } -> std::same_as<typename P::Token>;
  { P::mbarrier_arrive_drop_relaxed(b, n) } -> std::same_as<typename P::Token>;
  // --- mbarrier.expect_tx / complete_tx.relaxed.cta ----------------------------------------
  P::mbarrier_expect_tx(b, n);
  P::mbarrier_complete_tx(b, n);
  // --- mbarrier.test_wait / try_wait{.parity}.acquire.cta, mbarrier.pending_count ----------
  { P::mbarrier_test_wait_parity(b, phase) } -> std::same_as<bool>;
  { P::mbarrier_try_wait_parity(b, phase) } -> std::same_as<bool>;
  { P::mbarrier_test_wait(b, t) } -> std::same_as<bool>;
  { P::mbarrier_try_wait(b, t) } -> std::same_as<bool>;
  { P::mbarrier_pending_count(t) } -> std::same_as<std::uint32_t>;
  P::mbarrier_wait_parity(b, phase);
  P::mbarrier_wait(b, t);
  P::mbarrier_wait_parity_bit(b, n);
  { P::mbarrier_test_wait_parity_bit(b, n) } -> std::same_as<bool>;
  { P::mbarrier_try_wait_parity_bit(b, n) } -> std::same_as<bool>;
  { P::mbarrier_try_wait_parity_bit_status(b, n) } -> std::same_as<typename P::WaitStatus>;
  { P::mbarrier_try_wait_parity_status(b, phase) } -> std::same_as<typename P::WaitStatus>;
  P::mbarrier_wait_status(b, s);
  // --- cp.async.bulk (TMA) and its groups; fence.proxy.async ---------------------------------
  P::cp_async_bulk_global_to_shared(dst, src, n, b);
  P::cp_async_bulk_shared_to_global(dst, src, n);
  P::cp_async_bulk_commit_group();
  P::cp_async_bulk_wait_group_read0();
  P::cp_async_bulk_wait_group_read(n);
  P::cp_async_bulk_wait_group(n);
  P::fence_proxy_async_shared_cta();
  P::fence_proxy_async();
  P::fence_proxy_async_global();
  P::fence_proxy_async_shared_cluster();
  // --- cp.async (non-bulk), its groups, cp.async.mbarrier.arrive{.noinc} --------------------
  P::cp_async(dst, src, n);
  P::cp_async_commit_group();
  P::cp_async_wait_group(n);
  P::cp_async_wait_all();
  P::cp_async_mbarrier_arrive(b);
  P::cp_async_mbarrier_arrive_noinc(b);
  // --- bar.sync / bar.arrive / bar.red (named barriers), __syncthreads ----------------------
  P::sync_threads();
  P::bar_sync(n, n);
  P::bar_arrive(n, n);
  { P::bar_red_popc(n, n, pred) } -> std::same_as<std::uint32_t>;
  { P::bar_red_and(n, n, pred) } -> std::same_as<bool>;
  { P::bar_red_or(n, n, pred) } -> std::same_as<bool>;
  // --- clusters: %cluster_*, mapa, .shared::cluster arrive-on, .acquire.cluster waits, -------
  //     multicast, barrier.cluster
  { P::cluster_ctarank() } -> std::same_as<std::uint32_t>;
  { P::cluster_nctarank() } -> std::same_as<std::uint32_t>;
  { P::cluster_ctaid_x() } -> std::same_as<std::uint32_t>;
  { P::cluster_ctaid_y() } -> std::same_as<std::uint32_t>;
  { P::cluster_dim_x() } -> std::same_as<std::uint32_t>;
  { P::cluster_dim_y() } -> std::same_as<std::uint32_t>;
  { P::cluster_idx() } -> std::same_as<std::uint32_t>;
  { P::map_shared_rank(word, n) } -> std::same_as<std::int64_t*>;
  P::mbarrier_arrive_cluster(b, n);
  P::mbarrier_arrive_cluster_if(b, n, pred);
  P::mbarrier_complete_tx_cluster(b, n, n);
  P::mbarrier_arrive_expect_tx_cluster(b, n, n);
  P::mbarrier_wait_parity_cluster(b, phase);
  P::mbarrier_wait_parity_bit_cluster(b, n);
  P::cp_async_bulk_global_to_shared_multicast(dst, src, n, b, mask);
  P::barrier_cluster_arrive();
  P::barrier_cluster_arrive_relaxed();
  P::barrier_cluster_wait();
  P::barrier_cluster_arrive_aligned();
  P::barrier_cluster_arrive_relaxed_aligned();
  P::barrier_cluster_wait_aligned();
  P::fence_mbarrier_init_release_cluster();
  // --- bar.warp.sync, elect.sync, shfl.sync; wgmma fence / mma_async / commit / wait ---------
  P::syncwarp(n);
  { P::elect_sync(n) } -> std::same_as<bool>;
  { P::shfl_sync_idx(n, n, n) } -> std::same_as<std::uint32_t>;
  P::wgmma_fence();
  P::wgmma_mma_async(acc, src, n, src, n);
  P::wgmma_commit_group();
  P::wgmma_wait_group(n);
  P::wgmma_fence_operand(acc);
  P::nanosleep(n);
  // --- thread identity (%tid, %ntid, %ctaid, %nctaid, %laneid) and shared memory ------------
  { P::thread_idx() } -> std::same_as<std::uint32_t>;
  { P::block_dim() } -> std::same_as<std::uint32_t>;
  { P::block_idx() } -> std::same_as<std::uint32_t>;
  { P::grid_dim() } -> std::same_as<std::uint32_t>;
  { P::warp_size() } -> std::same_as<std::uint32_t>;
  { P::warp_idx() } -> std::same_as<std::uint32_t>;
  { P::lane_idx() } -> std::same_as<std::uint32_t>;
  { P::elect_one() } -> std::same_as<bool>;
  { P::shared_memory() } -> std::same_as<unsigned char*>;
  // --- ld/st.relaxed and atom.{add,cas} on 64-bit words; tracked data; checks ----------------
  { P::atomic_load(word) } -> std::same_as<std::int64_t>;
  P::atomic_store(word, phase);
  { P::atomic_fetch_add(word, phase) } -> std::same_as<std::int64_t>;
  { P::atomic_cas(word, phase, phase) } -> std::same_as<std::int64_t>;
  { P::load(word) } -> std::same_as<std::int64_t>;
  P::store(word, phase);
  P::label(b, text, 0);
  P::check(pred, text);
};

// Bytes the barrier array of `count` barriers takes, rounded up so that what follows it is
// 128-byte aligned (TMA destinations need 16; 128 keeps stage buffers on their own lines).
template <class P>
MBCHECK_HD constexpr std::uint32_t barrier_bytes(std::uint32_t count) {
  return (static_cast<std::uint32_t>(sizeof(typename P::Barrier)) * count + 127u) & ~127u;
}

// Names `count` elements at `ptr` for reports ("data race on 'C stage 1'[576]"), where P
// can (the host); nothing on the device.
template <class P, class T>
MBCHECK_HD void label_memory(const T* ptr, std::uint64_t count, const char* name, int index = -1) {
  if constexpr (requires { P::label_memory(ptr, count * sizeof(T), sizeof(T), name, index); })
    P::label_memory(ptr, count * sizeof(T), sizeof(T), name, index);
}

}  // namespace mbcheck
