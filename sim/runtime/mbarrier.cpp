#include "sim/runtime/mbarrier.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace mbcheck::sim {

std::string_view to_string(MisuseKind kind) {
  switch (kind) {
    case MisuseKind::uninitialized: return "uninitialized";
    case MisuseKind::invalidated: return "invalidated";
    case MisuseKind::reinit_live: return "reinit-live";
    case MisuseKind::count_out_of_range: return "count-out-of-range";
    case MisuseKind::over_arrival: return "over-arrival";
    case MisuseKind::tx_out_of_range: return "tx-out-of-range";
    case MisuseKind::nocomplete_completes: return "nocomplete-completes";
    case MisuseKind::phase_aliasing: return "phase-aliasing";
    case MisuseKind::missing_wait: return "missing-wait";
    case MisuseKind::expect_tx_completes: return "expect-tx-completes";
    case MisuseKind::bad_token: return "bad-token";
    case MisuseKind::tma_misaligned: return "tma-misaligned";
    case MisuseKind::named_barrier: return "named-barrier";
    case MisuseKind::cluster: return "cluster";
    case MisuseKind::unfenced_init: return "unfenced-init";
    case MisuseKind::collective: return "collective";
    case MisuseKind::divergent: return "divergent";
    case MisuseKind::operand_range: return "operand-range";
    case MisuseKind::state_space: return "state-space";
  }
  return "?";
}

std::string MbarrierState::describe() const {
  switch (life) {
    case Life::uninitialized: return "uninitialised";
    case Life::invalidated: return "invalidated";
    case Life::live: break;
  }
  return fmt::format("phase {}, pending {}/{}, tx {}", phase, pending, expected, tx);
}

void MbarrierState::not_live(std::string_view op) const {
  if (life == Life::uninitialized)
    throw MisuseError(MisuseKind::uninitialized, fmt::format("{} on an uninitialised mbarrier", op));
  throw MisuseError(MisuseKind::invalidated, fmt::format("{} on an invalidated mbarrier", op));
}

void MbarrierState::refuse_tx(std::int64_t new_tx, std::string_view op) const {
  throw MisuseError(MisuseKind::tx_out_of_range, fmt::format("{} takes tx-count from {} to {}, outside +-(2^20-1) ({})",
                                                             op, tx, new_tx, describe()));
}

void MbarrierState::refuse_tx_bytes(std::string_view op, std::int64_t bytes) const {
  throw MisuseError(MisuseKind::tx_out_of_range, fmt::format("{}({}): byte count outside [0, 2^20-1]", op, bytes));
}

void MbarrierState::refuse_no_complete(std::int64_t count) const {
  throw MisuseError(MisuseKind::nocomplete_completes,
                    fmt::format("arrive.noComplete({}) would complete phase {} ({})", count, phase, describe()));
}

void MbarrierState::refuse_aliasing(std::int64_t awaited_phase) const {
  const bool parity_says = (awaited_phase & 1) != (phase & 1);
  throw MisuseError(
      MisuseKind::phase_aliasing,
      fmt::format("wait for phase {} (parity {}) while the barrier is in phase {}: only the "
                  "current or the preceding phase can be waited for; hardware would answer "
                  "{} ({})",
                  awaited_phase, awaited_phase & 1, phase, parity_says ? "complete" : "not complete", describe()));
}

void MbarrierState::init(std::int64_t count) {
  if (life == Life::live)
    throw MisuseError(MisuseKind::reinit_live,
                      fmt::format("init({}) on a live mbarrier ({}); inval it first", count, describe()));
  if (count < 1 || count > kMaxArriveCount)
    throw MisuseError(MisuseKind::count_out_of_range,
                      fmt::format("init({}): arrival count must be in [1, 2^20-1]", count));
  life = Life::live;
  phase = 0;
  expected = pending = static_cast<std::uint32_t>(count);
  tx = 0;
  phase_observed = false;
  ++version;
}

void MbarrierState::inval() {
  require_live("inval");
  life = Life::invalidated;
  ++version;
}

void MbarrierState::refuse_arrive_on(std::int64_t count, std::string_view op, std::int64_t tx_after) const {
  if (count < 1 || count > kMaxArriveCount)
    throw MisuseError(MisuseKind::count_out_of_range, fmt::format("{}: count {} outside [1, 2^20-1]", op, count));
  if (count > pending)
    throw MisuseError(MisuseKind::over_arrival,
                      fmt::format("{} of {} with only {} pending: over-arrival ({})", op, count, pending, describe()));
  if (early_arrive_on() && count == pending && tx_after == 0)
    throw MisuseError(MisuseKind::missing_wait,
                      fmt::format("{} completes phase {} but no wait returned true for phase {} "
                                  "(PTX 'missing wait' rule: a wait for phase {} now finds it "
                                  "incomplete) ({})",
                                  op, phase, phase - 1, phase - 1, describe()));
  if (!early_arrive_on()) throw std::logic_error("mbcheck: refuse_arrive_on called on a legal arrive-on");
}

MbarrierToken MbarrierState::arrive_drop(std::int64_t count, bool* completed) {
  require_live("arrive_drop");
  if (count < 1 || count > kMaxArriveCount || count > expected)
    throw MisuseError(MisuseKind::count_out_of_range,
                      fmt::format("arrive_drop({}) with expected count {}", count, expected));
  check_arrive_on(count, "arrive_drop");
  MbarrierToken token{id, false, phase, pending};
  expected -= static_cast<std::uint32_t>(count);  // this and all later phases
  bool done = arrive_on(count, "arrive_drop");
  if (completed) *completed = done;
  return token;
}

void MbarrierState::increment_pending() {
  require_live("cp.async.mbarrier.arrive");
  if (pending + 1 > kMaxArriveCount)
    throw MisuseError(MisuseKind::count_out_of_range,
                      fmt::format("cp.async.mbarrier.arrive raises the pending count past 2^20-1 ({})", describe()));
  ++pending;
  ++version;
}

void MbarrierState::expect_tx(std::int64_t bytes) {
  require_live("expect_tx");
  if (bytes < 0 || bytes > kMaxTxCount)
    throw MisuseError(MisuseKind::tx_out_of_range, fmt::format("expect_tx({}): byte count outside [0, 2^20-1]", bytes));
  check_tx(tx + bytes, "expect_tx");
  if (pending == 0 && tx < 0 && tx + bytes == 0)
    throw MisuseError(MisuseKind::expect_tx_completes,
                      fmt::format("expect_tx({}) brings tx-count to 0 with no arrival pending: "
                                  "whether phase {} completes is unspecified by PTX ({})",
                                  bytes, phase, describe()));
  tx += static_cast<std::int32_t>(bytes);
  ++version;
}

bool MbarrierState::test_wait(const MbarrierToken& token) {
  require_live("wait(token)");
  if (token.barrier_id != id) throw MisuseError(MisuseKind::bad_token, "wait with a state token from another mbarrier");
  return test_wait_parity(token.phase);
}

std::uint32_t MbarrierState::pending_count(const MbarrierToken& token) {
  if (!token.no_complete)
    throw MisuseError(MisuseKind::bad_token, "pending_count on a token that did not come from arrive.noComplete");
  return token.pending_before;
}

}  // namespace mbcheck::sim
