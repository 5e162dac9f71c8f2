// What the fiber runtime (sim/runtime/runtime.hpp) keeps per barrier and per CTA for one
// execution: a barrier's waiters, report name and count-down records; a CTA's shared memory,
// barrier 0, named barriers, collectives and the peer uses its exit must come after.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/runtime/execution.hpp"
#include "sim/runtime/mbarrier.hpp"
#include "sim/runtime/ops.hpp"

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
struct Rendezvous {
  MbarrierState bar;
  std::uint32_t values[2][32] = {};  // shfl.sync: each lane's operand, by phase parity
};
struct CtaInfo {
  std::vector<unsigned char> smem;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Rendezvous> collectives;  // (group, mask)
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

}  // namespace mbcheck::sim::runtime_records
