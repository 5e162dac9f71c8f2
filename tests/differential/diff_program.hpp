// Small mbarrier programs as data, for differential testing: the same program runs under
// the reference enumerator (reference.hpp: the definition of what the hardware may do) and
// under the fiber runtime explored by DPOR (runtime_program.hpp). Both report outcomes in
// the format of format_observed(), so their sets can be compared as strings.
//
// Shape: `ctas` CTAs of `threads` threads. Each CTA has its own `barriers` mbarriers
// (init counts `counts[b]`), two plain data words D[0..1] and two 32-byte copy slots
// S[0..1] (4 int64 words each) in shared memory; all CTAs share two atomic words A[0..1]
// in global memory. Thread g (global index cta * threads + t) runs:
//   prologue: thread 0 of the CTA inits barrier 0, 1, ... (one step each); every thread
//             then runs one sync_threads;
//   script:   scripts[g], one Instr after another;
// then it exits.
//
// Semantics of an Instr (`bar` names a barrier of the thread's own CTA; a "poll" answers
// true iff the awaited phase q is complete, i.e. the barrier is in phase q+1; waiting for a
// phase that is neither the current one nor the preceding one is phase aliasing, a bug):
//   arrive              mbarrier.arrive (count 1)
//   arrive_drop         mbarrier.arrive_drop (count 1)
//   arrive_no_complete  mbarrier.arrive.noComplete (count 1); records pending_count of its
//                       token (the pending count just before the arrive)
//   arrive_expect_tx    mbarrier.arrive.expect_tx(arg bytes)
//   expect_tx           mbarrier.expect_tx(arg bytes)
//   complete_tx         mbarrier.complete_tx(arg bytes)
//   arrive_token        mbarrier.arrive, keeping its state token in the thread's token slot
//                       for `bar` (one slot per barrier, overwritten)
//   wait                blocking wait for phase arg: runs once the barrier is no longer in
//                       phase arg (then it answers complete, or reports aliasing)
//   test_wait, try_wait poll phase arg once; records the answer (0/1). try_wait may time out
//                       while the phase is incomplete, so both answer "current state".
//   token_test_wait     poll the phase of the token slot (no-op when the slot is empty);
//                       records the answer
//   token_wait          blocking wait on the token's phase (no-op when the slot is empty)
//   spin_try_wait       while (!try_wait(bar, arg)) {}
//   spin_backoff        n = 0; while (!test_wait(bar, arg)) { if (n < 2) ++n; }  records n
//   spin_flag           while (!try_wait(bar, arg)) { if (atomic_load(A[0]) != 0) break; }
//                       records 1 if the flag ended the loop, else 0 (each poll and each load
//                       is a step of its own)
//   spin_atomic         while ((v = atomic_load(A[arg])) == 0) {}  records v (a loop of loads
//                       alone: each load is a step; the runtime's load-loop await)
//   spin_atomic_pair    while ((v = atomic_load(A[0])) == 0 && (v = atomic_load(A[1])) == 0) {}
//                       records the word that ended it (0/1) and v (a loop of loads over two
//                       words: each load is a step; the runtime's await of both words)
//   spin_backoff_grow   n = 0; while (!test_wait(bar, arg)) nanosleep(++n);  records nothing:
//                       the counter grows without bound and is dead after the loop (the
//                       runtime's back-off merge; the reference: a poll loop)
//   spin_two_sites      n = 0; for (;;) { if (try_wait(bar, arg)) { r = 0; break; }
//                         if (n < 2) { ++n; continue; } if (test_wait(bar, arg)) { r = 1; break; } }
//                       records r: a back-off loop polling at two places (the runtime's loop
//                       over two call sites), each poll a step of its own
//   spin_counter_mem    c = 0; while (c < 2) { if (try_wait(bar, arg)) break; c = c + 1; }
//                       records c; the count lives in a word of the thread's own in global
//                       memory (P::load / P::store: no spin state that repeats; the loop gives up
//                       after two failed polls)
//   fence_proxy         fence.proxy.async.shared::cta: the thread's loads of its CTA's slots so
//                       far are ordered before a later bulk copy's writes of them, once a
//                       release after it orders the copy (or the issuer's, after its wait)
//   try_then_wait       t = try_wait(bar, arg); if (!t) wait(bar, arg);          records t
//   try_guard_wait      t = try_wait(bar, arg); if (!t) wait(bar, arg);  records nothing: the
//                       branches meet (CUTLASS's consumer_try_wait then consumer_wait)
//   status_try          s = try_wait_status(bar, arg): a try_wait whose answer only
//                       status_wait reads, kept in the thread's status slot for `bar`
//                       (overwritten); records nothing
//   status_wait         wait(bar, s) on the slot's status: nothing if the slot is empty or
//                       its try found the phase complete, else a blocking wait for its phase
//   copy                cp.async.bulk of 16 * copy_pieces bytes from global memory into
//                       slot S[arg], signalling `bar` with complete_tx; the copy lands in
//                       `copy_pieces` pieces of 16 bytes (2 words), each a step of its own
//                       that writes its words and does complete_tx(16) on the barrier
//   load_slot           records word 0 of S[arg] (an ordinary load)
//   store, load         ordinary store of g+1 into D[arg] / load of D[arg] (recorded)
//   atomic_store        A[arg] = g+1 (relaxed atomic)
//   atomic_load         records A[arg]
//   atomic_add          records the old A[arg], adds 1
//   sync_threads        __syncthreads over the CTA's threads that have not exited
//   bar_arrive          bar.arrive on named barrier `bar` (0..1 here) of the CTA for `arg`
//                       threads (the programs run with warps of one thread); the first use of
//                       an id fixes its count (another count, or one outside [1, threads]:
//                       misuse named-barrier); an arrival completes the generation when it is
//                       the count-th of it, and later arrivals start the next one
//   bar_sync            bar.arrive, then a blocking wait for the generation it arrived in
//   parity_wait         wait given only the phase bit `arg` (0/1), as CUTLASS passes it: it
//                       means the phase the thread knows complete (K, -1 at first) if K has
//                       that parity, else K + 1, and is then a `wait` for that phase. K is
//                       the newest phase of `bar` (of its current incarnation) whose completion happens before the
//                       thread: its own successful waits and polls, and what releases (arrivals, a named-barrier
//                       arrival) and sync_threads carry from others (a copy's landing carries none)
//   parity_try_wait     the same reading of the bit, then a try_wait of that phase (records
//                       the answer)
//   cpa_copy            cp.async (non-bulk) of 16 bytes from global memory into words 0..1 of
//                       slot S[arg]: its landing is a later step of a copy agent of its own,
//                       ordered after the issue
//   cpa_commit          cp.async.commit_group: the thread's uncommitted cp.asyncs (landed or
//                       not) form its next group (not a step)
//   cpa_wait            cp.async.wait_group arg (0/1): blocks until every committed group but
//                       the newest arg has landed; ordered after those landings
//   cpa_arrive          cp.async.mbarrier.arrive on `bar` (arg 1: .noinc): raises the phase's
//                       pending count by one first (not with .noinc), then an arrive agent
//                       performs an arrive-on once every cp.async the thread issued before
//                       has landed; that arrive releases those copies' writes only
//   wg_mma              wgmma.mma_async with operand B in words 0..1 of slot S[arg], issued by
//                       the CTA's thread 0 (a warp group issues it once; in other threads it
//                       is nothing): a read agent of its own reads the words through the async
//                       proxy at a later step, ordered after the issue; reading a word whose
//                       last write was by the generic proxy (store, cpa_copy: no fence in
//                       these programs) is a race
//   wg_commit           wgmma.commit_group (thread 0; not a step): its uncommitted reads form
//                       the CTA's next wgmma group
//   wg_wait             wgmma.wait_group arg (0/1), by thread 0 (in other threads it is
//                       nothing): blocks until every committed group of the CTA but the newest
//                       arg has read; ordered after those reads. (The warp-group rendezvous of
//                       commit and wait is not part of these programs: the runtime side calls
//                       the group bookkeeping directly. Without it another thread's wait could
//                       run before thread 0's commit, which PTX's .sync.aligned rules out and
//                       which the search does not explore: the rendezvous orders them.
//                       tests/test_operation_model.cpp holds waits by the whole warp group.)
// Clusters, scopes and warp collectives (PTX ISA: mapa, mbarrier .shared::cluster, barrier.cluster,
// cp.async.bulk .multicast::cluster, fence.mbarrier_init, bar.warp.sync, elect.sync, shfl.sync):
// the launch groups the CTAs into clusters of cluster_x by cluster_y (1x1, 2x1 or 2x2; CTA c is
// rank c % size of cluster c / size); `rank` below is a rank in the thread's own cluster, and a
// rank outside it is misuse cluster. Misuse unfenced-init: a thread's use of a barrier of another
// CTA (remote_*, or a multicast's destination) before that barrier's init is visible to it: the
// init is visible to the initialising thread at once and travels along every happens-before
// edge (whatever the scope: the model does not tell .cta from .cluster, docs/model.md "Scopes"),
// and a fence_init by the initialising thread also lets a relaxed cluster arrive carry it (that
// fact and nothing else). Bug lifetime: a CTA's shared memory ends when its last thread exits;
// a use of it by an agent of another CTA (remote_*, a multicast landing, dsmem_*) must happen
// before the exit of some thread of the CTA, except that a counter op (remote arrive or
// complete_tx, a multicast landing) on a barrier phase some thread of the CTA saw complete (a
// poll answering true) has been performed; a use after the last exit is a lifetime bug too.
//   remote_arrive       mbarrier.arrive.release.cluster.shared::cluster on barrier `bar` of CTA
//                       rank arg (mapa): an arrive-on(1) that releases; no token
//   remote_complete_tx  mbarrier.complete_tx.relaxed.cluster(16 bytes) on `bar` of rank arg
//   remote_arrive_expect_tx  mbarrier.arrive.expect_tx.release.cluster(16 * copy_pieces bytes) on
//                       `bar` of rank arg
//   multicast           cp.async.bulk ... .multicast::cluster of 16 * copy_pieces bytes from the
//                       issuing CTA's source of slot S[arg >> 4] into that slot of every CTA of
//                       the mask arg & 15 (ranks; none, or one outside the cluster: misuse
//                       cluster): one copy agent per destination, landing in copy_pieces pieces
//                       as `copy` does, each a complete_tx(16) on barrier `bar` of that CTA
//   cluster_arrive      barrier.cluster.arrive (.release); cluster_arrive_relaxed: .relaxed
//                       (orders no data). A phase of the cluster barrier completes once every
//                       thread of the cluster that has not exited has arrived in it. A second
//                       arrive with no cluster_wait between is misuse cluster.
//   cluster_wait        barrier.cluster.wait (.acquire): blocks until the phase of the thread's
//                       last arrive completes; acquires that phase's releases; with no arrive
//                       before it (since its last wait): misuse cluster
//   fence_init          fence.mbarrier_init.release.cluster: the thread's earlier inits (thread 0
//                       of a CTA: all of its barriers; in other threads nothing) become
//                       visible to the cluster through what follows it, relaxed cluster arrives
//                       included
//   dsmem_store, dsmem_load  ordinary store of g+1 to / load (recorded) of word D[arg] of the CTA
//                       of rank `bar` (mapa + st/ld.shared::cluster); a race as `store`/`load`
//   syncwarp            __syncwarp(full mask) (bar.warp.sync): a rendezvous of the warp's lanes
//                       (no lane leaves before every lane reached its collective; an exited lane
//                       never does), releasing and acquiring among them like sync_threads
//   elect_sync          elect.sync(full mask): the same rendezvous; records 1 in the warp's lowest
//                       lane, 0 in the others
//   shfl_idx            shfl.sync.idx.b32(full mask, value g+1, source lane arg): the same
//                       rendezvous; records lane arg's value
//   arrive_relaxed      mbarrier.arrive.relaxed.cta (count 1): the arrive-on of `arrive`, releasing
//                       nothing (no data and no phase knowledge)
//   inval               mbarrier.inval on `bar`: any later use of it but reinit is misuse
//                       invalidated (a wait blocked on it runs, to report it)
//   reinit              mbarrier.init(bar, arg) of an invalidated barrier (of a live one: misuse
//                       reinit-live): a new incarnation from phase 0, carrying nothing of the
//                       earlier one's releases or phase knowledge (a parity wait reads only
//                       what the thread knows of the current incarnation). Programs with reinit
//                       have no tokens, status slots or cp.async arrives (whose meaning across
//                       an incarnation the reference does not define), nor a parity wait on a
//                       barrier another thread re-initialises (the runtime keeps the phase it
//                       resolved the bit to at the call); the generator keeps them so.
//   wait_cluster        mbarrier.try_wait.parity.acquire.cluster in a loop for phase arg: `wait`
//                       at .cluster scope. PTX ISA 9.1, 8.7: a release and an acquire synchronize
//                       only if each one's scope includes the other's thread; `wait` is
//                       .acquire.cta (its default), so only this one acquires what a peer CTA's
//                       remote arrive (.release.cluster) released
// Warps: warp_size is 1 (each thread a warp: named-barrier counts are thread counts) or 2 (for
// the collectives; such programs use no named barriers, whose per-warp arrival is not modelled
// here). Lanes of one warp run the same collectives in the same order (the generator keeps it
// so; PTX requires every lane of the mask to execute the same .sync instruction).
// Copy sources: word j of slot s in CTA c lands the value 1000 + 100c + 10s + j (a multicast
// lands its issuing CTA's values in every destination).
//
// Memory model (PTX): arrive, arrive_drop, arrive.noComplete and arrive.expect_tx release;
// a wait or poll that answers true for phase q acquires every release on phase q of that
// barrier and the writes of every copy piece that landed (complete_tx) on phase q;
// expect_tx and complete_tx are relaxed (release nothing); a copy's writes are ordered
// after its issue; sync_threads orders everything before it in every participant before
// everything after it; a named-barrier arrival releases, and bar_sync's wait acquires every
// release of its generation. Atomics are relaxed (they order nothing and never race). Two
// accesses to one word of D or S, at least one a write (a copy piece writes its words),
// not ordered by happens-before, are a data race (a bug).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mbcheck::diff {

enum class Stmt : std::uint8_t {
  arrive,
  arrive_drop,
  arrive_no_complete,
  arrive_expect_tx,
  expect_tx,
  complete_tx,
  arrive_token,
  wait,
  test_wait,
  try_wait,
  token_test_wait,
  token_wait,
  spin_try_wait,
  spin_backoff,
  try_then_wait,
  status_try,
  status_wait,
  copy,
  load_slot,
  store,
  load,
  atomic_store,
  atomic_load,
  atomic_add,
  sync_threads,
  bar_arrive,
  bar_sync,
  parity_wait,
  parity_try_wait,
  cpa_copy,
  cpa_commit,
  cpa_wait,
  cpa_arrive,
  wg_mma,
  wg_commit,
  wg_wait,
  remote_arrive,
  remote_complete_tx,
  remote_arrive_expect_tx,
  multicast,
  cluster_arrive,
  cluster_arrive_relaxed,
  cluster_wait,
  fence_init,
  dsmem_store,
  dsmem_load,
  syncwarp,
  elect_sync,
  shfl_idx,
  arrive_relaxed,
  spin_flag,
  spin_backoff_grow,
  inval,
  reinit,
  spin_atomic,
  spin_atomic_pair,
  wait_cluster,
  try_guard_wait,
  spin_two_sites,
  spin_counter_mem,
  fence_proxy,
  count_  // number of statements
};
const char* to_string(Stmt s);

struct Instr {
  Stmt op = Stmt::arrive;
  std::uint8_t bar = 0;
  std::int32_t arg = 0;
};

struct DiffProgram {
  std::uint32_t ctas = 1;
  std::uint32_t threads = 2;          // per CTA
  std::uint32_t barriers = 1;         // per CTA
  std::vector<std::uint32_t> counts;  // init count of each barrier
  std::uint32_t copy_pieces = 1;
  std::uint32_t cluster_x = 1, cluster_y = 1;  // cluster dims: 1x1, 2x1 or 2x2, dividing ctas
  std::uint32_t warp_size = 1;                 // 1 or 2 (dividing threads)
  std::vector<std::vector<Instr>> scripts;     // by global thread index
  std::uint32_t total_threads() const { return ctas * threads; }
  std::uint32_t cluster_size() const { return cluster_x * cluster_y; }
};

inline constexpr int kDataWords = 2, kSlots = 2, kSlotWords = 4, kAtomicWords = 2, kNamedIds = 2;
inline std::int64_t copy_source_value(std::uint32_t cta, int slot, int word) {
  return 1000 + 100 * static_cast<std::int64_t>(cta) + 10 * slot + word;
}

// What a completed execution leaves: every thread's recorded values, in order, and the
// final memory.
struct Observed {
  std::vector<std::vector<std::int64_t>> registers;  // by global thread
  std::vector<std::int64_t> data;                    // cta * kDataWords + w
  std::vector<std::int64_t> slots;                   // (cta * kSlots + s) * kSlotWords + j
  std::vector<std::int64_t> atomics;                 // kAtomicWords
};
std::string format_observed(const Observed& o);

// A readable listing of the program (for failure messages and the soak's reports).
std::string describe(const DiffProgram& p);

}  // namespace mbcheck::diff
