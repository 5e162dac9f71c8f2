// The fault hooks of faults.hpp. Their per-thread state (which arrive is a thread's first, the
// empty wait a thread holds back) lives in a map keyed by (CTA, thread), cleared before every
// execution, so that every execution of a search injects the same fault at the same calls.
#include "mbcheck/cutlass_host/faults.hpp"
#include "mbcheck/cutlass_host/thread_identity.hpp"

#include <array>
#include <map>
#include <utility>

namespace mbcheck::cutlass_host {

namespace {

using P = sim::HostPlatform;

constexpr std::array<std::pair<Fault, std::string_view>, 11> kNames{{
    {Fault::none, "none"},
    {Fault::skip_release, "skip-release"},
    {Fault::wrong_parity, "wrong-parity"},
    {Fault::tx_off_by_4, "tx-off-by-4"},
    {Fault::refill_without_acquire, "refill-without-acquire"},
    {Fault::no_init_fence, "no-init-fence"},
    {Fault::no_cluster_sync_before_exit, "no-cluster-sync-before-exit"},
    {Fault::no_producer_tail, "no-producer-tail"},
    {Fault::c_released_before_read, "c-released-before-read"},
    {Fault::wrong_c_stage, "wrong-c-stage"},
    {Fault::no_store_fence, "no-store-fence"},
}};

Fault g_fault = Fault::none;

struct ThreadState {
  bool released = false;                // made its first empty-barrier arrive
  bool waited_full = false;             // made its first full-barrier wait
  const std::uint64_t* held = nullptr;  // an empty wait held back (no_producer_tail, refill_...)
  std::uint32_t held_parity = 0;
  std::function<void()> held_arm;  // the arrive.expect_tx of the held acquire (no_producer_tail)
  bool skipped_cluster_arrive = false;
};
std::map<std::pair<std::uint32_t, std::uint32_t>, ThreadState> g_threads;

ThreadState& self() { return g_threads[{P::block_idx(), P::thread_idx()}]; }
bool first_thread() { return P::block_idx() == 0 && P::thread_idx() == 0; }

}  // namespace

std::optional<Fault> parse_fault(std::string_view name) {
  for (const auto& [f, n] : kNames)
    if (n == name) return f;
  return std::nullopt;
}
std::string_view fault_name(Fault f) {
  for (const auto& [g, n] : kNames)
    if (g == f) return n;
  return "?";
}
std::string fault_names() {
  std::string out;
  for (const auto& [f, n] : kNames)
    if (f != Fault::none) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

void set_fault(Fault f) { g_fault = f; }
Fault active_fault() { return g_fault; }
void reset_fault_state() { g_threads.clear(); }

bool release_arrives() {
  if (g_fault != Fault::skip_release || !first_thread()) return true;
  ThreadState& t = self();
  return std::exchange(t.released, true);  // the first one is left out
}

std::uint32_t full_wait_parity(std::uint32_t parity) {
  if (g_fault != Fault::wrong_parity || !first_thread()) return parity;
  ThreadState& t = self();
  return std::exchange(t.waited_full, true) ? parity : parity ^ 1u;
}

std::uint32_t expected_tx_bytes(std::uint32_t bytes) { return g_fault == Fault::tx_off_by_4 ? bytes + 4 : bytes; }

bool empty_wait_now(const std::uint64_t* window_address, std::uint32_t parity) {
  if (g_fault != Fault::no_producer_tail && g_fault != Fault::refill_without_acquire) return true;
  if (sim::Runtime* rt = sim::Runtime::current_or_null(); rt && rt->guard_probing())
    rt->guard_probe_spoil();  // a held wait is state of the fault's: a bool try's probe does not meet
  ThreadState& t = self();
  if (t.held) {
    // A second empty wait before any refill: the one held is no acquire. refill-without-acquire
    // performs it (late); no-producer-tail drops it (a tail's waits follow one another).
    const std::uint64_t* held = std::exchange(t.held, nullptr);
    if (g_fault == Fault::refill_without_acquire) P::mbarrier_wait_parity_bit(barrier_state(held, {}), t.held_parity);
    t.held_arm = nullptr;
  }
  t.held = window_address;
  t.held_parity = parity;
  return false;
}

bool hold_arming(std::function<void()> arm) {
  if (g_fault != Fault::no_producer_tail) return false;
  ThreadState& t = self();
  if (!t.held || t.held_arm) return false;
  t.held_arm = std::move(arm);
  return true;
}

void settle_held_wait(CallSite site) {
  if (g_fault != Fault::no_producer_tail && g_fault != Fault::refill_without_acquire) return;
  ThreadState& t = self();
  const std::uint64_t* held = std::exchange(t.held, nullptr);
  if (held && g_fault == Fault::no_producer_tail)
    P::mbarrier_wait_parity_bit(barrier_state(held, site), t.held_parity, site);
  if (auto arm = std::exchange(t.held_arm, nullptr)) arm();
}

void drop_held_wait() {
  if (g_fault != Fault::no_producer_tail && g_fault != Fault::refill_without_acquire) return;
  ThreadState& t = self();
  const std::uint64_t* held = std::exchange(t.held, nullptr);
  t.held_arm = nullptr;
  // refill-without-acquire skips only the acquires: a wait no refill follows is performed.
  if (held && g_fault == Fault::refill_without_acquire)
    P::mbarrier_wait_parity_bit(barrier_state(held, {}), t.held_parity);
}

bool init_fence_issued() { return g_fault != Fault::no_init_fence; }
bool store_fence_issued() { return g_fault != Fault::no_store_fence; }
bool c_release_early() { return g_fault == Fault::c_released_before_read; }
std::uint32_t c_wait_stage(std::uint32_t stage, std::uint32_t stages) {
  return g_fault == Fault::wrong_c_stage ? (stage + 1) % stages : stage;
}

bool cluster_arrive_issued() {
  if (g_fault != Fault::no_cluster_sync_before_exit) return true;
  self().skipped_cluster_arrive = true;
  return false;
}

bool cluster_wait_issued() {
  if (g_fault != Fault::no_cluster_sync_before_exit) return true;
  return !std::exchange(self().skipped_cluster_arrive, false);
}

}  // namespace mbcheck::cutlass_host
