// An agent of the fiber runtime (sim/runtime/runtime.hpp): a device thread (one fiber) or
// an in-flight copy (data only), with the state the runtime keeps for it across scheduling
// points; and the two copies a step makes at full speed: the thread's state at a poll (spin
// recognition) and its call site.
#pragma once

#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/runtime/asan_fibers.hpp"
#include "sim/runtime/async_groups.hpp"
#include "sim/runtime/execution.hpp"
#include "sim/runtime/guarded_tries.hpp"
#include "sim/runtime/mbarrier.hpp"
#include "sim/runtime/ops.hpp"
#include "sim/runtime/tensor_map.hpp"
#include "spec/platform.hpp"

namespace boost::fibers {
class context;
}

namespace mbcheck::sim {

// An agent's scalar state: everything it starts an execution with, reset at once when the
// agent is taken for a new execution (Runtime::new_agent assigns a default AgentState).
struct AgentState {
  enum class Kind : std::uint8_t { thread, copy };
  enum class State : std::uint8_t { ready, blocked, running, finished };
  AgentId id = 0;
  Kind kind = Kind::thread;
  State state = State::ready;
  // Its place in the enabled set (~0u: not enabled) and its fiber: with id, state and op in
  // the record's first cache lines, which every step's scheduling reads.
  std::uint32_t enabled_pos = ~0u;
  boost::fibers::context* ctx = nullptr;
  std::uint32_t cta = 0;
  std::uint32_t thread = 0;  // thread index in the CTA; for a copy: issuing thread
  Op op;                     // the announced next operation
  CallSite site;             // where protocol code announced it (a copy: where it was issued)
  // Spin-loop recognition (sim/runtime/spin_loops.cpp): its failed polls since the loop began
  // (Agent::loop_polls, all of one barrier and phase), kept while the last poll failed and the
  // thread has stored nothing since.
  bool last_poll_failed = false;
  bool stored_since_poll = false;
  MbarrierState* poll_bar = nullptr;
  std::int64_t poll_phase = 0;
  std::uint32_t polls_in_loop = 0;   // entries of Agent::loop_polls that hold this loop's polls
  std::uint32_t poll_repeats = ~0u;  // the poll being made: the entry of loop_polls it repeats
  std::uint32_t backoff_polls = 0;   // re-polls of its loop whose state changed
  std::uint32_t loads_in_loop = 0;   // entries of Agent::loads_seen that hold this run of loads
  std::uint64_t woken_at = 0;        // a load loop's await: the step whose write enabled it (0: none)
  std::int8_t parity_next = -1;      // the phase bit its next wait or poll was given by (phase_for_parity)
  const void* load_pc = nullptr;     // where its announced atomic load is (HostPlatform's inlined code)
  std::uint64_t deferred_try = 0;    // its try_wait_status not yet performed (an id), 0: none
  // barrier.cluster: the phase of its arrive not yet waited for (-1: none)
  std::int64_t cluster_arrived = -1;
  const unsigned char* stack_top = nullptr;  // where its fiber's frames begin
  bool can_land = false;                     // Agent::landing is set
  // Its fiber stack's usable bytes; a PROT_NONE guard region lies below stack_lo.
  const unsigned char* stack_lo = nullptr;
  const unsigned char* stack_hi = nullptr;
  // A member of an async group (a store, a cp.async, a wgmma operand read): whether a commit
  // put it in a group yet, which group, and whose groups they are.
  bool committed = false;
  std::uint32_t async_group = 0;
  AgentId group_owner = kNoAgent;
  AgentId thread_agent = kNoAgent;  // the thread that issued it
  unsigned char* dst = nullptr;
  const unsigned char* src = nullptr;
  std::uint32_t copied = 0, total = 0, piece = 0;
  std::uint64_t copy_seq = 0;
};

// Sets `to` to a default AgentState. By 16-byte moves from a default one: the assignment of
// `AgentState{}` is a `rep stos` of 40 words, whose start-up cost made it the most expensive
// instruction of a fuzzing run's agents (14 a run) in perf's samples.
inline void reset_state(AgentState& to) {
  static const AgentState kFresh{};
#if defined(__SSE2__)
  static_assert(sizeof(AgentState) % 16 == 0);
  auto* d = reinterpret_cast<__m128i*>(&to);
  const auto* s = reinterpret_cast<const __m128i*>(&kFresh);
  // Unrolled by hand: GCC turns the loop back into a memcpy, which is a `rep movs`.
  [&]<std::size_t... I>(std::index_sequence<I...>) { (_mm_storeu_si128(d + I, _mm_loadu_si128(s + I)), ...); }
  (std::make_index_sequence<sizeof(AgentState) / 16>{});
#else
  to = kFresh;
#endif
}

// The agent: its scalar state, and buffers that keep their capacity from execution to
// execution (emptied, not freed, when the agent is taken again: no allocation per run).
struct Agent : AgentState {
  // Spin-loop recognition: registers + live stack at the poll now being made.
  std::vector<unsigned char> snapshot;
  // Its loop's failed polls, one per call site (a back-off loop polls at two), oldest first
  // (the first polls_in_loop entries; the rest keep their buffers): where, which kind, the
  // state it was made from, and how many of loop_reads came before it.
  struct PollSeen {
    CallSite site;
    OpKind kind = OpKind::start;
    std::vector<unsigned char> state;
    std::uint32_t reads_before = 0;
  };
  std::vector<PollSeen> loop_polls;
  // Atomic loads its loop made since its oldest kept failed poll (address, value read); at an
  // await, those of the iteration before it: the await is enabled when the phase completes or
  // one of these words holds another value (the iteration would then go otherwise).
  std::vector<std::pair<const std::int64_t*, std::int64_t>> loop_reads, await_reads;
  // A loop of atomic loads alone (`while (atomic_load(f) == 0) {}`): the thread's atomic loads
  // since its last other event or store, oldest first (the first loads_in_loop entries; the
  // rest keep their buffers), each with the thread's state at it where one was taken.
  struct LoadSeen {
    CallSite site;
    const void* pc = nullptr;  // the load's code (program_counter()), null where unknown
    const std::int64_t* addr = nullptr;
    std::int64_t value = 0;
    std::vector<unsigned char> state;  // registers + live stack at the load (empty: not taken)
  };
  std::vector<LoadSeen> loads_seen;
  // A bool try_wait guarding a wait (sim/runtime/guarded_tries.cpp): where the thread is on
  // a probe of its answers' paths, and its state at a platform call there. A learnt one
  // (guarded_tries_learnt.cpp): the key of its last try being watched (its state, barrier,
  // phase), what is watched for (Runtime::kGuard*), whether a plain access came since.
  GuardProbeStage guard_probe = GuardProbeStage::none;
  std::string guard_key;
  bool guard_touched = false;
  std::vector<unsigned char> guard_state;
  MbarrierState* guard_bar = nullptr;
  std::int64_t guard_phase = 0;
  std::uint8_t guard_watch = 0;
  // A thread: its async-group families (bulk stores, cp.async; wgmma at a warp group's first
  // thread), sim/runtime/async_groups.hpp.
  AsyncGroupSet groups;
  // cp.async: every copy it issued (what a cp.async.mbarrier.arrive tracks), and its arrive
  // agents still waiting for their copies; an arrive agent's tracked copies.
  std::vector<AgentId> cp_async_issued;
  std::vector<AgentId> cp_async_arrivers;
  std::vector<AgentId> tracked;
  // A bulk store's write agent: the bytes its read agent read (the source may be reused once
  // cp.async.bulk.wait_group.read saw the read, before the write lands).
  std::vector<unsigned char> staged;
  // A tensor copy or store (sim/runtime/tensor_copies.cpp): its box's segments (empty for every
  // other agent), its map, and whether its write is a reduce-add.
  std::vector<tma::Segment> segments;
  tma::TensorMap tensor;
  bool reduce = false;
  // A tensor store's issue, which several lanes of a warp may make at one call
  // (Runtime::TensorStoreIssue): 1 + its index, 0: none.
  std::uint32_t tensor_issue = 0;
  // A wgmma operand read over an exact footprint: the (offset from src, bytes) ranges it
  // reads (empty: all of [src, src + total)).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  // Where a fatal signal in its protocol code lands (crash.cpp), while can_land. Here, not on
  // its stack: a deeper stack would leave fewer of the spin snapshot's bytes to the protocol.
  sigjmp_buf landing;  // set by sigsetjmp before can_land: never read otherwise

  // Taken for a new execution as agent `id`: the state reset, the buffers emptied.
  void start(AgentId agent_id) {
    reset_state(*this);
    id = agent_id;
    snapshot.clear();
    loop_reads.clear();
    await_reads.clear();
    for (AsyncGroups& g : groups) {
      g.uncommitted.clear();
      g.outstanding.clear();
    }
    cp_async_issued.clear();
    cp_async_arrivers.clear();
    tracked.clear();
    segments.clear();
    reduce = false;
    tensor_issue = 0;
    ranges.clear();
    guard_watch = 0;
    guard_bar = nullptr;
    guard_probe = GuardProbeStage::none;
  }
};

// Appends the registers a capture took and the live stack [sp, top) to `out`. Out of line and
// called at every capture: growing `out` allocates in this function's frame, below `sp`. (Inline,
// the allocation path spilled registers into the very frame being copied, on the captures that
// grew their buffer only: one state, two snapshots.)
[[gnu::noinline]] void append_thread_state(std::vector<unsigned char>& out, const std::uint64_t* regs,
                                           std::size_t reg_bytes, const unsigned char* sp, const unsigned char* top);

// Copies the calling thread's callee-saved registers, its program counter (here: the inlined
// copy's own address, so that two calls on one line differ in their state as well as in their
// call site's column) and its live stack (from its stack pointer up to `top`, where its fiber's frames
// begin) into `out`. Inlined into the protocol
// code that polls, so that it sees that code's state and none of the runtime's frames.
// Caller-saved registers are dead across a call, so this is the whole state of the thread
// at the poll, if its state lives in registers and on its stack (device code: registers and
// local memory; shared and global memory go through P::load/P::store). Leaves `out` empty
// where unsupported. Returns 0, or the live stack's depth where it is deeper than `limit` (the
// part of the stack this execution scrubbed: deeper bytes may be an earlier execution's), and
// then `out` is empty too.
[[gnu::always_inline]] inline std::size_t capture_thread_state(std::vector<unsigned char>& out,
                                                               const unsigned char* top, std::size_t limit) {
  out.clear();
#if defined(__x86_64__)
  std::uint64_t regs[8];
  asm volatile(
      "movq %%rbx, 0(%0)\n\t"
      "movq %%rbp, 8(%0)\n\t"
      "movq %%r12, 16(%0)\n\t"
      "movq %%r13, 24(%0)\n\t"
      "movq %%r14, 32(%0)\n\t"
      "movq %%r15, 40(%0)\n\t"
      "movq %%rsp, 48(%0)\n\t"
      "leaq 0(%%rip), %%rax\n\t"
      "movq %%rax, 56(%0)"
      :
      : "r"(regs)
      : "rax", "memory");
  const auto* sp = reinterpret_cast<const unsigned char*>(regs[6]);
  if (!top || sp >= top) return 0;
  if (static_cast<std::size_t>(top - sp) > limit) return static_cast<std::size_t>(top - sp);
  append_thread_state(out, regs, sizeof regs, sp, top);
#else
  (void)top;
  (void)limit;
#endif
  return 0;
}

// The address of the caller's own code here: inlined, one per call site (0 where unsupported).
[[gnu::always_inline]] inline const void* program_counter() {
#if defined(__x86_64__)
  const void* pc;
  asm volatile("leaq 0(%%rip), %0" : "=r"(pc));
  return pc;
#else
  return nullptr;
#endif
}

// Copies a call site field by field. A CallSite is built by the protocol's call with one store
// per field; a whole-struct copy right after reads it back in 16-byte loads, which the CPU
// cannot forward from those narrower stores (a stall of ~15 cycles per operation, a tenth
// of a fuzzing step). Loads of the stores' own widths forward.
[[gnu::always_inline]] inline void copy_site(CallSite& to, const CallSite& from) {
  to.file = from.file;
  to.line = from.line;
  to.function = from.function;
  to.column = from.column;
}

}  // namespace mbcheck::sim
