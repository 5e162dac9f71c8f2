// cutlass/arch/barrier.h on the host. CUTLASS's own header is compiled with its barrier types
// and fences under other names (off the GPU they do nothing); these take their names. Each
// member is the Platform call of the PTX instruction CUTLASS's member issues, on the barrier
// whose 8-byte word is at the given shared-memory address (its state lives elsewhere:
// thread_identity.hpp). Every member takes its caller's source line last, so a report names
// the line of sm90_pipeline.hpp (or the kernel) that made the call.
#pragma once

#include "cutlass/cutlass.h"

#include <cutlass/arch/memory_sm75.h>
#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/copy_sm100_tma.hpp>
#include <cutlass/arch/config.h>

#include "mbcheck/cutlass_host/faults.hpp"
#include "mbcheck/cutlass_host/thread_identity.hpp"

#define ClusterBarrier cutlass_original_ClusterBarrier
#define ClusterTransactionBarrier cutlass_original_ClusterTransactionBarrier
#define NamedBarrier cutlass_original_NamedBarrier
#define fence_barrier_init cutlass_original_fence_barrier_init
#define fence_view_async_shared cutlass_original_fence_view_async_shared
#define fence_view_shared cutlass_original_fence_view_shared
#define cpasync_barrier_arrive cutlass_original_cpasync_barrier_arrive
#define cpasync_barrier_arrive_noinc cutlass_original_cpasync_barrier_arrive_noinc
#include_next <cutlass/arch/barrier.h>
#undef ClusterBarrier
#undef ClusterTransactionBarrier
#undef NamedBarrier
#undef fence_barrier_init
#undef fence_view_async_shared
#undef fence_view_shared
#undef cpasync_barrier_arrive
#undef cpasync_barrier_arrive_noinc

namespace cutlass::arch {

namespace host_detail {
using P = ::mbcheck::sim::HostPlatform;
using Site = ::mbcheck::CallSite;
inline ::mbcheck::sim::MbarrierState& state(std::uint64_t const* p, Site site) {
  return ::mbcheck::cutlass_host::barrier_state(p, site);
}
}  // namespace host_detail

// bar.sync / bar.arrive on a named barrier (ids 0..15; CUTLASS reserves the first few).
class NamedBarrier {
  using Site = ::mbcheck::CallSite;
  uint32_t const num_threads_;
  uint32_t const id_;

 public:
  static const uint32_t ReservedNamedBarrierCount = static_cast<uint32_t>(ReservedNamedBarriers::FirstUserBarrier);
  static const uint32_t HardwareMaxNumNamedBarriers = 16;

  NamedBarrier(uint32_t num_threads, ReservedNamedBarriers reserved)
      : num_threads_(num_threads), id_(static_cast<uint32_t>(reserved)) {}
  NamedBarrier(uint32_t num_threads, uint32_t id = 0) : num_threads_(num_threads), id_(id + ReservedNamedBarrierCount) {}

  void arrive_and_wait(Site site = Site::current()) const { arrive_and_wait_internal(num_threads_, id_, site); }
  void arrive_and_wait_unaligned(Site site = Site::current()) const {
    arrive_and_wait_internal(num_threads_, id_, site);
  }
  void arrive(Site site = Site::current()) const { arrive_internal(num_threads_, id_, site); }
  void arrive_unaligned(Site site = Site::current()) const { arrive_internal(num_threads_, id_, site); }
  void sync(Site site = Site::current()) const { arrive_and_wait_internal(num_threads_, id_, site); }

  static void arrive_and_wait(uint32_t num_threads, uint32_t barrier_id, Site site = Site::current()) {
    arrive_and_wait_internal(num_threads, barrier_id + ReservedNamedBarrierCount, site);
  }
  static void arrive_and_wait(uint32_t num_threads, ReservedNamedBarriers reserved, Site site = Site::current()) {
    arrive_and_wait_internal(num_threads, static_cast<uint32_t>(reserved), site);
  }
  static void arrive(uint32_t num_threads, uint32_t barrier_id, Site site = Site::current()) {
    arrive_internal(num_threads, barrier_id + ReservedNamedBarrierCount, site);
  }
  static void arrive(uint32_t num_threads, ReservedNamedBarriers reserved, Site site = Site::current()) {
    arrive_internal(num_threads, static_cast<uint32_t>(reserved), site);
  }
  static void sync(uint32_t num_threads, uint32_t barrier_id, Site site = Site::current()) {
    arrive_and_wait(num_threads, barrier_id, site);
  }
  static void sync(uint32_t num_threads, ReservedNamedBarriers reserved, Site site = Site::current()) {
    arrive_and_wait(num_threads, reserved, site);
  }

 private:
  static void arrive_and_wait_internal(uint32_t num_threads, uint32_t id, Site site) {
    host_detail::P::bar_sync(id, num_threads, site);
  }
  static void arrive_internal(uint32_t num_threads, uint32_t id, Site site) {
    host_detail::P::bar_arrive(id, num_threads, site);
  }
};

// An mbarrier: the 8-byte word CUTLASS aliases onto shared memory.
struct ClusterBarrier {
  using ValueType = uint64_t;
  using Site = ::mbcheck::CallSite;

 protected:
  ValueType barrier_;

 public:
  ClusterBarrier() = delete;

  void init(uint32_t arrive_count, Site site = Site::current()) const { init(&barrier_, arrive_count, site); }
  bool test_wait(uint32_t phase, uint32_t pred = true, Site site = Site::current()) const {
    return test_wait(&barrier_, phase, pred, site);
  }
  bool try_wait(uint32_t phase, Site site = Site::current()) const { return try_wait(&barrier_, phase, site); }
  void wait(uint32_t phase, Site site = Site::current()) const { wait(&barrier_, phase, site); }
  void arrive(Site site = Site::current()) const { arrive(&barrier_, site); }
  void arrive(uint32_t cta_id, uint32_t pred = true, Site site = Site::current()) const {
    arrive(&barrier_, cta_id, pred, site);
  }

  // mbarrier.init.shared::cta.b64
  static void init(ValueType const* smem_ptr, uint32_t arrive_count, Site site = Site::current()) {
    auto& b = host_detail::state(smem_ptr, site);
    host_detail::P::mbarrier_init(b, arrive_count, site);
    host_detail::P::label(b, "smem_u64", static_cast<int>(::mbcheck::cutlass_host::window_offset(smem_ptr) / 8));
  }
  // mbarrier.try_wait.parity in a loop (an empty barrier's wait may be held back by a fault)
  // A call of its own (noinline), as HostPlatform's blocking waits are: inlined, it left values
  // in its caller's registers and frame that the path where a bool try_wait answered true lacks,
  // and CUTLASS's consumer_try_wait / consumer_wait pair never met (sim/runtime/guarded_tries.cpp).
  [[gnu::noinline]] static void wait(ValueType const* smem_ptr, uint32_t phase, Site site = Site::current()) {
    if (!::mbcheck::cutlass_host::empty_wait_now(smem_ptr, phase)) return;
    host_detail::P::mbarrier_wait_parity_bit(host_detail::state(smem_ptr, site), phase & 1u, site);
    ::mbcheck::sim::zero_on_probe_return(__builtin_frame_address(0), &site, sizeof site);  // site: in memory
  }
  // mbarrier.test_wait.parity under a predicate (false when the predicate is)
  static bool test_wait(ValueType const* smem_ptr, uint32_t phase, uint32_t pred, Site site = Site::current()) {
    if (!pred) return false;
    return host_detail::P::mbarrier_test_wait_parity_bit(host_detail::state(smem_ptr, site), phase & 1u, site);
  }
  // mbarrier.try_wait.parity (once)
  static bool try_wait(ValueType const* smem_ptr, uint32_t phase, Site site = Site::current()) {
    return host_detail::P::mbarrier_try_wait_parity_bit(host_detail::state(smem_ptr, site), phase & 1u, site);
  }
  // mapa + mbarrier.arrive.release.cluster.shared::cluster under a predicate
  static void arrive(ValueType const* smem_ptr, uint32_t cta_id, uint32_t pred, Site site = Site::current()) {
    if (!pred || !::mbcheck::cutlass_host::release_arrives()) return;
    host_detail::P::mbarrier_arrive_cluster(host_detail::state(smem_ptr, site), cta_id, site);
  }
  // mbarrier.arrive.shared::cta.b64
  static void arrive(ValueType const* smem_ptr, Site site = Site::current()) {
    if (!::mbcheck::cutlass_host::release_arrives()) return;
    host_detail::P::mbarrier_arrive(host_detail::state(smem_ptr, site), 1, site);
  }
  // mbarrier.inval.shared::cta.b64
  static void invalidate(ValueType const* smem_ptr, Site site = Site::current()) {
    host_detail::P::mbarrier_inval(host_detail::state(smem_ptr, site), site);
  }
};

// An mbarrier that also counts transaction bytes. Its waits are a full barrier's (the fault
// hooks tell them from an empty barrier's by the type).
struct ClusterTransactionBarrier : public ClusterBarrier {
  ClusterTransactionBarrier() = delete;

  void wait(uint32_t phase, Site site = Site::current()) const { wait(&barrier_, phase, site); }
  void arrive(Site site = Site::current()) const { arrive(&barrier_, site); }
  void arrive(uint32_t cta_id, uint32_t pred = true, Site site = Site::current()) const {
    arrive(&barrier_, cta_id, pred, site);
  }
  void arrive_and_expect_tx(uint32_t bytes, Site site = Site::current()) const {
    arrive_and_expect_tx(&barrier_, bytes, site);
  }
  void arrive_and_expect_tx(uint32_t bytes, uint32_t cta_id, uint32_t pred = 1u, Site site = Site::current()) const {
    arrive_and_expect_tx(&barrier_, bytes, cta_id, pred, site);
  }
  void expect_transaction(uint32_t bytes, Site site = Site::current()) const {
    expect_transaction(&barrier_, bytes, site);
  }
  void complete_transaction(uint32_t bytes, uint32_t pred = 1, Site site = Site::current()) const {
    complete_transaction(&barrier_, cute::block_rank_in_cluster(), bytes, pred, site);
  }
  void complete_transaction(uint32_t dst_cta_id, uint32_t bytes, uint32_t pred, Site site = Site::current()) const {
    complete_transaction(&barrier_, dst_cta_id, bytes, pred, site);
  }
  void arrive_and_reset_bytes(uint32_t bytes, Site site = Site::current()) const { arrive_and_expect_tx(bytes, site); }
  void arrive_and_reset_bytes(uint32_t bytes, uint32_t cta_id, Site site = Site::current()) const {
    arrive_and_expect_tx(bytes, cta_id, 1u, site);
  }
  void reset_bytes(uint32_t bytes, Site site = Site::current()) const { expect_transaction(bytes, site); }
  void commit(uint32_t bytes, uint32_t pred = 1, Site site = Site::current()) const {
    complete_transaction(bytes, pred, site);
  }
  void commit(uint32_t dst_cta_id, uint32_t bytes, uint32_t pred, Site site = Site::current()) const {
    complete_transaction(dst_cta_id, bytes, pred, site);
  }

  // A full barrier's wait, and its arrives (never held back nor left out by a fault).
  // A call of its own (noinline), as HostPlatform's blocking waits are: inlined, it left values
  // in its caller's registers and frame that the path where a bool try_wait answered true lacks,
  // and CUTLASS's consumer_try_wait / consumer_wait pair never met (sim/runtime/guarded_tries.cpp).
  [[gnu::noinline]] static void wait(ValueType const* smem_ptr, uint32_t phase, Site site = Site::current()) {
    const uint32_t parity = ::mbcheck::cutlass_host::full_wait_parity(phase & 1u);
    host_detail::P::mbarrier_wait_parity_bit(host_detail::state(smem_ptr, site), parity, site);
    ::mbcheck::sim::zero_on_probe_return(__builtin_frame_address(0), &site, sizeof site);  // site: in memory
  }
  static void arrive(ValueType const* smem_ptr, uint32_t cta_id, uint32_t pred, Site site = Site::current()) {
    if (pred) host_detail::P::mbarrier_arrive_cluster(host_detail::state(smem_ptr, site), cta_id, site);
  }
  static void arrive(ValueType const* smem_ptr, Site site = Site::current()) {
    host_detail::P::mbarrier_arrive(host_detail::state(smem_ptr, site), 1, site);
  }
  // mbarrier.arrive.expect_tx.shared::cta.b64
  static void arrive_and_expect_tx(ValueType const* smem_ptr, uint32_t bytes, Site site = Site::current()) {
    if (::mbcheck::cutlass_host::hold_arming([=] { arrive_and_expect_tx(smem_ptr, bytes, site); })) return;
    ::mbcheck::cutlass_host::settle_held_wait(site);
    host_detail::P::mbarrier_arrive_expect_tx(host_detail::state(smem_ptr, site),
                                              ::mbcheck::cutlass_host::expected_tx_bytes(bytes), site);
  }
  // mapa + mbarrier.arrive.expect_tx.release.cluster.shared::cluster under a predicate
  static void arrive_and_expect_tx(ValueType const* smem_ptr, uint32_t bytes, uint32_t cta_id, uint32_t pred,
                                   Site site = Site::current()) {
    if (!pred) return;
    if (::mbcheck::cutlass_host::hold_arming([=] { arrive_and_expect_tx(smem_ptr, bytes, cta_id, pred, site); }))
      return;
    ::mbcheck::cutlass_host::settle_held_wait(site);
    host_detail::P::mbarrier_arrive_expect_tx_cluster(host_detail::state(smem_ptr, site),
                                                      ::mbcheck::cutlass_host::expected_tx_bytes(bytes), cta_id, site);
  }
  // mbarrier.expect_tx.relaxed.cta.shared::cta.b64
  static void expect_transaction(ValueType const* smem_ptr, uint32_t bytes, Site site = Site::current()) {
    host_detail::P::mbarrier_expect_tx(host_detail::state(smem_ptr, site), bytes, site);
  }
  // mapa + mbarrier.complete_tx.relaxed.cluster.shared::cluster under a predicate
  static void complete_transaction(ValueType const* smem_ptr, uint32_t dst_cta_id, uint32_t bytes,
                                   uint32_t pred = 1, Site site = Site::current()) {
    ::mbcheck::cutlass_host::settle_held_wait(site);  // a refill: a held acquire before it is performed
    if (pred) host_detail::P::mbarrier_complete_tx_cluster(host_detail::state(smem_ptr, site), dst_cta_id, bytes, site);
  }
  static void arrive_and_reset_bytes(ValueType const* smem_ptr, uint32_t bytes, Site site = Site::current()) {
    arrive_and_expect_tx(smem_ptr, bytes, site);
  }
  static void arrive_and_reset_bytes(ValueType const* smem_ptr, uint32_t bytes, uint32_t cta_id, uint32_t pred,
                                     Site site = Site::current()) {
    arrive_and_expect_tx(smem_ptr, bytes, cta_id, pred, site);
  }
  static void reset_bytes(ValueType const* smem_ptr, uint32_t bytes, Site site = Site::current()) {
    expect_transaction(smem_ptr, bytes, site);
  }
  static void commit(ValueType const* smem_ptr, uint32_t dst_cta_id, uint32_t bytes, uint32_t pred = 1,
                     Site site = Site::current()) {
    complete_transaction(smem_ptr, dst_cta_id, bytes, pred, site);
  }
};

// fence.mbarrier_init.release.cluster
inline void fence_barrier_init(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  if (::mbcheck::cutlass_host::init_fence_issued()) host_detail::P::fence_mbarrier_init_release_cluster(site);
}
// fence.proxy.async.shared::cta: this thread's shared-memory writes become visible to the
// async proxy.
inline void fence_view_async_shared(::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  if (::mbcheck::cutlass_host::store_fence_issued()) host_detail::P::fence_proxy_async_shared_cta(site);
}
// fence.release.sync_restrict::shared::cta.cluster: orders this thread's shared-memory writes
// before its later .release.cluster arrives, which order them already on the host (nothing
// more to do).
inline void fence_view_shared() {}
// cp.async.mbarrier.arrive{.noinc}.shared::cta.b64
inline void cpasync_barrier_arrive(uint64_t const* smem_ptr, ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  host_detail::P::cp_async_mbarrier_arrive(host_detail::state(smem_ptr, site), site);
}
inline void cpasync_barrier_arrive_noinc(uint64_t const* smem_ptr,
                                         ::mbcheck::CallSite site = ::mbcheck::CallSite::current()) {
  host_detail::P::cp_async_mbarrier_arrive_noinc(host_detail::state(smem_ptr, site), site);
}

}  // namespace cutlass::arch
