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
//   try_then_wait       t = try_wait(bar, arg); if (!t) wait(bar, arg);          records t
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
//                       the newest phase of `bar` whose completion happens before the thread:
//                       its own successful waits and polls, and what releases (arrivals, a
//                       named-barrier arrival) and sync_threads carry from others (a copy's
//                       landing carries none)
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
// Copy sources: word j of slot s in CTA c lands the value 1000 + 100c + 10s + j.
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
  std::vector<std::vector<Instr>> scripts;  // by global thread index
  std::uint32_t total_threads() const { return ctas * threads; }
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
