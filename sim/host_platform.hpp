// The Platform contract (spec/platform.hpp) on the host: every barrier
// instruction, bulk copy and block sync is a scheduling point of the fiber
// runtime; the emulator (sim/runtime/mbarrier.hpp) gives it its meaning.
#pragma once

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

// Last in a blocking wait called by protocol code: on a bool try's probe, its return zeroes
// the stack below its caller (sim/runtime/guarded_tries.hpp, zero_on_return). `args`, `bytes`:
// its parameters passed in memory (the caller's outgoing-argument area, the callee's by the
// ABI: dead in the caller once the call returns), which the probe does not compare.
[[gnu::always_inline]] inline void zero_on_probe_return(void* frame, const void* args = nullptr,
                                                        std::size_t bytes = 0) {
  Runtime& r = Runtime::current();
  if (r.guard_probing()) [[unlikely]]
    r.guard_probe_wait_returns(frame, args, bytes);  // out of line: no instrumented write of it
}

// Every instruction takes the protocol's call site last (the Platform
// contract's CallSite), so each step of a report names the source line that
// made it. By reference: a by-value CallSite is copied in 16-byte loads from
// the caller's narrower stores, which stalls store forwarding (Runtime::at
// copies it field by field).
struct HostPlatform {
  using Barrier = MbarrierState;
  using Token = MbarrierToken;
  using WaitStatus = TryWaitStatus;

  static Runtime& rt() { return Runtime::current(); }

  // mbarrier instructions
  // PTX: mbarrier.init.shared::cta.b64
  static void mbarrier_init(Barrier& b, std::uint32_t count, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().barrier_op(OpKind::init, b, count);
  }
  // PTX: mbarrier.inval.shared::cta.b64
  static void mbarrier_inval(Barrier& b, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().barrier_op(OpKind::inval, b);
  }
  // PTX: mbarrier.arrive.release.cta.shared::cta.b64
  static Token mbarrier_arrive(Barrier& b, std::uint32_t count = 1, const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().barrier_op(OpKind::arrive, b, count);
  }
  // PTX: mbarrier.arrive.noComplete.release.cta.shared::cta.b64
  static Token mbarrier_arrive_no_complete(Barrier& b, std::uint32_t count,
                                           const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().barrier_op(OpKind::arrive, b, count, true);
  }
  // PTX: mbarrier.arrive.expect_tx.release.cta.shared::cta.b64
  static Token mbarrier_arrive_expect_tx(Barrier& b, std::uint32_t bytes, const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().barrier_op(OpKind::arrive_expect_tx, b, bytes);
  }
  // PTX: mbarrier.arrive_drop.release.cta.shared::cta.b64
  static Token mbarrier_arrive_drop(Barrier& b, std::uint32_t count = 1, const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().barrier_op(OpKind::arrive_drop, b, count);
  }
  // PTX 8.6 .relaxed forms (mbarrier.arrive{.expect_tx,_drop}.relaxed.cta): the same arrive-on,
  // ordering none of the thread's memory operations (ops.def: order relaxed).
  // PTX: mbarrier.arrive.relaxed.cta.shared::cta.b64
  static Token mbarrier_arrive_relaxed(Barrier& b, std::uint32_t count = 1,
                                       const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().barrier_op(OpKind::arrive_relaxed, b, count);
  }
  // PTX: mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64
  static Token mbarrier_arrive_expect_tx_relaxed(Barrier& b, std::uint32_t bytes,
                                                 const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().barrier_op(OpKind::arrive_expect_tx_relaxed, b, bytes);
  }
  // PTX: mbarrier.arrive_drop.relaxed.cta.shared::cta.b64
  static Token mbarrier_arrive_drop_relaxed(Barrier& b, std::uint32_t count = 1,
                                            const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().barrier_op(OpKind::arrive_drop_relaxed, b, count);
  }
  // PTX: mbarrier.expect_tx.relaxed.cta.shared::cta.b64
  static void mbarrier_expect_tx(Barrier& b, std::uint32_t bytes, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().barrier_op(OpKind::expect_tx, b, bytes);
  }
  // PTX: mbarrier.complete_tx.relaxed.cta.shared::cta.b64
  static void mbarrier_complete_tx(Barrier& b, std::uint32_t bytes, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().barrier_op(OpKind::complete_tx, b, bytes);
  }
  // Blocking waits are calls of their own (noinline): inlined, they left values in the caller's
  // callee-saved registers that a path without the wait lacks, and a bool try_wait guarding one
  // could never be seen to meet it (sim/runtime/guarded_tries.cpp).
  // PTX: loop of mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  [[gnu::noinline]] static void mbarrier_wait_parity(Barrier& b, std::int64_t phase,
                                                     const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait(b, phase);
    zero_on_probe_return(__builtin_frame_address(0));
  }
  // Polls first capture the caller's state (poll() is inlined into it): a poll
  // repeated from exactly that state is a spin iteration (sim/runtime/runtime.hpp).
  // PTX: mbarrier.test_wait.parity.acquire.cta.shared::cta.b64
  [[gnu::always_inline]] static bool mbarrier_test_wait_parity(Barrier& b, std::int64_t phase,
                                                               const CallSite& site = CallSite::current()) {
    rt().at(site);
    return poll(b, phase, OpKind::test_wait, nullptr);
  }
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  [[gnu::always_inline]] static bool mbarrier_try_wait_parity(Barrier& b, std::int64_t phase,
                                                              const CallSite& site = CallSite::current()) {
    rt().at(site);
    return poll(b, phase, OpKind::try_wait, nullptr);
  }
  // PTX: mbarrier.test_wait.acquire.cta.shared::cta.b64
  [[gnu::always_inline]] static bool mbarrier_test_wait(Barrier& b, Token t,
                                                        const CallSite& site = CallSite::current()) {
    rt().at(site);
    return poll(b, t.phase, OpKind::test_wait, &t);
  }
  // PTX: mbarrier.try_wait.acquire.cta.shared::cta.b64
  [[gnu::always_inline]] static bool mbarrier_try_wait(Barrier& b, Token t,
                                                       const CallSite& site = CallSite::current()) {
    rt().at(site);
    return poll(b, t.phase, OpKind::try_wait, &t);
  }
  // Parity-only forms (the PTX operand as CUTLASS passes it: a phase bit). The host reads
  // the bit against what the thread knows of the barrier (Runtime::phase_for_parity).
  // PTX: loop of mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  [[gnu::noinline]] static void mbarrier_wait_parity_bit(Barrier& b, std::uint32_t parity,
                                                         const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait(b, rt().phase_for_parity(b, parity));
    zero_on_probe_return(__builtin_frame_address(0));
  }
  // PTX: mbarrier.test_wait.parity.acquire.cta.shared::cta.b64
  [[gnu::always_inline]] static bool mbarrier_test_wait_parity_bit(Barrier& b, std::uint32_t parity,
                                                                   const CallSite& site = CallSite::current()) {
    rt().at(site);
    return poll(b, rt().phase_for_parity(b, parity), OpKind::test_wait, nullptr);
  }
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  [[gnu::always_inline]] static bool mbarrier_try_wait_parity_bit(Barrier& b, std::uint32_t parity,
                                                                  const CallSite& site = CallSite::current()) {
    rt().at(site);
    return poll(b, rt().phase_for_parity(b, parity), OpKind::try_wait, nullptr);
  }
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  static WaitStatus mbarrier_try_wait_parity_bit_status(Barrier& b, std::uint32_t parity,
                                                        const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().try_wait_status(b, rt().phase_for_parity(b, parity));
  }
  // PTX: mbarrier.pending_count.b64
  static std::uint32_t mbarrier_pending_count(Token t) { return rt().pending_count(t); }
  // Blocking wait on the phase of a state token (try_wait with the token, in a loop).
  // mbarrier.try_wait.parity.acquire.cluster in a loop: the acquire synchronizes with a peer
  // CTA's .release.cluster arrive too (the .cta forms above do not: RaceDetector::release).
  // PTX: loop of mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
  static void mbarrier_wait_parity_cluster(Barrier& b, std::int64_t phase, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait(b, phase, Runtime::Acquire::cluster);
  }
  // PTX: loop of mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
  static void mbarrier_wait_parity_bit_cluster(Barrier& b, std::uint32_t parity,
                                               const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait(b, rt().phase_for_parity(b, parity), Runtime::Acquire::cluster);
  }
  // PTX: loop of mbarrier.try_wait.acquire.cta.shared::cta.b64
  static void mbarrier_wait(Barrier& b, Token t, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait_token(b, t);
  }
  // try_wait.parity whose answer only mbarrier_wait_status reads: deferred to the thread's
  // next event (sim/runtime/runtime.hpp), so that try-then-wait costs what one wait does.
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  static WaitStatus mbarrier_try_wait_parity_status(Barrier& b, std::int64_t phase,
                                                    const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().try_wait_status(b, phase);
  }
  // PTX: loop of mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  static void mbarrier_wait_status(Barrier& b, WaitStatus status, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait_status(b, status);
  }

  // async copies, fences, block sync
  // PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
  static void cp_async_bulk_global_to_shared(void* smem, const void* gmem, std::uint32_t bytes, Barrier& b,
                                             const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().bulk_copy(smem, gmem, bytes, b);
  }
  // cp.async.bulk.global.shared::cta.bulk_group: a TMA store of `bytes` from
  // smem.
  // PTX: cp.async.bulk.global.shared::cta.bulk_group
  static void cp_async_bulk_shared_to_global(void* gmem, const void* smem, std::uint32_t bytes,
                                             const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().bulk_store(gmem, smem, bytes);
  }
  // PTX: cp.async.bulk.commit_group
  static void cp_async_bulk_commit_group(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().commit_group(GroupKind::bulk_store);
  }
  // cp.async.bulk.wait_group.read 0: every committed store of this thread has
  // read its source.
  // PTX: cp.async.bulk.wait_group.read 0
  static void cp_async_bulk_wait_group_read0(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait_group(OpKind::bulk_wait_read, 0);
  }
  // cp.async.bulk.wait_group.read N: all but the newest N committed groups have read smem.
  // PTX: cp.async.bulk.wait_group.read N
  static void cp_async_bulk_wait_group_read(std::uint32_t pending, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait_group(OpKind::bulk_wait_read, pending);
  }
  // cp.async.bulk.wait_group N: the same groups have also written global memory, visible to
  // this thread (a store reads and writes in two steps: .read waits for the first only).
  // PTX: cp.async.bulk.wait_group N
  static void cp_async_bulk_wait_group(std::uint32_t pending, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait_group(OpKind::bulk_wait, pending);
  }
  // cp.async (non-bulk, sim/runtime/cp_async.cpp)
  // PTX: cp.async.ca.shared::cta.global
  static void cp_async(void* smem, const void* gmem, std::uint32_t bytes, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().cp_async(smem, gmem, bytes);
  }
  // PTX: cp.async.commit_group
  static void cp_async_commit_group(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().commit_group(GroupKind::cp_async);
  }
  // PTX: cp.async.wait_group N
  static void cp_async_wait_group(std::uint32_t pending, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wait_group(OpKind::cp_async_wait, pending);
  }
  // cp.async.wait_all: commit_group, then wait_group 0.
  // PTX: cp.async.wait_all
  static void cp_async_wait_all(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().commit_group(GroupKind::cp_async);
    rt().wait_group(OpKind::cp_async_wait, 0);
  }
  // PTX: cp.async.mbarrier.arrive.shared::cta.b64
  static void cp_async_mbarrier_arrive(Barrier& b, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().cp_async_mbarrier_arrive(b, false);
  }
  // PTX: cp.async.mbarrier.arrive.noinc.shared::cta.b64
  static void cp_async_mbarrier_arrive_noinc(Barrier& b, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().cp_async_mbarrier_arrive(b, true);
  }
  // This thread's ordinary stores so far become visible to the async proxy, and its ordinary
  // loads so far are ordered before the async proxy's later writes (race detector).
  // PTX: fence.proxy.async.shared::cta
  static void fence_proxy_async_shared_cta(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().fence_proxy_async(kFenceSharedCta);
  }
  // fence.proxy.async.shared::cluster: this CTA's and its peers' shared memory.
  // PTX: fence.proxy.async.shared::cluster
  static void fence_proxy_async_shared_cluster(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().fence_proxy_async(kFenceSharedCluster);
  }
  // fence.proxy.async.global
  // PTX: fence.proxy.async.global
  static void fence_proxy_async_global(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().fence_proxy_async(kFenceGlobal);
  }
  // fence.proxy.async: every state space.
  // PTX: fence.proxy.async
  static void fence_proxy_async(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().fence_proxy_async(kFenceAll);
  }
  // bar.sync id, count / bar.arrive id, count: named barrier `id` (0..15) of this CTA for
  // `count` threads (a multiple of the warp size).
  // PTX: bar.sync a, b
  static void bar_sync(std::uint32_t id, std::uint32_t count, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().named_barrier(id, count, true);
  }
  // PTX: bar.arrive a, b
  static void bar_arrive(std::uint32_t id, std::uint32_t count, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().named_barrier(id, count, false);
  }
  // clusters (sim/runtime/cluster.cpp)
  // PTX: mov.u32 %cluster_ctarank
  static std::uint32_t cluster_ctarank() { return rt().cluster_rank(); }
  // PTX: mov.u32 %cluster_nctarank
  static std::uint32_t cluster_nctarank() { return rt().launch().cluster_size(); }
  // PTX: mov.u32 %clusterid.x, %clusterid.y, %nclusterid.x
  static std::uint32_t cluster_idx() { return block_idx() / cluster_nctarank(); }
  // PTX: mov.u32 %cluster_nctaid.x
  static std::uint32_t cluster_dim_x() { return rt().launch().cluster_x; }
  // PTX: mov.u32 %cluster_nctaid.y
  static std::uint32_t cluster_dim_y() { return rt().launch().cluster_y; }
  // PTX: mov.u32 %cluster_ctaid.x
  static std::uint32_t cluster_ctaid_x() { return cluster_ctarank() % cluster_dim_x(); }
  // PTX: mov.u32 %cluster_ctaid.y
  static std::uint32_t cluster_ctaid_y() { return cluster_ctarank() / cluster_dim_x(); }
  // PTX: mapa.u64
  template <class T>
  static T* map_shared_rank(T* p, std::uint32_t rank, const CallSite& site = CallSite::current()) {
    rt().at(site);
    return static_cast<T*>(rt().map_shared_rank(p, rank));
  }
  // PTX: mbarrier.arrive.release.cluster.shared::cluster.b64
  static void mbarrier_arrive_cluster(Barrier& b, std::uint32_t cta_rank, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().barrier_op_remote({OpKind::arrive, &b, 1}, cta_rank);
  }
  // PTX: @p mbarrier.arrive.release.cluster.shared::cluster.b64
  static void mbarrier_arrive_cluster_if(Barrier& b, std::uint32_t cta_rank, bool pred,
                                         const CallSite& site = CallSite::current()) {
    if (pred) mbarrier_arrive_cluster(b, cta_rank, site);
  }
  // PTX: mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64
  static void mbarrier_complete_tx_cluster(Barrier& b, std::uint32_t cta_rank, std::uint32_t bytes,
                                           const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().barrier_op_remote({OpKind::complete_tx, &b, bytes}, cta_rank);
  }
  // PTX: mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64
  static void mbarrier_arrive_expect_tx_cluster(Barrier& b, std::uint32_t bytes, std::uint32_t cta_rank,
                                                const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().barrier_op_remote({OpKind::arrive_expect_tx, &b, bytes}, cta_rank);
  }
  // PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
  static void cp_async_bulk_global_to_shared_multicast(void* smem, const void* gmem, std::uint32_t bytes, Barrier& b,
                                                       std::uint16_t cta_mask,
                                                       const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().bulk_copy_multicast(smem, gmem, bytes, b, cta_mask);
  }
  // PTX: barrier.cluster.arrive.release
  static void barrier_cluster_arrive(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().cluster_arrive(false);
  }
  // PTX: barrier.cluster.arrive.relaxed
  static void barrier_cluster_arrive_relaxed(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().cluster_arrive(true);
  }
  // PTX: barrier.cluster.wait.acquire
  static void barrier_cluster_wait(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().cluster_wait();
  }
  // The .aligned forms: the same on the host (every lane of the warp must execute them on the GPU).
  // PTX: barrier.cluster.arrive.release.aligned
  static void barrier_cluster_arrive_aligned(const CallSite& site = CallSite::current()) {
    barrier_cluster_arrive(site);
  }
  // PTX: barrier.cluster.arrive.relaxed.aligned
  static void barrier_cluster_arrive_relaxed_aligned(const CallSite& site = CallSite::current()) {
    barrier_cluster_arrive_relaxed(site);
  }
  // PTX: barrier.cluster.wait.acquire.aligned
  static void barrier_cluster_wait_aligned(const CallSite& site = CallSite::current()) { barrier_cluster_wait(site); }
  // PTX: fence.mbarrier_init.release.cluster
  static void fence_mbarrier_init_release_cluster(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().fence_mbarrier_init();
  }

  // warp and warp-group collectives: rendezvous (sim/runtime/collectives.cpp)
  // PTX: bar.warp.sync membermask
  static void syncwarp(std::uint32_t mask = 0xffffffffu, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().syncwarp(mask);
  }
  // PTX: elect.sync _|p, membermask
  static bool elect_sync(std::uint32_t mask = 0xffffffffu, const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().elect_sync(mask);
  }
  // PTX: shfl.sync.idx.b32 d, a, b, 0x1f, membermask
  static std::uint32_t shfl_sync_idx(std::uint32_t mask, std::uint32_t value, std::uint32_t src_lane,
                                     const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().shfl_sync(mask, value, src_lane);
  }
  // PTX: wgmma.fence.sync.aligned
  static void wgmma_fence(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().warpgroup_collective("wgmma.fence");
  }
  // wgmma.mma_async's shared-memory operands: `a` (nullptr when A is in registers) and `b`,
  // read by the async proxy until the wgmma.wait_group that retires the group this MMA is
  // committed in (sim/runtime/async_groups.cpp). The arithmetic is not modelled: the
  // accumulator is left as it is (the device backend accumulates into it).
  struct WgmmaAccumulator {
    float d[4] = {};
  };
  // PTX: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16
  static void wgmma_mma_async(WgmmaAccumulator& /*acc*/, const void* a, std::uint32_t a_bytes, const void* b,
                              std::uint32_t b_bytes, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().wgmma_mma_async(a, a_bytes, b, b_bytes);
  }
  // warpgroup_fence_operand: keeps the compiler from moving the accumulator's registers
  // across the wait on the device; nothing to do on the host.
  // PTX: none (a compiler fence on the accumulator registers)
  static void wgmma_fence_operand(WgmmaAccumulator&) {}
  // PTX: wgmma.commit_group.sync.aligned
  static void wgmma_commit_group(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().commit_group(GroupKind::wgmma);  // by the group's first thread, before the others may leave
    rt().warpgroup_collective("wgmma.commit_group");
  }
  // PTX: wgmma.wait_group.sync.aligned N
  static void wgmma_wait_group(std::uint32_t pending, const CallSite& site = CallSite::current()) {
    rt().at(site);
    if (!rt().warpgroup_collective("wgmma.wait_group", pending)) return;
    rt().wait_group(OpKind::wgmma_wait, pending);
  }
  // __nanosleep: a hint with no effect on what can happen (a spin loop with it is still a spin).
  // PTX: nanosleep.u32
  static void nanosleep(std::uint32_t) {}

  // bar.red.popc.u32 / bar.red.and.pred / bar.red.or.pred id, count, pred: bar.sync that
  // reduces the participants' predicates.
  // PTX: bar.red.popc.u32 d, a, b, c
  static std::uint32_t bar_red_popc(std::uint32_t id, std::uint32_t count, bool pred,
                                    const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().bar_red(id, count, Runtime::BarReduction::popc, pred);
  }
  // PTX: bar.red.and.pred p, a, b, c
  static bool bar_red_and(std::uint32_t id, std::uint32_t count, bool pred,
                          const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().bar_red(id, count, Runtime::BarReduction::all, pred) != 0;
  }
  // PTX: bar.red.or.pred p, a, b, c
  static bool bar_red_or(std::uint32_t id, std::uint32_t count, bool pred, const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().bar_red(id, count, Runtime::BarReduction::any, pred) != 0;
  }
  // PTX: bar.sync 0
  static void sync_threads(const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().block_sync();
  }

  // thread identity
  // PTX: mov.u32 %tid.x
  static std::uint32_t thread_idx() { return rt().self().thread; }
  // PTX: mov.u32 %clusterid, %nclusterid.x, %cluster_nctarank, %cluster_ctarank
  static std::uint32_t block_idx() { return rt().self().cta; }
  // PTX: mov.u32 %ntid.x
  static std::uint32_t block_dim() { return rt().launch().threads_per_cta; }
  // PTX: mov.u32 %nctaid.x, %nctaid.y
  static std::uint32_t grid_dim() { return rt().launch().ctas; }
  // PTX: WARP_SZ
  static std::uint32_t warp_size() { return rt().launch().warp_size; }
  // PTX: mov.u32 %tid.x (divided by 32)
  static std::uint32_t warp_idx() { return thread_idx() / warp_size(); }
  // PTX: mov.u32 %tid.x (modulo 32)
  static std::uint32_t lane_idx() { return thread_idx() % warp_size(); }
  // elect.sync over the whole warp, as the device issues it (CUTLASS's elect_one_sync): every
  // lane must reach it, and the lanes converge there.
  // PTX: elect.sync _|p, 0xffffffff
  static bool elect_one(const CallSite& site = CallSite::current()) { return elect_sync(0xffffffffu, site); }
  // PTX: none (the CTA's dynamic .shared window)
  static unsigned char* shared_memory() { return rt().shared_memory(); }

  // plain atomics on 64-bit words (each one a scheduling point)
  // Inline into the caller, so that a load loop's state is the protocol's (spin recognition).
  // PTX: ld.relaxed.gpu.b64
  [[gnu::always_inline]] static std::int64_t atomic_load(std::int64_t* p, const CallSite& site = CallSite::current()) {
    Runtime& r = rt();
    r.at(site);
    if (r.load_wants_state(p, program_counter())) r.capture_poll_state();
    return r.atomic(OpKind::atomic_load, p, 0);
  }
  // PTX: st.relaxed.gpu.b64
  static void atomic_store(std::int64_t* p, std::int64_t v, const CallSite& site = CallSite::current()) {
    rt().at(site);
    rt().atomic(OpKind::atomic_store, p, v);
  }
  // PTX: atom.add.relaxed.gpu.u64
  static std::int64_t atomic_fetch_add(std::int64_t* p, std::int64_t v, const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().atomic(OpKind::atomic_fetch_add, p, v);
  }
  // Returns the old value; stores `desired` when it equals `expected`.
  // PTX: atom.cas.relaxed.gpu.b64
  static std::int64_t atomic_cas(std::int64_t* p, std::int64_t expected, std::int64_t desired,
                                 const CallSite& site = CallSite::current()) {
    rt().at(site);
    return rt().atomic(OpKind::atomic_cas, p, desired, expected);
  }

  // data and checks
  // PTX: ld (weak)
  template <class T>
  static T load(const T* p, const CallSite& site = CallSite::current()) {
    rt().data_access(p, sizeof(T), false, site);
    return *p;
  }
  // PTX: st (weak)
  template <class T>
  static void store(T* p, T v, const CallSite& site = CallSite::current()) {
    rt().data_access(p, sizeof(T), true, site);
    *p = v;
  }
  // PTX: none (a name for reports)
  static void label(Barrier& b, const char* name, int index) { rt().label(b, name, index); }
  static void label_memory(const void* p, std::size_t bytes, std::size_t elem_bytes, const char* name, int index) {
    rt().label_memory(p, bytes, elem_bytes, name, index);
  }
  // PTX: trap (after a printf)
  static void check(bool ok, const char* what) {
    if (!ok) rt().check_failed(what);
  }

 private:
  [[gnu::always_inline]] static bool poll(Barrier& b, std::int64_t phase, OpKind kind, const Token* token) {
    Runtime& r = rt();
    r.capture_poll_state();
    return r.test_wait(b, phase, kind, token);
  }
};

static_assert(Platform<HostPlatform>, "the host backend must model the Platform contract (spec/platform.hpp)");

}  // namespace mbcheck::sim
