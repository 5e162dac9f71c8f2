// The operation model: OpKind and each kind's row of sim/runtime/ops.def (op_info()), and the
// operation record (Op) an agent announces and carries through its scheduling point. Every
// layer that asks "what kind of operation is this" asks op_info(): the runtime's barrier path,
// the DPOR relation, the race detector's edges and the reports.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mbcheck::sim {

struct MbarrierState;

using AgentId = std::uint32_t;  // a thread or an async agent of one execution

enum class Operand : std::uint8_t { none, count, bytes, phase, groups, value };
enum class Effect : std::uint8_t {
  none,
  init,
  inval,
  arrive,
  arrive_expect_tx,
  arrive_drop,
  expect_tx,
  complete_tx,
  increment_pending,
  liveness,
  observe,
};
enum class Order : std::uint8_t { none, release, release_own, release_tracked, acquire, relaxed };
enum class Dependence : std::uint8_t {
  independent,
  lifecycle,
  arrival,
  tx_arrival,
  tx_decrement,
  ordered_counter,
  pending_increment,
  liveness_read,
  observer,
  atomic,
  group_wait,
  block_sync,
  block_arrive,
};

// The per-thread (wgmma: per warp group) async-group families: members issued, committed by
// a commit_group, waited for by a wait_group (sim/runtime/async_groups.hpp).
// A bulk store is two members: its read of shared memory (bulk_store: what wait_group.read
// waits for) and its write of global memory (bulk_store_write: what the full wait_group also
// waits for), committed into groups of the same index by one commit_group.
enum class GroupKind : std::uint8_t { none, bulk_store, cp_async, wgmma, bulk_store_write };
inline constexpr std::size_t kGroupKinds = 4;  // without none
inline constexpr std::size_t group_index(GroupKind g) { return static_cast<std::size_t>(g) - 1; }

enum class OpKind : std::uint8_t {
#define MBCHECK_OP(kind, ...) kind,
#include "sim/runtime/ops.def"
};

struct OpInfo {
  std::string_view kind;  // the enumerator's name
  std::string_view ptx;
  Operand operand;
  Effect effect;
  Order order;
  Dependence dependence;
  GroupKind group;
  std::string_view report;
};

namespace ops_detail {
inline constexpr OpInfo kTable[] = {
#define MBCHECK_OP(kind, ptx, operand, effect, order, dependence, group, report) \
  {#kind, ptx, Operand::operand, Effect::effect, Order::order, Dependence::dependence, GroupKind::group, report},
#include "sim/runtime/ops.def"
};
}  // namespace ops_detail

inline constexpr std::size_t kOpKinds = std::size(ops_detail::kTable);
constexpr const OpInfo& op_info(OpKind kind) { return ops_detail::kTable[static_cast<std::size_t>(kind)]; }

// The short name of a kind ("arrive.expect_tx", "cp.async.bulk"): its report template up to
// the first operand.
const char* to_string(OpKind kind);

// The memory scope an operation names (.cta / .cluster) and the state-space form of its
// barrier operand (.shared::cta: the thread's own CTA; .shared::cluster: any CTA of its
// cluster, through mapa).
enum class Scope : std::uint8_t { cta, cluster };

// One operation as an agent announces it. Everything the operation needs after its
// scheduling point travels here (never in a field of the runtime that another fiber could
// change in between).
struct Op {
  OpKind kind = OpKind::start;
  MbarrierState* bar = nullptr;
  std::int64_t arg = 0;
  bool no_complete = false;
  void* addr = nullptr;       // atomics
  std::int64_t expected = 0;  // atomic_cas; a multicast's CTA mask
  bool await = false;         // test_wait/try_wait: a spin iteration, enabled like a wait
  bool backoff = false;       // ... of a back-off loop (its state changed), merged after kBackoffExplored
  bool remote = false;        // the .shared::cluster form (a barrier of any CTA of the cluster)
  Scope scope = Scope::cta;   // .cta / .cluster
  std::int8_t parity = -1;    // a wait or poll by phase bit: the bit (arg: the phase it means now); -1: not
  const OpInfo& info() const { return op_info(kind); }
};

// Copies an operation field by field: callers build an Op with one store per field, and a
// whole-struct copy right after reads it back in 16-byte loads that the CPU cannot forward
// from those narrower stores (a ~15-cycle stall per step; see copy_site in agent.hpp).
[[gnu::always_inline]] inline void copy_op(Op& to, const Op& from) {
  to.kind = from.kind;
  to.bar = from.bar;
  to.arg = from.arg;
  to.no_complete = from.no_complete;
  to.addr = from.addr;
  to.expected = from.expected;
  to.await = from.await;
  to.backoff = from.backoff;
  to.remote = from.remote;
  to.scope = from.scope;
  to.parity = from.parity;
}

// Sets an operation to kind, barrier, argument, no_complete and parity, every other field to
// its default (what most announcements are), field by field from registers. Beside copy_op:
// both list Op's fields, and a field added to Op goes into both.
[[gnu::always_inline]] inline void set_op(Op& to, OpKind kind, MbarrierState* bar, std::int64_t arg, bool no_complete,
                                          std::int8_t parity) {
  to.kind = kind;
  to.bar = bar;
  to.arg = arg;
  to.no_complete = no_complete;
  to.addr = nullptr;
  to.expected = 0;
  to.await = to.backoff = to.remote = false;
  to.scope = Scope::cta;
  to.parity = parity;
}

// A step as reports name it, from its row's `report` template; `bar` is its barrier's name.
// `addr`: how an atomic's word is named ("" : its address).
std::string report_text(const Op& op, std::string_view bar, std::string_view addr = {});

inline bool is_atomic(OpKind k) { return op_info(k).dependence == Dependence::atomic; }
// A wait that blocks until its phase completes: a wait, or a poll made as a spin iteration.
inline bool is_blocking_wait(const Op& op) {
  return op.kind == OpKind::wait || (op.info().dependence == Dependence::observer && op.await);
}
inline bool is_poll(OpKind k) { return op_info(k).dependence == Dependence::observer && k != OpKind::wait; }
// Whether an announced operation of this class may be disabled (Runtime::is_enabled_now tests
// it): a wait or poll, an atomic (a load loop's await), a wait_group. Any other is enabled.
constexpr bool needs_enabled_test(Dependence d) {
  return d == Dependence::observer || d == Dependence::atomic || d == Dependence::group_wait;
}
// Enabled whenever it is announced, and no sync (whose announcement is its arrival): an arrive,
// a copy, an init, ...: the runtime's shortest path at a scheduling point, one load.
namespace ops_detail {
constexpr bool plain_row(const OpInfo& row) {
  return !needs_enabled_test(row.dependence) && row.dependence != Dependence::block_sync;
}
inline constexpr auto kPlain = [] {
  std::array<bool, kOpKinds> plain{};
  for (std::size_t k = 0; k < kOpKinds; ++k) plain[k] = plain_row(kTable[k]);
  return plain;
}();
}  // namespace ops_detail
inline bool is_plain_announcement(OpKind k) { return ops_detail::kPlain[static_cast<std::size_t>(k)]; }
static_assert(!ops_detail::plain_row(op_info(OpKind::wait)));
// An operation on an mbarrier's state (or liveness), as the DPOR relation sees it.
inline bool on_barrier(const Op& op) { return op.bar && op.info().effect != Effect::none; }
// An arrive-on (PTX's missing-wait rule applies to it).
inline bool is_arrival(const Op& op) {
  const Dependence d = op.info().dependence;
  return d == Dependence::arrival || d == Dependence::tx_arrival;
}
inline bool is_observer(const Op& op) { return op.info().dependence == Dependence::observer; }
inline bool is_tx_decrement(const Op& op) { return op.info().dependence == Dependence::tx_decrement; }
// It changes the counts of its barrier's phase (a "counter op" of the relation).
inline bool is_counter(const Op& op) {
  switch (op.info().dependence) {
    case Dependence::arrival:
    case Dependence::tx_arrival:
    case Dependence::tx_decrement:
    case Dependence::ordered_counter:
    case Dependence::pending_increment: return true;
    default: return false;
  }
}

}  // namespace mbcheck::sim
