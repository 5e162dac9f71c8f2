// Faults the host layer can inject at CUTLASS's barrier API (cutlass/arch/barrier.h and the
// cluster barrier of cute/arch/cluster_sm90.hpp), to check that mbcheck catches each in a
// kernel's unmodified source. One fault at a time, chosen before a launch (--mbcheck-fault).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "sim/host_platform.hpp"

namespace mbcheck::cutlass_host {

enum class Fault : std::uint8_t {
  none,
  skip_release,                 // thread 0 of CTA 0 leaves out its first arrive on an empty barrier
  wrong_parity,                 // thread 0 of CTA 0 waits on a full barrier with the other parity
  tx_off_by_4,                  // every arrive.expect_tx expects 4 bytes more than it says
  refill_without_acquire,       // the empty-barrier wait a refill (arrive.expect_tx) follows is skipped
  no_init_fence,                // fence.mbarrier_init.release.cluster is left out
  no_cluster_sync_before_exit,  // barrier.cluster.arrive (.release) and the wait after it are left out
  no_producer_tail,             // the acquires no refill follows (the producer tail) are skipped
  // The epilogue's (PipelineTransactionAsync, the C loads of a TMA epilogue; fence_view_async_shared):
  c_released_before_read,  // a C stage is released as soon as it is waited for, before it is read
  wrong_c_stage,           // the C stage waited for is the next one (its index + 1)
  no_store_fence,          // fence.proxy.async.shared::cta before a TMA store is left out
};

// "skip-release" <-> Fault::skip_release; nullopt for an unknown name.
std::optional<Fault> parse_fault(std::string_view name);
std::string_view fault_name(Fault f);
std::string fault_names();  // every name but none, comma-separated

// The fault every later launch runs with (none: the kernel as written).
void set_fault(Fault f);
Fault active_fault();

// Per-execution state of the hooks (launch.cpp resets it before each execution).
void reset_fault_state();

// --- the hooks, called by the layer's barrier members -----------------------------------------
// An arrive on an empty (non-transaction) barrier: false when it is to be left out.
bool release_arrives();
// The parity a wait on a full (transaction) barrier uses.
std::uint32_t full_wait_parity(std::uint32_t parity);
// The bytes an arrive.expect_tx expects.
std::uint32_t expected_tx_bytes(std::uint32_t bytes);
// A wait on an empty barrier: true when it is performed now; false when the hook holds it
// back until the thread's next refill (settle_held_wait) or its next cluster barrier (dropped).
bool empty_wait_now(const std::uint64_t* window_address, std::uint32_t parity);
// At an arrive.expect_tx: true when the hook holds it back with the empty wait before it
// (no-producer-tail: an acquire is its empty wait and its arming; it is performed at the
// refill that follows it, or dropped with the wait when none does). `arm` performs it.
bool hold_arming(std::function<void()> arm);
// At an arrive.expect_tx, or a refill (complete_tx, bulk copy): the held-back empty wait before
// it, if any, performed or skipped, and a held arming performed after it.
void settle_held_wait(CallSite site);
// At a cluster barrier arrive: held-back waits are the producer tail (dropped).
void drop_held_wait();
bool init_fence_issued();
// fence_view_async_shared: false when it is left out (no-store-fence).
bool store_fence_issued();
// PipelineTransactionAsync's consumer: release right after the wait (and not after the read).
bool c_release_early();
// The stage a PipelineTransactionAsync consumer waits for, of `stages`.
std::uint32_t c_wait_stage(std::uint32_t stage, std::uint32_t stages);
// barrier.cluster.arrive (.release): false when it is left out (and then the wait after it).
bool cluster_arrive_issued();
bool cluster_wait_issued();

}  // namespace mbcheck::cutlass_host
