// The fiber runtime: one Boost.Fiber fiber per device thread, one data-only agent per
// in-flight bulk copy, and a custom boost::fibers scheduling algorithm that hands every
// scheduling decision to a Strategy.
//
// Model (docs/model.md). Each agent announces its next visible operation (a barrier
// instruction, a bulk copy issue, a block sync, an atomic; for a copy agent, the landing of its
// next piece) and stops there. At every such point the Strategy picks one ENABLED agent, which
// performs its operation and runs its local code up to its next announcement: one step. A
// wait is enabled only once the phase it waits for has completed (or when it would report a
// misuse). A poll is always enabled and answers the barrier's state, except a spin iteration:
// a poll (or, in a loop of atomic loads alone, a load) that repeats an earlier one at the same
// call site from exactly the same registers, program counter and stack, with nothing else
// announced in between but atomic loads. Failing again would only repeat it, so it waits for
// the phase or for a word its loop read to change instead (an "await"); back-off loops are
// explored for kBackoffExplored re-polls first. No enabled agent while some are unfinished is a
// deadlock, or a livelock when a thread is left in such a spin.
//
// A try_wait whose answer only a later wait reads (P::WaitStatus, CUTLASS's consumer_try_wait
// then consumer_wait) is deferred: performed right before its thread's next event, as a step of
// its own; when that event is the wait on its status, the pair is one blocking wait
// (docs/model.md, "Deferred try_wait"). A later wait on the same status waits again unless the
// thread knew the phase complete at the try (wait_status).
#pragma once

#include <pthread.h>

#include <atomic>
#include <csetjmp>
#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/runtime/agent.hpp"
#include "sim/runtime/asan_fibers.hpp"
#include "sim/runtime/async_groups.hpp"
#include "sim/runtime/call_sites.hpp"
#include "sim/runtime/guarded_tries.hpp"
#include "sim/runtime/matrix_layouts.hpp"
#include "sim/runtime/mbarrier.hpp"
#include "sim/runtime/ops.hpp"
#include "spec/platform.hpp"
#include "sim/runtime/race_detector.hpp"
#include "sim/runtime/runtime_records.hpp"
#include "sim/runtime/execution.hpp"

namespace boost::fibers {
class context;
}

namespace mbcheck::sim {

class Runtime;
namespace runtime_detail {
// The runtime of the calling OS thread while an execution runs (a fiber never changes OS
// thread). Read inline by every Platform call: constinit, so no TLS wrapper call.
extern constinit thread_local Runtime* current_runtime;
// Runtime::set_cta_entered_hook's (null almost always).
using CtaEnteredHook = void (*)(unsigned char* smem, std::size_t bytes);
extern constinit CtaEnteredHook cta_entered_hook;
extern constinit std::atomic<bool> cta_hook_set_once;
}  // namespace runtime_detail

class Runtime {
 public:
  Runtime();
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Runs `program` once under `strategy`. Never throws for protocol faults: they are the
  // Outcome (an exception from Program::check_result too); throws ProgramError when
  // Program::reset() throws. Must be called from outside any fiber of this runtime.
  Outcome execute(Program& program, Strategy& strategy, const RunLimits& limits = {},
                  StepObserver* observer = nullptr) {
    return std::move(execute_in_place(program, strategy, limits, observer));
  }
  // The same, leaving the outcome in the runtime until its next execution (move it out to keep
  // it): a fuzzing campaign's runs then reuse its buffers (the schedule, the message) and
  // allocate nothing.
  Outcome& execute_in_place(Program& program, Strategy& strategy, const RunLimits& limits = {},
                            StepObserver* observer = nullptr);

  // The runtime of the calling OS thread, while an execution runs.
  static Runtime& current() { return *runtime_detail::current_runtime; }
  static Runtime* current_or_null() { return runtime_detail::current_runtime; }  // none outside an execution

  // --- for strategies --------------------------------------------------------------------
  const std::vector<AgentId>& enabled() const { return enabled_; }
  // The lowest enabled agent for which `skip` is false (kNoAgent: none). For a strategy that
  // wants it at every step (Strategy::wants_lowest_enabled: a search's default choice), read
  // from a bitset of the enabled agents, which costs words, not agents (3,072 threads); else
  // from the list (the bits would cost every fuzzing step their upkeep).
  template <class Skip>
  AgentId lowest_enabled(Skip&& skip) const;
  const Agent& agent(AgentId id) const { return *agent_at_[id]; }
  std::size_t agent_count() const { return agent_at_.size(); }
  std::uint64_t steps() const { return steps_; }
  // No copy and no allocation: the crash reporter reads it from a signal handler.
  const std::vector<AgentId>& schedule_so_far() const { return outcome_.schedule; }
  AgentId last_agent() const { return last_agent_; }
  std::string describe_agent(AgentId id) const;   // "thread 37 (warp 1 lane 5)"
  std::string cta_name(std::uint32_t cta) const;  // "cta 1 (rank 1 of 2x1) " ("" in a one-CTA launch)
  std::string describe_op(const Agent& a) const;  // "wait full[1] phase 3"
  const std::vector<TraceEntry>& trace() const { return trace_; }
  std::vector<TraceEntry> take_trace() { return std::move(trace_); }  // moved out, not copied
  const RunLimits& limits() const { return limits_; }

  // --- for the crash reporter and the watchdog (sim/runtime/crash.cpp, watchdog.cpp) -----------
  // The thread agent whose fiber runs (or is about to run), else null.
  const Agent* running_agent() const { return current_; }
  // progress_ticks() grows every time a fiber (re)enters protocol code or makes a load or
  // store; in_protocol_code() says whether one is in it now. Read from the watchdog's thread.
  std::uint64_t progress_ticks() const { return ticks_.load(std::memory_order_relaxed); }
  bool in_protocol_code() const { return in_protocol_.load(std::memory_order_relaxed); }
  double watched_limit_s() const { return watch_limit_s_.load(std::memory_order_relaxed); }
  // The OS thread that runs the executions (the watchdog signals it to end a stuck thread).
  pthread_t os_thread() const { return os_thread_; }
  // The step (1-based) that let the CTA's last sync_threads go (its last arrival or the
  // exit of the last thread it waited for).
  std::uint64_t sync_release_step(std::uint32_t cta) const { return ctas_[cta].release_step; }
  // The bar.arrive 0 arrivals of the CTA's generation released last (agent, 1-based step).
  const std::vector<BlockArrival>& sync_released_arrivals(std::uint32_t cta) const {
    return ctas_[cta].released_arrivals;
  }
  const std::vector<AgentId>& sync_released_waiters(std::uint32_t cta) const { return ctas_[cta].released_waiters; }

  // --- for HostPlatform (the calling fiber's thread) ------------------------------------
  const Agent& self() const { return *current_; }
  const LaunchShape& launch() const { return shape_; }
  unsigned char* shared_memory();
  void label(MbarrierState& bar, const char* name, int index);
  // Names a range of memory for reports (P::label_memory): an address in it is shown as
  // 'name index'[element]. Labels live for the execution that made them.
  void label_memory(const void* p, std::size_t bytes, std::size_t elem_bytes, const char* name, int index);
  // The call site of the current thread's next operation (HostPlatform passes the protocol's).
  // Always inlined: on a bool try_wait's probe (sim/runtime/guarded_tries.cpp) its capture of
  // the thread's state must see the protocol's frame, not a frame of its own.
  [[gnu::always_inline]] void at(const CallSite& site) {
    if (!current_) return;
    if (current_->guard_probe != GuardProbeStage::none) [[unlikely]] {
      capture_guard_state();
      guard_probe_at();
      return;
    }
    copy_site(current_->site, site);
    if (current_->guard_watch != 0) [[unlikely]]
      capture_guard_state();  // a learnt try's paths (guarded_tries_learnt.cpp)
  }
  // On a probe's path: an access, an operation, a failed check or the thread's end puts the
  // thread back at its try (sim/runtime/guarded_tries.cpp). Never returns.
  bool guard_probing() const { return current_ && current_->guard_probe != GuardProbeStage::none; }
  [[noreturn]] void guard_probe_spoil();
  // An access on a probe's path, not made visible: a read is noted (both paths must make the
  // same reads), a write puts the thread back at its try.
  void guard_probe_access(const void* addr, std::size_t bytes, bool write);
  // On a probe's false path, last in a blocking wait called by protocol code (`frame`, its
  // __builtin_frame_address(0)): its return zeroes the stack below its caller, and `args`,
  // `bytes` (its parameters passed in memory, dead once it returns) are left out of the
  // comparison (sim/host_platform.hpp, zero_on_probe_return).
  [[gnu::noinline]] void guard_probe_wait_returns(void* frame, const void* args, std::size_t bytes);
  // Every operation that changes a barrier's state (ops.def: effect other than none/observe):
  // its scheduling point, then apply_barrier_op(). Returns the arrive's token (else empty).
  MbarrierToken barrier_op(const Op& op);
  // The same with every other field of the Op at its default (what HostPlatform's mbarrier
  // instructions are): the fields go to the announcement in registers, not through an Op in
  // memory that the scheduling point copies.
  MbarrierToken barrier_op(OpKind kind, MbarrierState& bar, std::int64_t arg = 0, bool no_complete = false);
  // The same operation in its .shared::cluster form on the barrier at `local`'s offset in CTA
  // `rank` of this cluster (mapa, then the op with Op::remote set: sim/runtime/cluster.cpp).
  MbarrierToken barrier_op_remote(Op op, std::uint32_t rank);
  void wait_token(MbarrierState& bar, const MbarrierToken& token);  // mbarrier.wait on a state token
  // The scope of a wait's acquire: none (a collective's convergence that orders no memory,
  // collectives.cpp), .cta (every mbarrier wait of the contract but the _cluster forms) or
  // .cluster (which alone synchronizes with a peer CTA's release: RaceDetector::release).
  enum class Acquire : std::uint8_t { none, cta, cluster };
  void wait(MbarrierState& bar, std::int64_t phase, Acquire acquire = Acquire::cta);
  // test_wait or try_wait (kind), by parity or, with `token`, by state token.
  bool test_wait(MbarrierState& bar, std::int64_t phase, OpKind kind, const MbarrierToken* token = nullptr);
  // Called by HostPlatform right before test_wait: the calling thread's state, for spin
  // recognition (kept only while this execution's fibers are inside protocol code).
  [[gnu::always_inline]] void capture_poll_state();
  // The calling thread's state at a platform call on a bool try_wait's probe, or while a learnt
  // try is watched (sim/runtime/guarded_tries.cpp, guarded_tries_learnt.cpp).
  [[gnu::always_inline]] void capture_guard_state();
  // Called by HostPlatform before an atomic load at `pc` (its inlined code: program_counter()),
  // after at(): notes the pc, and says whether the state is worth taking for spin recognition.
  // Not where the thread's last load was this very load on another word (a loop walking an
  // array: the copy would be a fifth of each of its steps).
  bool load_wants_state(const std::int64_t* addr, const void* pc);
  // How deep a runtime zeroes its threads' stacks for spin snapshots, before each execution's
  // threads (fibers.cpp), so that a snapshot holds only this execution's bytes: not at all
  // until a capture (a protocol that never polls or loads atomically pays nothing), then at
  // least this. A capture deeper than the scrub ends its execution, which runs again with a
  // scrub that deep (snapshot_too_deep); the runtime's snapshot_limit_ only grows.
#if defined(__SANITIZE_ADDRESS__)
  // ASan's frames are several times larger (redzones, a slot per temporary): the differential
  // programs' thread function needs more than 12 KiB there.
  static constexpr std::size_t kSnapshotFirstScrub = 32 * 1024;
#else
  static constexpr std::size_t kSnapshotFirstScrub = 3 * 1024;
#endif
  // A snapshot's bytes at most (with its registers): every thread's snapshot buffer holds this
  // much before an execution, so that a capture does not allocate.
  std::size_t snapshot_bytes() const { return snapshot_limit_ + 8 * sizeof(std::uint64_t); }
  // The most atomic loads one spin iteration may make and still be recognised as a spin.
  static constexpr std::size_t kLoopReadsMax = 8;
  // A loop whose polls repeat from a changed state (a back-off counter) is explored poll by poll
  // for this many re-polls (exact for a loop giving up by then), then merged (docs/model.md).
  static constexpr std::uint32_t kBackoffExplored = 3;
  // Agent::guard_watch: what a thread's learnt bool try_wait is watched for
  // (guarded_tries_learnt.cpp): its state at its next platform call after a true answer; after
  // a false one, its next op (the guarded wait?), then its state at its next platform call after
  // that wait; or, for a merged try that failed (learnt or probed), its next op, which makes the
  // failed poll no event if it is the wait.
  static constexpr std::uint8_t kGuardAfterTrue = 1, kGuardAfterFalse = 2, kGuardAfterWait = 3, kGuardNoop = 4;
  std::uint32_t pending_count(const MbarrierToken& token);
  // The full phase a parity-only wait of the current thread means: the phase it knows
  // complete (through happens-before; -1 before anything) if the parity is that phase's, else
  // the one after. A wait answered by a later phase of the same parity is then aliasing,
  // while a thread that skips phases it knows (through others) completed is not.
  std::int64_t phase_for_parity(MbarrierState& bar, std::uint32_t parity);
  // The phase bit `bit` means for thread `a` now (what phase_for_parity returns).
  std::int64_t phase_by_bit(const Agent& a, const MbarrierState& bar, std::uint32_t bit) const;
  std::int8_t take_parity_next();  // the bit phase_for_parity gave the next wait or poll (-1: none)
  // try_wait.parity whose answer only wait_status reads: deferred (see the top of this file).
  TryWaitStatus try_wait_status(MbarrierState& bar, std::int64_t phase);
  // Blocks until the phase of `status` completes, unless its try found it complete.
  void wait_status(MbarrierState& bar, const TryWaitStatus& status);
  void bulk_copy(void* smem_dst, const void* gmem_src, std::uint32_t bytes, MbarrierState& bar);
  void bulk_store(void* gmem_dst, const void* smem_src, std::uint32_t bytes);  // TMA store
  // --- tensor copies with a tensor map (sim/runtime/tensor_copies.cpp) -----------------------
  // cp.async.bulk.tensor (tiled): the box of the map at `desc` (a TensorMap, tensor_map.hpp) at
  // `coords` into shared memory at `smem_dst`, completing its bytes on `bar`; cta_mask != 0:
  // (with `multicast`) .multicast::cluster into those ranks' shared memory at the same offset, each on its own
  // barrier at `bar`'s offset.
  void tensor_load(const void* desc, const std::int32_t* coords, void* smem_dst, MbarrierState& bar,
                   std::uint16_t cta_mask = 0, bool multicast = false);
  // cp.async.bulk.tensor global.shared::cta (reduce_add: cp.reduce.async.bulk.tensor .add) into
  // this thread's bulk groups: a read agent, then a write agent, as bulk_store.
  void tensor_store(const void* desc, const std::int32_t* coords, const void* smem_src, bool reduce_add = false);
  // cp.async.bulk.prefetch.tensor: validates the map; no effect on the protocol.
  void tensor_prefetch(const void* desc, const std::int32_t* coords);
  // --- async groups: bulk stores, cp.async, wgmma (sim/runtime/async_groups.cpp) -----------
  // commit_group of the family: the members issued since the last one form the next group
  // (not a scheduling point: it only groups them).
  void commit_group(GroupKind kind);
  // wait_group `pending` (`wait` is the family's wait row: bulk_wait_read, cp_async_wait,
  // wgmma_wait): blocks until every committed group but the newest `pending` is done, and is
  // ordered after its members.
  void wait_group(OpKind wait, std::uint32_t pending);
  // The thread whose groups of `kind` `thread` uses: itself; for wgmma its warp group's first.
  AgentId group_owner(const Agent& thread, GroupKind kind) const;
  // Members still outstanding that the wait `op` (a group_wait row) of `thread` waits for.
  std::uint32_t waited_for(const Agent& thread, const Op& op) const;
  // wgmma.mma_async's shared-memory operands (a: nullptr when A is in registers): read by
  // the async proxy from its issue until the wgmma.wait_group that retires its group.
  // HostPlatform's: the warp converges (.sync), the group's warps agree (.aligned), then the
  // warp's lowest lane issues (wgmma_issue).
  void wgmma_mma_async(const void* a, std::uint32_t a_bytes, const void* b, std::uint32_t b_bytes);
  // wgmma.mma_async performed (sim/runtime/warp_matrix.cpp): the warp group converges as
  // above, its operands are read from shared memory through the descriptors (A from the
  // lanes' `a_registers` when given), the group's first thread issues one read agent per
  // shared-memory operand over its exact footprint, and `d` (this thread's n / 2
  // accumulator values) becomes A*B + D (D = A*B without shape.accumulate).
  void wgmma_mma(const matrix::WgmmaShape& shape, std::uint64_t desc_a, const std::uint32_t* a_registers,
                 std::uint64_t desc_b, float* d);
  // ldmatrix / stmatrix .sync.aligned.m8n8.x{count}{.trans}.shared.b16 (warp_matrix.cpp): the
  // warp converges (no memory order); `row` is this lane's row address (read for lanes
  // 0 .. 8 * count - 1); ldmatrix fills `count` registers, stmatrix writes them.
  void ldmatrix(const void* row, std::uint32_t count, bool trans, std::uint32_t* out, const CallSite& site);
  void stmatrix(void* row, std::uint32_t count, bool trans, const std::uint32_t* in, const CallSite& site);
  // The issue alone, by the current thread into its wgmma groups (the differential programs
  // issue from one thread); its reads acquire `round` of `convergence` when given.
  enum class Space : std::uint8_t { global, own_shared, cluster_shared };
  void check_spaces(const char* what, const void* dst, Space dst_space, const void* src, Space src_space,
                    const MbarrierState* bar);
  void spawn_store_write(Agent& read);  // a bulk store's read landed (async_groups.cpp)
  // `a_ranges` / `b_ranges` (optional): the (offset from a / b, bytes) ranges each operand
  // reads, its exact footprint; without them the whole [p, p + bytes).
  using ByteRanges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  void wgmma_issue(const void* a, std::uint32_t a_bytes, const void* b, std::uint32_t b_bytes,
                   const runtime_records::Rendezvous* convergence = nullptr, std::int64_t round = 0,
                   const ByteRanges* a_ranges = nullptr, const ByteRanges* b_ranges = nullptr);
  // fence.proxy.async{.space}: this thread's generic writes so far in `spaces` become visible
  // to the async proxy (RaceDetector's MemorySpace).
  void fence_proxy_async(FenceSpaces spaces);
  void block_sync();
  // bar.sync / bar.arrive 0 with the CTA's thread count (named_barrier routes them here).
  void block_barrier(std::uint32_t count, bool sync);
  // bar.arrive / bar.sync on the CTA's named barrier `id` for `count` threads (sim/runtime/barrier_ops.cpp).
  void named_barrier(std::uint32_t id, std::uint32_t count, bool sync);
  // bar.red.{popc,and,or}: bar.sync that also reduces every participant's predicate over the
  // generation; returns the popcount, or 0/1 for and/or.
  using BarReduction = runtime_records::BarReduction;
  std::uint32_t bar_red(std::uint32_t id, std::uint32_t count, BarReduction op, bool pred);
  // --- clusters (sim/runtime/cluster.cpp) --------------------------------------------------
  std::uint32_t cluster_rank() const { return current_->cta % shape_.cluster_size(); }
  // mapa: `p` (in this CTA's shared memory) at the same offset in CTA `rank` of this cluster.
  void* map_shared_rank(const void* p, std::uint32_t rank);
  // cp.async.bulk...multicast::cluster: lands at smem_dst's offset and complete_tx's bar's
  // offset in every CTA of `cta_mask` (bit r: rank r), one copy agent per CTA.
  void bulk_copy_multicast(void* smem_dst, const void* gmem_src, std::uint32_t bytes, MbarrierState& bar,
                           std::uint16_t cta_mask);
  void cluster_arrive(bool relaxed);  // barrier.cluster.arrive{.release,.relaxed}
  void cluster_wait();                // barrier.cluster.wait (.acquire)
  void fence_mbarrier_init();         // fence.mbarrier_init.release.cluster
  // --- warp and warp-group collectives (sim/runtime/collectives.cpp) ------------------------
  void syncwarp(std::uint32_t mask);    // __syncwarp / bar.warp.sync
  bool elect_sync(std::uint32_t mask);  // elect.sync: true in the lowest lane of mask
  std::uint32_t shfl_sync(std::uint32_t mask, std::uint32_t value, std::uint32_t src_lane);  // shfl.sync.idx
  // wgmma.fence / commit_group / wait_group (arg: its N): the warp converges, and the warp group's
  // warps must execute one sequence of them (.aligned).
  bool warpgroup_collective(const char* instruction, std::uint32_t arg = 0);  // false: the execution is over
  std::int64_t atomic(OpKind kind, std::int64_t* addr, std::int64_t arg, std::int64_t expected = 0);
  // --- cp.async, non-bulk (sim/runtime/cp_async.cpp) ---------------------------------------
  void cp_async(void* smem_dst, const void* gmem_src, std::uint32_t bytes);  // cp.async.ca.shared.global
  // cp.async.mbarrier.arrive{.noinc}: an arrive-on `bar` once every cp.async this thread issued
  // so far has landed; without .noinc the pending count is raised by one first.
  void cp_async_mbarrier_arrive(MbarrierState& bar, bool noinc);
  // A load or store of protocol data (not a scheduling point): checked for races.
  void data_access(const void* addr, std::size_t bytes, bool write, const CallSite& site = {}) {
    if (!access_data(addr, bytes, write, site_id(site), false) && std::uncaught_exceptions() == 0) throw Aborted{};
  }
  // An access of compiler-instrumented code (a layer's callbacks), at the line of its return
  // address `pc` (CallSites::pc_id); an `atomic` one never races with other atomics. No throw
  // (an exception through a compiler callback ends the process): the thread unwinds later.
  void code_access(const void* addr, std::size_t bytes, bool write, const void* pc, bool atomic = false) noexcept;
  // A store of instrumented code to memory the race detector does not track (a host object, a
  // global of the program): not the thread's stack, so its state lives there too. It ends a
  // spin iteration (the loop's count may be that word) and a guarded try's comparison.
  void untracked_store(const void* addr) noexcept;
  // A thread of this execution runs protocol code (not the runtime's, not the host's).
  bool in_thread_code() const {
    return current_ && !over_ && current_->kind == Agent::Kind::thread && in_protocol_.load(std::memory_order_relaxed);
  }
  // The offset of `p` in the shared memory of the CTA holding it (a peer's too), or -1.
  std::int64_t shared_memory_offset(const void* p);
  // Process-wide: `hook` gets the shared memory of each CTA a thread enters after another's.
  // What it follows is one OS thread's executions, so once one was set a search runs its
  // executions on one thread (cta_hook_set_once; sim/explore/explore.cpp).
  static void set_cta_entered_hook(runtime_detail::CtaEnteredHook hook) {
    runtime_detail::cta_entered_hook = hook;
    if (hook) runtime_detail::cta_hook_set_once.store(true, std::memory_order_relaxed);
  }
  static bool cta_hook_set_once() { return runtime_detail::cta_hook_set_once.load(std::memory_order_relaxed); }
  // A small number naming a source line, for the race detector's shadow words (0: none). Ids
  // outlive executions: the lines are the program's.
  std::uint32_t site_id(const CallSite& site) { return sites_.id(site); }
  const CallSite& site_of(std::uint32_t id) const { return sites_.at(id); }
  void check_failed(const char* what);  // throws unless already unwinding

 private:
  // What the runtime keeps per barrier and per CTA (sim/runtime/runtime_records.hpp).
  using BarrierInfo = runtime_records::BarrierInfo;
  using Rendezvous = runtime_records::Rendezvous;
  using CtaInfo = runtime_records::CtaInfo;
  static constexpr std::uint32_t kNamedBarriers = runtime_records::kNamedBarriers;
  struct Aborted {};  // unwinds a fiber once the execution is over
  using DeferredTry = runtime_records::DeferredTry;
  std::vector<DeferredTry> tries_;  // by TryWaitStatus::id - 1, for this execution
  // Did every try `a` could make now of `phase` find it complete, in every order of this
  // execution's events? (wait_status: the answer a later wait on the status reads.)
  bool surely_complete(const Agent& a, const MbarrierState& bar, std::int64_t phase) const;
  std::vector<Rendezvous> cluster_bars_;  // barrier.cluster of each cluster
  // The CTA whose shared memory holds `p`, or -1; `likely` is looked at first (the loads and
  // stores of a thread are mostly to its own CTA's: no scan over the grid for them).
  std::int64_t cta_of(const void* p, std::uint32_t likely = 0) const;
  std::uint32_t copy_piece_bytes(std::uint32_t bytes) const;  // what each landing of a bulk copy moves
  // A barrier op of the current thread on `bar`: a local form needs a barrier of its own CTA,
  // a remote one (its Op::remote) a barrier whose init is visible to it, in a CTA of its
  // cluster still running.
  void check_barrier_user(MbarrierState& bar);
  void check_cluster_barrier_user(MbarrierState& bar);
  // May `user` use `bar`, a barrier of another CTA of its cluster? Only once an init of it is
  // visible to the user (a barrier not initialised at all is the same unfenced-init mistake);
  // an invalidated one is left to the operation's own misuse.
  bool peer_init_visible(AgentId user, const MbarrierState& bar) const {
    return bar.life == MbarrierState::Life::invalidated || (bar.is_live() && races_.init_visible(user, bar.id));
  }
  // `user` touches CTA `cta`'s shared memory from another CTA (`verb` on `bar`, or on `addr`):
  // ends the execution if that CTA exited; else remembered for the check at its exit.
  bool peer_use(const Agent& user, std::uint32_t cta, const char* verb, const MbarrierState* bar, const void* addr);
  std::string describe_use(const CtaInfo::PeerUse& use) const;
  void note_performed_peer_ops(const Agent& exiting);
  void cta_exited(std::uint32_t cta);  // its last thread finished: every peer use before its exit?
  void cluster_barrier_exit();         // an exiting thread leaves the cluster barrier's count
  MbarrierState& cluster_barrier();    // the current thread's cluster's, made at its first use
  // `make_name()` says what the rendezvous stands for; called at its first arrival only (formatting
  // it at every arrival was a twentieth of a fuzzing step of cluster-gemm). collectives.cpp.
  // The memory order of a convergence: none (elect.sync, shfl.sync, wgmma's), release only
  // (wgmma.mma_async: its operand reads acquire the round), or full (__syncwarp).
  enum class RendezvousOrder : std::uint8_t { none, release, full };
  // `lane` arrives in the open round of `r` (a counter of `count`, made at its first use) and
  // waits for it to complete; returns the round.
  template <class MakeName>
  std::int64_t rendezvous(Rendezvous& r, std::uint32_t count, std::uint32_t lane, RendezvousOrder order,
                          const MakeName& make_name);
  enum class WarpInstruction : std::uint8_t { syncwarp, elect_sync, shfl_sync, matrix };
  static runtime_records::CollectiveKind warp_collective_kind(WarpInstruction i) {
    return i == WarpInstruction::matrix ? runtime_records::CollectiveKind::warp_matrix
                                        : static_cast<runtime_records::CollectiveKind>(i);
  }
  std::uint32_t converge_warp(std::uint32_t mask, WarpInstruction instruction);
  using WgmmaOperands = runtime_records::WgmmaOperands;
  // `registers`: the calling lane's four registers brought to the round (wgmma's A in
  // registers), in the round's MatrixExchange.
  bool warpgroup_step(const char* instruction, const WgmmaOperands& operands, bool release,
                      std::int64_t* round = nullptr, const std::uint32_t* registers = nullptr);
  std::string describe_wgmma(const runtime_records::WgmmaStep& s) const;
  [[noreturn]] void collective_misuse(const std::string& what, MisuseKind kind = MisuseKind::collective);
  std::uint32_t live_mask(std::uint32_t cta, std::uint32_t warp) const;  // its lanes that have not exited
  void leave_count(MbarrierState& bar);  // an exiting thread leaves a hidden counter (a step)
  void collectives_exit();               // an exiting lane leaves its warp's collectives (collectives.cpp)
  using RedArrival = runtime_records::RedArrival;
  void named_barrier_op(std::uint32_t id, std::uint32_t count, bool sync, RedArrival* red);
  std::uint32_t block_reduce(std::uint32_t count, const RedArrival& red);  // bar.red 0 over all threads
  // The lanes of `warp` in `cta` that have not exited, and the lowest of them.
  std::uint32_t live_lanes(std::uint32_t cta, std::uint32_t warp, std::uint32_t* lowest) const;
  // Performs the current thread's deferred try_wait now (before its next event), if any.
  void perform_deferred_try();
  void perform_deferred_try_now();

  friend class StrategyScheduler;

  // The barrier's entry, registered at its first use in the execution (register_barrier).
  BarrierInfo& info(MbarrierState& bar) { return bar.id != 0 ? barriers_[bar.id - 1] : register_barrier(bar); }
  BarrierInfo& register_barrier(MbarrierState& bar);
  const BarrierInfo& info_of(const MbarrierState& bar) const { return barriers_[bar.id - 1]; }  // registered
  unsigned char* cta_shared_memory(std::uint32_t cta);
  std::string barrier_name(const MbarrierState& bar) const;
  // Announce `op` for the current agent and hand control to the scheduler; returns once the
  // agent is chosen to perform it. Returns false when the execution is over and the agent is
  // unwinding already (the op must then do nothing).
  bool schedule_point(const Op& op);
  // The same for an Op whose other fields are at their defaults (most steps): the fields are
  // written into the agent's from registers (copying an Op costs a step 22 instructions).
  bool schedule_point(OpKind kind, MbarrierState* bar = nullptr, std::int64_t arg = 0, bool no_complete = false,
                      std::int8_t parity = -1);
  // schedule_point's part before the agent's Op is written (a deferred try_wait status makes
  // an announcement of its own first): false, or throws Aborted, when the execution is over.
  bool begin_announcement();
  [[gnu::noinline]] void flush_failed_poll_now();
  bool announce_and_run();  // the rest: the Op is the agent's now
  template <class F>
  auto perform(F&& f);  // runs an op body, turning MisuseError into the outcome
  // sim/runtime/misuse.cpp: a misuse ends the execution, or (OnMisuse::proceed) is kept as its
  // root while the op runs again as the hardware runs it; conclude_root names both at the end.
  [[noreturn]] void end_misuse(const MisuseError& e);
  bool answer_as_hardware(const MisuseError& e);
  // The phase a wait that returned true acquires: the awaited one, or for an aliased wait the
  // hardware answered by parity (OnMisuse::proceed), the last completed one, which it saw.
  static std::int64_t answered_phase(const MbarrierState& bar, std::int64_t awaited) {
    return bar.named || !bar.is_live() || awaited == bar.phase - 1 ? awaited : bar.phase - 1;
  }
  void conclude_root();
  void announce(Agent& a);
  // Inline for what most steps are (an arrive, a copy, a sync, a plain wait), as announce()
  // asks at every step; polls, atomic loads and wait_groups out of line.
  bool is_enabled_now(const Agent& a) const;
  bool is_enabled_uncommon(const Agent& a) const;
  // An enabled blocking wait that a new phase of its barrier may disable: on uninitialised
  // memory, for a phase ahead, or any, answered by parity (OnMisuse::proceed: two phases on,
  // the parity reads not complete again).
  bool wait_is_fragile(const Agent& a) const;
  static bool await_word_changed(const Agent& a);
  // The enabled set (a list for the strategy's pick, bits for lowest_enabled): inline, as
  // every step adds and removes one.
  void add_enabled(Agent& a);
  void remove_enabled(Agent& a);
  // After an op on `bar`: when it completed a phase (or init/inval), re-checks its waits.
  void barrier_changed(MbarrierState& bar, bool phase_completed);
  void new_phase(MbarrierState& bar, BarrierInfo& bi);
  void make_waits_fragile_at_init(MbarrierState& bar);
  boost::fibers::context* decide();  // picks and runs copy steps; returns the context to run
  boost::fibers::context* decide_inline();
  [[gnu::cold]] void end_none_enabled();
  [[gnu::noinline]] bool checkpoint();
  [[gnu::cold]] void end_diverged(AgentId pick);
  bool stop_due() const {
    return (limits_.stop && limits_.stop->load(std::memory_order_relaxed)) ||
           (limits_.deadline != std::chrono::steady_clock::time_point::max() &&
            std::chrono::steady_clock::now() >= limits_.deadline);
  }
  void switch_to(boost::fibers::context* ctx);
  void announce_switch(boost::fibers::context* next) const noexcept;
  void check_bulk_copy(const char* what, const void* dst, const void* src, std::uint32_t bytes);
  // `after`: the agent whose clock it starts from (default: the issuer's).
  Agent& spawn_copy_agent(Agent& issuer, void* dst, const void* src, std::uint32_t bytes, const Op& first,
                          const Agent* after = nullptr);
  // What one barrier operation did, and the generic path that does it for agent `a` (a thread
  // or an async-proxy agent): the row's effect on the state, its memory order as race-detector
  // edges, wake-ups, the trace entry and the observer's step (sim/runtime/barrier_ops.cpp).
  // Throws MisuseError as the emulator does.
  using BarrierEffect = runtime_records::BarrierEffect;
  BarrierEffect apply_barrier_op(Agent& a, const Op& op, AgentId spawned = kNoAgent);
  void count_down(const Agent& a, const MbarrierState& bar, Effect effect, const BarrierEffect& r);
  void land_copy_piece(Agent& copy);
  const tma::TensorMap& tensor_map_operand(const char* what, const void* desc);
  void tensor_box(const char* what, const tma::TensorMap& m, const std::int32_t* coords, const void* smem,
                  std::vector<tma::Segment>& out);
  bool land_tensor_bytes(Agent& copy);   // a tensor load's bytes (false: the execution ended)
  bool land_tensor_write(Agent& write);  // a tensor store's write agent's bytes
  // Warp-uniform issue (docs/semantics.md, "Tensor copies"): the lanes of one warp that issue
  // the same tensor store (same call site, map, coordinates and source) at one call make one
  // store. Each lane's copy is its own read and write agent in its own bulk group; the first of
  // their writes to land writes the bytes, a later one of the same bytes writes nothing.
  struct TensorStoreIssue {
    std::uint32_t cta = 0, warp = 0;
    CallSite site;
    tma::TensorMap map;  // the map's contents (each thread may hold its own copy of the kernel's)
    const void* smem = nullptr;
    std::int32_t coords[tma::kMaxRank] = {};
    std::uint64_t lanes = 0;  // the lanes that issued it
    bool written = false;     // a lane's write landed: `bytes` hold what it wrote
    std::vector<unsigned char> bytes;
  };
  std::vector<TensorStoreIssue> tensor_issues_;
  void join_tensor_issue(Agent& read, const std::int32_t* coords, const void* smem);
  // An async-group member's step: a store's, a cp.async's or a wgmma operand's memory
  // access, then group_member_done.
  void land_group_member(Agent& member);
  void add_group_member(Agent& issuer, Agent& member, GroupKind kind);
  void group_member_done(Agent& member);
  void release_cp_async_arrivers(Agent& issuer);
  void async_arrive(Agent& arriver);
  void thread_finished(Agent& a);
  void end(Verdict v, std::string_view message, std::optional<MisuseKind> misuse = std::nullopt);
  void end_blocked();
  void end_race(const RaceDetector::Race& race);
  [[gnu::noinline]] bool cluster_access_allowed(const void* addr, bool write);  // data_access's, in clusters
  [[gnu::cold]] void end_endless_accesses();
  std::string describe_address(const void* addr) const;
  using MemoryLabel = runtime_records::MemoryLabel;
  std::vector<MemoryLabel> memory_labels_;  // newest last: the newest covering label wins
  CallSites sites_;
  Outcome::Located located(const CallSite& site, std::string text) const;
  void fiber_main(AgentId id);
  bool run_thread_main(Agent& a);  // false: it crashed or hung (Verdict::crash, Verdict::hang)
  // Barrier 0 (sim/runtime/block_sync.cpp).
  std::uint32_t block_thread_count() const;
  bool block_arrived(const CtaInfo& cta, AgentId id) const;
  bool block_count_agrees(Agent& a, const char* form, std::uint32_t count);
  void double_block_arrival(Agent& a);
  void block_wait_arrive(Agent& a);
  bool block_red_mixes(Agent& a, bool reduces);  // ends the execution when it does
  bool block_generation_complete(std::uint32_t cta_index) const;
  void release_block_if_complete(std::uint32_t cta_index);
  // execute()'s parts: clear the last execution, start a fiber per thread, run them to the
  // end, judge the output.
  void reset_execution_state();
  void spawn_threads();
  void run_threads();
  boost::fibers::context* primed_next(AgentId id);
  void judge_output(Program& program);
  // A capture found `depth` bytes of live stack, more than this execution scrubbed: the
  // execution ends here and execute() runs it again with a scrub that deep (its snapshots
  // could hold an earlier execution's bytes; refused, the loop would be explored poll by poll,
  // which never ends under a search).
  [[gnu::noinline, gnu::cold]] void snapshot_too_deep(std::size_t depth);
  void deepen_scrub(std::size_t stack_bytes);  // to the deepest capture wanted, in whole KiB
  // Turns on a `feature` the runtime keeps off until a protocol first uses it (its records
  // cost every step): then the execution ends and runs again from its start (true), as above.
  bool run_again_with(bool& feature, const char* why);
  void end_to_run_again(const char* why);  // the execution ends here; execute() runs it again
  // The step's trace line, when the execution keeps a trace (RunLimits::record_trace).
  void record(const Agent& a, const MbarrierState* bar) {
    if (limits_.record_trace) [[unlikely]]
      record_step(a, bar);
  }
  void record_step(const Agent& a, const MbarrierState* bar);
  // An atomic's line, with the value it read (and for a cas whether it swapped).
  void record_atomic_step(const Agent& a, std::int64_t read, bool wrote);
  // Control passes into protocol code (a fiber starts or returns from a visible operation)
  // or back into the runtime's: what the watchdog watches. One writer: this OS thread.
  void to_protocol() {
    tick();
    in_protocol_.store(true, std::memory_order_relaxed);
    if (runtime_detail::cta_entered_hook) [[unlikely]]
      enter_cta();
  }
  void enter_cta();  // the hook, if the running thread's CTA is not the one it saw last
  bool access_data(const void* addr, std::size_t bytes, bool write, std::uint32_t site, bool atomic);
  void to_runtime() { in_protocol_.store(false, std::memory_order_relaxed); }
  void tick() { ticks_.store(ticks_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  // Reports a step to the observer (the search's), building its StepInfo from `fields` only
  // when there is one: a fuzzing run has none, and building it was a tenth of a barrier op.
  template <class... Fields>
  void observe(Fields&&... fields) {
    if (observer_) [[unlikely]]
      observer_->on_step(*this, StepInfo{std::forward<Fields>(fields)...});
  }
  // The same for a step whose later fields are set by name: `make` returns the StepInfo.
  template <class Make>
  void observe_with(Make&& make) {
    if (observer_) [[unlikely]]
      observer_->on_step(*this, make());
  }
  // A failed poll of a thread whose state was captured is reported to the observer only at
  // the thread's next announcement, which tells whether it was a spin iteration (no other
  // agent runs in between, so the report keeps its place in the order of steps).
  void flush_failed_poll(bool spin_noop);
  // Bool try_waits guarding waits (sim/runtime/guarded_tries.cpp): the probe of a try's two
  // paths from its state (probe_guarded_try: 0, the caller returns true; 1, false; 2, decided),
  // the fork and the jump back to it, and the probe's steps at a platform call and at the wait.
  GuardProbe probe_;
  int probe_guarded_try(MbarrierState& bar, std::int64_t phase, bool& met);
  [[gnu::noinline]] int guard_fork(MbarrierState& bar, std::int64_t phase);
  [[noreturn, gnu::noinline]] void guard_rewind(int resume);
  [[gnu::noinline]] void guard_probe_at();
  void guard_probe_wait(const MbarrierState& bar, std::int64_t phase);
  // After its answer: a merged try that failed is watched for its wait.
  void watch_probed_try(Agent& a, MbarrierState& bar, bool merged, bool complete);
  // Where the program's writes are not all tracked: the tries learnt by two runs of the
  // runtime's own when its first bool try_wait comes (guarded_tries_learnt.cpp), and what was
  // learnt of a try's key (null: nothing; met(), the pair is one wait).
  GuardedTries guarded_;
  bool learn_wanted_ = false;  // the execution ended at a bool try_wait of a program not learnt
  void learn_guarded_tries(Program& program, const RunLimits& limits);
  const GuardedTry* known_guarded_try(const Agent& a, const MbarrierState& bar, std::int64_t phase) const;
  void watch_learnt_try(Agent& a, MbarrierState& bar, std::int64_t phase, bool complete);
  // The thread announced its next operation while its try is watched or its failed poll awaits
  // the guarded wait (called with the op set, before it is scheduled).
  void guarded_announced();
  std::optional<StepInfo> failed_poll_;
  std::uint64_t failed_poll_step_ = 0;  // the step it was made at
  // Threads at an await that also waits for a word to change (Agent::await_reads): an atomic
  // write may enable or disable them.
  std::vector<AgentId> read_awaiters_;
  std::vector<AgentId> fragile_scratch_;  // barrier_changed's buffer (no allocation per phase)
  void atomic_written(const std::int64_t* addr);
  // A loop of atomic loads alone (docs/model.md, "Spin-loop recognition"): an atomic load that
  // comes back to an earlier load's call site in the same state, with only loads in between,
  // becomes an await of that iteration's words (memory.cpp).
  void recognise_load_spin(Op& op);
  // A loop of polls (spin_loops.hpp): before a poll's scheduling point, whether it repeats one
  // of its loop's (op.await, op.backoff); after its answer, the loop it joins or ends.
  void classify_poll(Agent& self, const MbarrierState& bar, std::int64_t awaited, OpKind kind, Op& op);
  void note_poll_answer(Agent& a, MbarrierState& bar, std::int64_t awaited, OpKind kind, bool complete);
  // The most call sites one loop of polls may poll at (a back-off loop has two).
  static constexpr std::uint32_t kLoopPollSitesMax = 4;
  void note_load(Agent& a, const std::int64_t* addr, std::int64_t value, bool awaited);
  // The most loads one iteration of such a loop may make and still be recognised.
  static constexpr std::uint32_t kLoadLoopMax = kLoopReadsMax + 1;

  Program* program_ = nullptr;
  Strategy* strategy_ = nullptr;
  StepObserver* observer_ = nullptr;
  RunLimits limits_;
  LaunchShape shape_;
  // The agents of this execution, by id. They are taken in order from a pool that outlives
  // executions, so that an agent's buffers (snapshots, lists) are allocated once, not per run.
  std::vector<Agent*> agent_at_;
  // Side by side in a deque (which keeps them in place): allocated one by one, the records lay
  // among other heap blocks and shared L1 sets with hot data (callgrind's model of this VM's
  // cache: a fuzzing run's L1 data misses -30% with the deque).
  std::deque<Agent> agent_storage_;
  std::vector<Agent*> agent_pool_;  // agent_storage_ by id (cheaper than indexing the deque)
  Agent& new_agent();               // the next id's agent, cleared
  std::vector<CtaInfo> ctas_;
  std::vector<BarrierInfo> barriers_;  // index = MbarrierState::id - 1; the first n_barriers_ are this execution's
  std::size_t n_barriers_ = 0;
  std::vector<AgentId> enabled_;
  std::vector<std::uint64_t> enabled_bits_;  // the same agents, as bits by id (if track_enabled_bits_)
  bool track_enabled_bits_ = false;          // this execution's strategy wants_lowest_enabled()
  std::uint32_t threads_ = 0;
  std::uint32_t unfinished_threads_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t next_check_ = 0;  // the step of decide's next checkpoint()
  std::uint64_t accesses_in_step_ = 0;
  std::uint64_t copies_ = 0;
  AgentId last_agent_ = kNoAgent;
  Agent* current_ = nullptr;
  std::uint32_t entered_cta_ = ~0u;  // the CTA the cta_entered_hook saw last (~0u: none)
  bool priming_ = false;
  bool over_ = false;
  // Spin snapshots: the live stack they may take (scrubbed before each thread; 0: no capture
  // yet), and the deepest one this execution found past it (0: none; else it runs again).
  std::size_t snapshot_limit_ = 0;
  std::size_t snapshot_wanted_ = 0;
  // Keep the ops that count each phase down (count_down): from the runtime's first
  // try_wait_status on (its execution runs again).
  bool count_down_records_ = false;
  // Keep the race detector's phase knowledge (known_phase): from the runtime's first wait or
  // poll by phase bit or try_wait status on (its execution runs again), and in cluster shapes.
  bool phase_knowledge_ = false;
  bool run_again_ = false;  // the execution ended to run again from its start (execute)
  Outcome outcome_;
  RaceDetector races_;
  std::vector<TraceEntry> trace_;

  boost::fibers::context* main_ctx_ = nullptr;
  boost::fibers::context* next_ctx_ = nullptr;  // what the scheduling algorithm returns next
  AgentId newborn_ = kNoAgent;                  // agent whose fiber is being created
  struct StackPool;
  std::unique_ptr<StackPool> stacks_;
  // Thread fibers outlive executions: thread i of every execution runs on fiber i, which
  // waits (parked) between executions instead of ending; creating and ending a fiber per
  // thread and run was most of a short run's cost. Each scrubs its stack before a thread.
  struct ParkedFiber {
    boost::fibers::context* ctx = nullptr;
    const unsigned char *stack_lo = nullptr, *stack_hi = nullptr;
  };
  std::vector<ParkedFiber> fibers_;
  bool quitting_ = false;               // parked fibers asked to end (the runtime's end, a new stack size)
  const void* fiber_thread_ = nullptr;  // the OS thread the fibers belong to (its scheduler)
  void fiber_loop(std::uint32_t slot);
  void quit_fibers();
  void prepare_fibers(std::size_t stack_bytes);  // this OS thread's scheduler, stacks of this size
  struct MakeCurrent {                           // makes `rt` the OS thread's current runtime, until destroyed
    Runtime* outer;
    explicit MakeCurrent(Runtime* rt);
    ~MakeCurrent();
  };

  std::atomic<std::uint64_t> ticks_{0};
  std::atomic<bool> in_protocol_{false};
  std::atomic<double> watch_limit_s_{0};
  pthread_t os_thread_{};
  bool watched_ = false;  // registered with the watchdog
};

}  // namespace mbcheck::sim

#include "sim/runtime/runtime_inline.hpp"  // IWYU pragma: export
