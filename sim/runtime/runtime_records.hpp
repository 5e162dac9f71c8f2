// What the fiber runtime (sim/runtime/runtime.hpp) keeps per barrier and per CTA for one
// execution: a barrier's waiters, report name and count-down records; a CTA's shared memory,
// barrier 0, named barriers, collectives and the peer uses its exit must come after.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/runtime/execution.hpp"
#include "sim/runtime/mbarrier.hpp"
#include "sim/runtime/ops.hpp"
#include "sim/runtime/shared_buffer.hpp"

namespace mbcheck::sim::runtime_records {

struct BarrierInfo {
  MbarrierState* state = nullptr;
  std::uint32_t cta = 0;
  // Its name in reports, made only when a report asks (barrier_name()): `name` when set (a
  // named barrier or collective), else P::label's name and index, else its smem offset.
  std::string name;
  std::string label;
  int label_index = 0;
  bool labelled = false;
  std::vector<AgentId> waiters;  // blocked waits: re-checked when a phase completes
  // Enabled waits whose phase has not completed (announced on uninitialised memory, or
  // for a phase ahead of the barrier): a new phase can disable them.
  std::vector<AgentId> fragile_waits;
  std::string collective;  // a hidden rendezvous: what it stands for ("__syncwarp(0xffffffff)")
  // The ops that count a phase down (arrivals, complete_tx) as (agent, its epoch then): of
  // the phase in progress, and of its two newest completed phases. wait_status reads them:
  // a try found its phase complete in every order of the events only if all of them happen
  // before it.
  using CountOps = std::vector<std::pair<AgentId, std::uint32_t>>;
  CountOps counting;
  struct Completion {
    std::int64_t phase = -2;
    CountOps ops;
  } completions[2];
};
inline constexpr std::uint32_t kNamedBarriers = 16;  // bar.sync ids 0..15
// The hidden counter behind a rendezvous (a collective, the cluster barrier): an mbarrier
// without the missing-wait rule, named by what it stands for.
// What the lanes of a matrix collective bring to a round (sim/runtime/warp_matrix.cpp): by
// round parity, each lane's registers (stmatrix's sources, wgmma's A in registers) and the row
// ldmatrix read at its address; and wgmma's operands as read for `staged_round`, as values
// (a[64][K], b[n][K], row-major, input negations applied).
struct MatrixExchange {
  std::uint32_t registers[2][128][4] = {};
  unsigned char rows[2][32][16] = {};
  std::int64_t staged_round = -1;
  std::vector<float> a, b;
};
struct Rendezvous {
  MbarrierState bar;
  std::uint32_t values[2][32] = {};        // shfl.sync: each lane's operand, by phase parity
  std::shared_ptr<MatrixExchange> matrix;  // made at a matrix collective's first round
  // Per lane, the newest round (phase) it arrived in: round R's participants are the lanes
  // at R or later (a lane cannot start round R + 2 before every lane arrived in R + 1, so
  // none has moved on past what a reader of round R needs). Lanes that exited never arrive.
  std::int64_t last_round[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  // A bar instruction's convergence: what its round's first lane executes, which every other
  // lane of the round must execute too (.aligned).
  struct Tag {
    std::uint32_t id = 0, count = 0, kind = 0;  // kind: 0 bar.arrive, 1 bar.sync, 2 bar.red
    CallSite site;
    bool same(const Tag& o) const {
      return id == o.id && count == o.count && kind == o.kind && site.same_place(o.site);
    }
  } tag[2];
  std::uint32_t participants(std::int64_t round, std::uint32_t mask) const {
    std::uint32_t m = 0;
    for (std::uint32_t l = 0; l < 32; ++l)
      if ((mask >> l & 1u) && last_round[l] >= round) m |= 1u << l;
    return m;
  }
};
// The collectives of a CTA are keyed by (kind << 24 | warp or warp group, mask).
enum class CollectiveKind : std::uint32_t { syncwarp, elect_sync, shfl_sync, wgmma, bar_convergence, warp_matrix };
inline std::pair<std::uint32_t, std::uint32_t> collective_key(CollectiveKind kind, std::uint32_t index,
                                                              std::uint32_t mask = 0) {
  return {static_cast<std::uint32_t>(kind) << 24 | index, mask};
}
inline constexpr std::uint32_t kWarpGroupIndex = 0x800000;  // a wgmma counter of a whole warp group: | group
inline CollectiveKind collective_kind(std::uint32_t key_first) { return static_cast<CollectiveKind>(key_first >> 24); }
inline std::uint32_t collective_index(std::uint32_t key_first) { return key_first & 0xffffffu; }
// A warp group's wgmma instructions in the order its warps execute them (.aligned: every warp
// executes the same sequence): the first warp to reach its k-th records it, the others compare.
struct WgmmaStep {
  const char* instruction = "";
  const void* a = nullptr;
  const void* b = nullptr;
  std::uint32_t a_bytes = 0, b_bytes = 0, arg = 0;
  bool operator==(const WgmmaStep&) const = default;
};
struct CtaInfo {
  SharedBuffer smem;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Rendezvous> collectives;  // collective_key
  std::map<std::uint32_t, std::vector<WgmmaStep>> wgmma_steps;                // per warp group
  std::vector<std::uint32_t> wgmma_seq;  // per thread: the wgmma instructions it executed
  // Lifetime (the join of its exited threads' clocks is the race detector's: thread_exit):
  // per peer agent its uses of this CTA's shared memory that the exit must come after: the
  // newest use of any kind (an older use is ordered before an exit if a newer is), the
  // newest memory access, and per barrier the newest counter op (arrive, complete_tx, a
  // multicast landing). A counter op needs no happens-before (a complete_tx is .relaxed):
  // once a thread of the CTA has seen the phase it counted in complete, it has been
  // performed (cluster.cpp, cta_exited).
  struct PeerUse {
    std::uint32_t clock = 0;
    std::uint64_t step = 0;
    const char* verb = "";  // with the barrier or address, what reports say it did
    const MbarrierState* bar = nullptr;
    const void* addr = nullptr;
    std::int64_t phase = 0;  // a counter op: the phase it counted in
    bool performed = false;  // a counter op whose phase a thread of the CTA saw complete
  };
  struct PeerUses {
    PeerUse newest;
    std::optional<PeerUse> access;
    std::vector<PeerUse> counter_ops;  // one per barrier, the newest
  };
  std::map<AgentId, PeerUses> peer_uses;
  MbarrierState named[kNamedBarriers];  // the counters behind bar.sync / bar.arrive
  bool named_used = false;              // one of them (or a reduction slot) was touched: reset it
  // bar.red: per id and generation parity, the true predicates and the participants so far
  // (a generation's reduction is complete when it is; the slot is reused two generations on)
  std::uint32_t red_true[kNamedBarriers][2] = {}, red_seen[kNamedBarriers][2] = {};
  std::uint8_t red_mix[kNamedBarriers][2] = {};  // per generation parity: 1 bar.red arrivals, 2 others
  // barrier 0's bar.red (__syncthreads_count): each thread's predicate, the generation's kinds
  // of waiters (1 bar.red, 2 others) and the last reduced generation's count of true and of all
  std::vector<char> block_pred;
  std::uint8_t block_red_mix = 0;
  std::uint32_t block_red_true = 0, block_red_all = 0;
  std::uint32_t live_threads = 0;
  // Barrier 0 over all the threads (sim/runtime/block_sync.cpp): this generation's waiters
  // and bar.arrive arrivals, whether a count-less waiter (sync_threads) is among them, and
  // the arrivals of the generation released last (the search joins them into its waiters).
  std::vector<AgentId> at_sync;
  std::vector<BlockArrival> block_arrivals, released_arrivals;
  std::vector<AgentId> released_waiters;
  std::vector<char> in_generation;  // per thread: arrived in the generation open now
  bool all_threads_form = false;
  bool block_used = false;         // id 0 was used over all the threads in this execution
  std::uint64_t release_step = 0;  // the step that released barrier 0's last generation
};

// A try_wait made through a status (Runtime::try_wait_status), performed at its thread's next
// event; by TryWaitStatus::id - 1.
struct DeferredTry {
  AgentId agent = kNoAgent;
  MbarrierState* bar = nullptr;
  std::int64_t phase = 0;
  CallSite site;
  enum class State : std::uint8_t { deferred, failed, done } state = State::deferred;
};

// A wgmma.mma_async's operands, as its warp-group step compares them across the group.
struct WgmmaOperands {
  const void* a;
  std::uint32_t a_bytes;
  const void* b;
  std::uint32_t b_bytes;
  std::uint32_t arg;
};

// bar.red's reductions: .popc, .and, .or.
enum class BarReduction : std::uint8_t { popc, all, any };

// A lane's bar.red arrival: its reduction and predicate, and the result it gets back.
struct RedArrival {
  BarReduction op;
  bool pred;
  std::uint32_t result = 0;
};

// What one barrier operation did (Runtime::apply_barrier_op).
struct BarrierEffect {
  std::int64_t phase_before = 0;
  bool completed = false;
  MbarrierToken token;
};

// A P::label_memory range, for reports.
struct MemoryLabel {
  std::uintptr_t begin = 0, end = 0;
  std::size_t elem_bytes = 1;
  std::string name;  // as P::label_memory gave it; with index >= 0, shown as "name index"
  int index = -1;
};

}  // namespace mbcheck::sim::runtime_records
