// The mbarrier emulator: the exact SM90 state machine of docs/mbarrier-semantics.md.
//
// Pure data, no fibers: every PTX instruction on an mbarrier is one member function named
// after it. Anything PTX leaves undefined (or unspecified) throws MisuseError with a
// specific kind; the runtime turns that into a "misuse" or "aliasing" verdict.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mbcheck::sim {

// Limits from the PTX ISA (mbarrier, v0 layout).
inline constexpr std::int64_t kMaxArriveCount = (1 << 20) - 1;  // expected/pending/count
inline constexpr std::int64_t kMaxTxCount = (1 << 20) - 1;      // |tx-count|

enum class MisuseKind : std::uint8_t {
  uninitialized,         // any op but init on memory never initialised
  invalidated,           // any op but init after inval
  reinit_live,           // init on a live (initialised, not invalidated) barrier
  count_out_of_range,    // init/arrive/arrive_drop count outside [1, 2^20-1] or dropping below 0
  over_arrival,          // pending would go below zero
  tx_out_of_range,       // tx-count outside [-(2^20-1), 2^20-1]
  nocomplete_completes,  // arrive.noComplete that completes the phase
  phase_aliasing,        // wait for a phase that is neither the current nor the preceding one
  missing_wait,          // arrive-on of phase k+1 with no successful wait on phase k
  expect_tx_completes,   // expect_tx brings tx to 0 with pending 0: unspecified by PTX
  bad_token,             // token from another barrier, or pending_count on a non-noComplete token
  tma_misaligned,        // cp.async.bulk size/address not a multiple of 16
  named_barrier,         // bar.sync/bar.arrive: id outside 0..15, a count that is not a positive
                         // multiple of the warp size within the CTA, or uses of one id that
                         // disagree on the count
  cluster,               // a cluster operation outside its rules: mapa of an address outside the
                         // CTA's shared memory or to a rank outside the cluster, a .shared::cta
                         // form on a peer's barrier, a multicast mask naming no or foreign ranks,
                         // barrier.cluster.arrive twice or wait with no arrive
  unfenced_init,         // a peer CTA uses a barrier before its init is visible to the cluster
                         // (fence.mbarrier_init.release.cluster, then a cluster barrier)
  collective,            // __syncwarp/elect.sync/shfl.sync mask without the calling lane, a shfl
                         // source lane outside the mask or exited; a warp-group instruction in a
                         // partial group, or not executed by every thread of the group (.aligned)
  divergent,             // an .aligned instruction (bar.*, __syncthreads) reached by the lanes of
                         // one warp at different instructions (id, count, kind or call site)
  operand_range,         // an operand outside the contract's range: wait_group N past 7, wgmma
                         // operand sizes that are not whole m64n8k16 steps
  state_space,           // an address outside the state space the instruction names: a bulk
                         // store's source outside this CTA's shared memory, a bulk copy's
                         // destination or barrier outside the cluster's, a global source in smem
};
inline constexpr MisuseKind kLastMisuseKind = MisuseKind::state_space;

std::string_view to_string(MisuseKind kind);

struct MisuseError : std::runtime_error {
  MisuseKind kind;
  MisuseError(MisuseKind k, const std::string& message) : std::runtime_error(message), kind(k) {}
};

// What mbarrier.arrive returns: the state of the phase before the arrive. The sim keeps the
// full phase number (hardware keeps only enough to tell current from preceding).
struct MbarrierToken {
  std::uint32_t barrier_id = 0;
  bool no_complete = false;
  std::int64_t phase = 0;  // phase the arrive happened in
  // Pending count just BEFORE the arrive: what mbarrier.pending_count returns (measured on an
  // H200, device/RESULTS.md: init(5), arrive.noComplete(2) -> 5).
  std::uint32_t pending_before = 0;
};

// All-zero bytes are uninitialised shared memory, so a zero-filled smem buffer holds
// barriers in exactly the state hardware gives them before init.
struct MbarrierState {
  enum class Life : std::uint8_t { uninitialized = 0, live = 1, invalidated = 2 };

  std::uint32_t id = 0;  // runtime's registry index (0: not seen yet)
  Life life = Life::uninitialized;
  bool phase_observed = false;  // a wait returned true since the last completion ("missing wait")
  // An arrive-on now would come before any wait saw the previous phase complete (PTX's
  // missing-wait rule): a misuse if it completes the phase, else a warning (check_arrive_on).
  bool early_arrive_on() const { return !named && !excused && phase > 0 && !phase_observed; }
  std::int64_t phase = 0;      // full phase count; hardware exposes only its parity
  std::uint32_t expected = 0;  // what pending resets to on completion
  std::uint32_t pending = 0;   // arrivals still missing in the current phase
  std::int32_t tx = 0;         // pending transaction bytes (signed: copies may land early)
  std::uint64_t version = 0;   // bumped on every state change (spin-loop detection)
  // The counter behind a named barrier (bar.sync/bar.arrive) or a rendezvous, not an mbarrier:
  // arrivals need no wait on the phase before (surplus arrivals are legal there, if rarely
  // meant), and a wait for a generation is answered by it however many came after (no aliasing).
  bool named = false;
  // Set by the runtime around one operation that it runs again as the hardware would after a
  // misuse it answers (LaunchShape::on_misuse): an arrive-on past a missing wait counts, a wait
  // for an aliased phase is answered by its parity.
  bool excused = false;

  // --- instructions ------------------------------------------------------------------
  // Each returns whether the current phase completed because of it (the runtime wakes
  // waiters then). The name says which PTX instruction it is.
  void init(std::int64_t count);  // mbarrier.init
  void inval();                   // mbarrier.inval
  // mbarrier.arrive{.noComplete} with count; returns the token and whether it completed.
  MbarrierToken arrive(std::int64_t count, bool no_complete, bool* completed);
  MbarrierToken arrive_expect_tx(std::int64_t bytes, bool* completed);  // mbarrier.arrive.expect_tx
  MbarrierToken arrive_drop(std::int64_t count, bool* completed);       // mbarrier.arrive_drop
  void expect_tx(std::int64_t bytes);                                   // mbarrier.expect_tx
  // cp.async.mbarrier.arrive (without .noinc): the pending count of the current phase goes up
  // by one, for the asynchronous arrive-on that follows once the thread's copies land.
  void increment_pending();
  bool complete_tx(std::int64_t bytes);  // mbarrier.complete_tx / TMA landing
  // mbarrier.test_wait / try_wait .parity: `awaited_phase` is the full number of the phase
  // whose completion is awaited (-1: the phase before init, complete from the start);
  // hardware sees only its parity. Returns the hardware's answer; throws phase_aliasing when
  // the phase is neither current nor preceding (the parity answer may then be wrong).
  bool test_wait_parity(std::int64_t awaited_phase);
  bool test_wait(const MbarrierToken& token);                      // by state token
  static std::uint32_t pending_count(const MbarrierToken& token);  // mbarrier.pending_count

  // --- queries (no side effects, for the scheduler and reports) ----------------------
  bool is_live() const { return life == Life::live; }
  // Would a blocking wait for `awaited_phase` return (or report a misuse) if run now? By
  // parity (OnMisuse::proceed): as the hardware answers, an aliasing wait included.
  bool wait_would_proceed(std::int64_t awaited_phase, bool by_parity = false) const {
    if (life != Life::live) return true;  // proceeds to report the misuse
    if (named) return awaited_phase < phase;
    if (by_parity) return ((awaited_phase ^ phase) & 1) != 0;
    return awaited_phase != phase;  // complete, or an aliasing wait that will be reported
  }
  std::string describe() const;  // "phase 2, pending 127/128, tx 0"

 private:
  // The checks are inline and only their failures out of line: every arrive makes them.
  void require_live(std::string_view op) const {
    if (life != Life::live) [[unlikely]]
      not_live(op);
  }
  [[noreturn]] void not_live(std::string_view op) const;
  // Throws, changes nothing; `extra_tx`: the op's own expect-tx, applied after the check. The
  // missing-wait rule is checked on the arrive-on that would complete the phase: one made
  // earlier changes no wait's answer (a wait for the previous phase still finds it complete),
  // which is how compute-sanitizer's synccheck and the H100 treat it (refuse_arrive_on).
  void check_arrive_on(std::int64_t count, std::string_view op, std::int64_t extra_tx = 0) const {
    if (count < 1 || count > kMaxArriveCount || (!named && !excused && phase > 0 && !phase_observed) || count > pending)
        [[unlikely]]
      refuse_arrive_on(count, op, tx + extra_tx);
  }
  // Throws, or returns for an early arrive-on that does not complete the phase.
  void refuse_arrive_on(std::int64_t count, std::string_view op, std::int64_t tx_after) const;
  bool arrive_on(std::int64_t count, std::string_view op);  // the common arrive-on step
  bool complete_if_done();
  void check_tx(std::int64_t new_tx, std::string_view op) const {
    if (new_tx > kMaxTxCount || new_tx < -kMaxTxCount) [[unlikely]]
      refuse_tx(new_tx, op);
  }
  [[noreturn]] void refuse_tx(std::int64_t new_tx, std::string_view op) const;
  [[noreturn]] void refuse_tx_bytes(std::string_view op, std::int64_t bytes) const;
  [[noreturn]] void refuse_no_complete(std::int64_t count) const;
  [[noreturn]] void refuse_aliasing(std::int64_t awaited_phase) const;
};

// The instructions every pipeline step makes, inline: their checks pass, and only the failures
// (MisuseError) take the out-of-line paths.
inline bool MbarrierState::complete_if_done() {
  if (pending != 0 || tx != 0) return false;
  phase += 1;
  pending = expected;
  phase_observed = false;
  return true;
}

inline bool MbarrierState::arrive_on(std::int64_t count, std::string_view op) {
  check_arrive_on(count, op);
  pending -= static_cast<std::uint32_t>(count);
  ++version;
  return complete_if_done();
}

inline MbarrierToken MbarrierState::arrive(std::int64_t count, bool no_complete, bool* completed) {
  // (string_views of the literals: a const char* would be measured by strlen on every arrive)
  const std::string_view op = no_complete ? std::string_view("arrive.noComplete") : std::string_view("arrive");
  require_live(op);
  MbarrierToken token{id, no_complete, phase, pending};
  check_arrive_on(count, op);
  if (no_complete && count >= 1 && count <= pending && pending - count == 0 && tx == 0) refuse_no_complete(count);
  bool done = arrive_on(count, op);
  if (completed) *completed = done;
  return token;
}

inline MbarrierToken MbarrierState::arrive_expect_tx(std::int64_t bytes, bool* completed) {
  require_live("arrive.expect_tx");
  if (bytes < 0 || bytes > kMaxTxCount) [[unlikely]]
    refuse_tx_bytes("arrive.expect_tx", bytes);
  check_tx(tx + bytes, "arrive.expect_tx");
  check_arrive_on(1, "arrive.expect_tx", bytes);  // before changing anything: a failing op leaves no trace
  MbarrierToken token{id, false, phase, pending};
  tx += static_cast<std::int32_t>(bytes);  // expect-tx first, then arrive-on(1)
  bool done = arrive_on(1, "arrive.expect_tx");
  if (completed) *completed = done;
  return token;
}

inline bool MbarrierState::complete_tx(std::int64_t bytes) {
  require_live("complete_tx");
  if (bytes < 0 || bytes > kMaxTxCount) [[unlikely]]
    refuse_tx_bytes("complete_tx", bytes);
  check_tx(tx - bytes, "complete_tx");
  tx -= static_cast<std::int32_t>(bytes);
  ++version;
  return complete_if_done();
}

inline bool MbarrierState::test_wait_parity(std::int64_t awaited_phase) {
  require_live("wait");
  // A named barrier's waiter waits for its own generation, whatever came after it: nothing
  // there answers by parity.
  if (named) return awaited_phase < phase;
  if (awaited_phase != phase && awaited_phase != phase - 1) [[unlikely]] {
    if (!excused) refuse_aliasing(awaited_phase);
    return ((awaited_phase ^ phase) & 1) != 0;  // the hardware's answer: the parity's
  }
  bool complete = awaited_phase == phase - 1;
  if (complete && phase > 0) phase_observed = true;
  return complete;
}

}  // namespace mbcheck::sim
