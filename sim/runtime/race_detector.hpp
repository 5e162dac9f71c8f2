// Data-race detection over the memory model's happens-before (vector clocks), for every
// execution whatever the strategy.
//
// Happens-before edges: program order; a release-arrive (arrive, arrive.expect_tx,
// arrive_drop; PTX's default .release) on phase p -> every wait that saw p complete; a copy
// landing on phase p -> those waits, for the bytes it wrote only (complete_tx is .relaxed,
// so a thread's complete_tx releases nothing);
// a bulk copy's issue -> its landing (the async proxy's write of the stage); sync_threads.
// Accesses are the Platform's load/store (4-byte words) and the bytes a copy lands. Two
// accesses to one word, at least one a write, from agents not ordered by happens-before
// are a race. The async proxy (bulk copies and stores) also needs, for reading a word that
// a thread wrote with an ordinary store, that thread's fence.proxy.async after the write.
#pragma once

#include <atomic>
#include <algorithm>
#include <climits>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/runtime/ops.hpp"
#include "sim/runtime/race_clocks.hpp"

namespace mbcheck::sim {

// Where a generic write went, relative to its writer: which fence.proxy.async covers it (PTX ISA
// 9.1, 9.7.13.4: "The memory ordering is limited only to operations performed on objects in
// the state space specified"): its own CTA's shared memory (.shared::cta, and .shared::cluster,
// whose window holds it), a peer CTA's (.shared::cluster), or global memory (.global). The
// fence with no state space covers all three.
enum class MemorySpace : std::uint8_t { own_shared, peer_shared, global };
inline constexpr std::size_t kMemorySpaces = 3;
using FenceSpaces = std::uint8_t;  // bit (1 << MemorySpace): the spaces a fence covers
inline constexpr FenceSpaces fence_covers(MemorySpace s) {
  return static_cast<FenceSpaces>(1u << static_cast<unsigned>(s));
}
inline constexpr FenceSpaces kFenceSharedCta = fence_covers(MemorySpace::own_shared);
inline constexpr FenceSpaces kFenceSharedCluster = kFenceSharedCta | fence_covers(MemorySpace::peer_shared);
inline constexpr FenceSpaces kFenceGlobal = fence_covers(MemorySpace::global);
inline constexpr FenceSpaces kFenceAll = kFenceSharedCluster | kFenceGlobal;

struct DataRace {
  AgentId first = ~0u, second = ~0u;
  bool first_writes = false, second_writes = false;
  std::uint32_t first_step = 0, second_step = 0;
  std::uint32_t first_site = 0, second_site = 0;  // the accesses' source lines (Runtime::site_id; 0: unknown)
  const void* address = nullptr;
  bool missing_fence = false;                           // ordered, but the writer never ran fence.proxy.async after it
  MemorySpace written_space = MemorySpace::own_shared;  // missing_fence: where the write went
};

namespace race_shadow {
// One access: who, at which of its epochs, at which step and source line.
struct Epoch {
  AgentId agent = ~0u;  // ~0u: none
  std::uint32_t clock = 0;
  std::uint32_t step = 0;
  std::uint32_t site = 0;                       // its source line (0: unknown)
  bool async = false;                           // made by the async proxy
  MemorySpace space = MemorySpace::own_shared;  // a generic write: where it went (fence_covers)
  bool atomic = false;                          // an atomic: two of them on a word never race
};
// Shadow state of one 4-byte word. Valid only when `generation` is the current one, so
// a new execution starts clean without clearing memory.
struct Word {
  std::uint32_t generation = 0;
  Epoch write;
  Epoch read;                    // the last read (FastTrack's read epoch)
  std::uint32_t more_reads = 0;  // 1-based index into shared_reads_ when reads are concurrent
};
constexpr std::size_t kPageWords = 1024;
struct Page {
  Word words[kPageWords];
};
// Shadow pages outlive their detector (race_detector.cpp): generations come from one counter
// of the process, and freed pages go to a pool of the OS thread.
std::uint32_t next_generation();   // never 0
std::uint32_t generation_wraps();  // how often the counter wrapped (then pages are cleared)
void clear_generations(Page& p);
std::unique_ptr<Page> take_page();
void pool_page(std::unique_ptr<Page> page);
}  // namespace race_shadow

// Per knowledge slot (a barrier's, RaceDetectorCore::knowledge_slot) one 32-bit key, the first
// 8 slots inline; unset slots read 0 (nothing known).
using KnowledgeKeys = InlineMaxEntries<8>;

// The detector over one clock representation (sim/runtime/race_clocks.hpp); RaceDetector
// below picks one per execution.
template <class Clock>
class RaceDetectorCore {
 public:
  using Race = DataRace;

  RaceDetectorCore() = default;
  ~RaceDetectorCore();  // its shadow pages go to the thread's pool (race_detector.cpp)
  RaceDetectorCore(const RaceDetectorCore&) = delete;
  RaceDetectorCore& operator=(const RaceDetectorCore&) = delete;

  void reset(std::size_t agents);
  void add_agent(AgentId id, AgentId parent);  // a copy agent starts from its issuer's clock
  // A bulk copy or store that is done never acts again: its clock and knowledge (each as
  // long as the agents so far, one per copy) are freed. Not for cp.async copies: a later
  // cp.async.mbarrier.arrive releases their writes with their clocks.
  void retire(AgentId a) {  // inline: a fuzzing run's copies have no buffers to give back
    if (has_buffers(a)) spare(a);
  }
  void tick(AgentId a, std::uint64_t step) {  // a's next step begins (every step: inline)
    ++clocks_[a].at(a);
    step_[a] = static_cast<std::uint32_t>(step);
  }
  // Scopes (PTX ISA 9.1, 8.7: a release and an acquire synchronize only if "each operation is
  // strong and specifies a scope that includes the thread executing the other operation"): a
  // `remote` release is one by a thread of another CTA than the barrier's (a .release.cluster
  // arrive of a peer); only an acquire at .cluster scope (`cluster`) joins it. Releases by the
  // barrier's own CTA, and the complete_tx of a copy landing in it, reach every acquire.
  void release(AgentId a, std::uint32_t barrier, std::int64_t phase, bool remote = false);
  // Releases only what `a` itself did (a copy landing: its own writes, not its issuer's past).
  void release_own(AgentId a, std::uint32_t barrier, std::int64_t phase);
  void acquire(AgentId a, std::uint32_t barrier, std::int64_t phase, bool cluster = false);
  // Barrier 0 of a CTA (sync_threads, bar.sync / bar.arrive 0 over all its threads): an
  // arrive-only thread's past goes into the generation (`key`: the CTA); at the release every
  // waiter joins the waiters' and those arrivals' clocks.
  void block_arrive(AgentId a, std::uint32_t key);
  void join_all(const std::vector<AgentId>& agents, std::uint32_t key);
  void fence_async(AgentId a, FenceSpaces spaces);  // fence.proxy.async{.space} by a
  // `--proxy-fences strict` (docs/semantics.md, "A generic read followed by an async write"):
  // an async-proxy write of a word that a thread read with the generic proxy is a race unless
  // a covering fence.proxy.async came between: the reader's after the read and before the
  // release that orders it, the issuing thread's after it came to know of the read, or another
  // thread's of the reader's CTA that knew of the read and that the write knows of. Threads are
  // agents [0, threads), CTA-major (threads_per_cta each).
  void set_strict_proxy(bool on, std::uint32_t threads = 0, std::uint32_t threads_per_cta = 1) {
    strict_proxy_ = on;
    threads_ = threads;
    threads_per_cta_ = threads_per_cta == 0 ? 1 : threads_per_cta;
  }
  // Async-groups, per owner and family (sim/runtime/async_groups.hpp): `member` of group
  // `group` of `owner` is done (~0u: not committed yet).
  void group_member_done(AgentId member, AgentId owner, GroupKind kind, std::uint32_t group);
  // wait_group by `waiter`: ordered after every member of `owner`'s groups [0, groups).
  void acquire_groups(AgentId waiter, AgentId owner, GroupKind kind, std::uint32_t groups);
  // commit_group: the members of `owner` done before their commit belong to `group`.
  void commit_group(AgentId owner, GroupKind kind, std::uint32_t group);
  // What `a` knows of a barrier through happens-before: the newest phase of its current
  // incarnation whose completion happens before a's present (a wait or poll that saw it
  // complete, by a itself or by anyone whose past flows to a through releases and syncs);
  // -1 (the phase before init) when nothing more. Parity-only waits are read against it.
  // Not for a hidden counter (it throws std::logic_error: a checker bug).
  std::int64_t known_phase(AgentId a, std::uint32_t barrier) const;
  // A new incarnation: earlier knowledge is void. `hidden`: a counter behind a named barrier, a
  // collective or the cluster barrier, whose phase no thread reads by parity and no peer CTA
  // uses: no knowledge of it is kept (its entries would lengthen every join: a cluster-gemm
  // has hundreds of them), though what its releases carry of other barriers still travels.
  void barrier_init(std::uint32_t barrier, AgentId by, bool hidden = false);
  // Cluster visibility of mbarrier.init (docs/semantics.md "unfenced-init"): the initialising
  // thread knows its init from the init on (barrier_init), and the fact travels along every
  // release/acquire edge, as phase knowledge does. fence.mbarrier_init.release.cluster marks
  // `a`'s inits so far as fenced: its later barrier.cluster.arrive.relaxed carries them
  // (release_knowledge), and nothing else does (a relaxed arrive orders nothing).
  void fence_inits(AgentId a);
  // Is the barrier's current init visible to `a` (so that it may use it from a peer CTA)?
  bool init_visible(AgentId a, std::uint32_t barrier) const;
  // A relaxed cluster arrival: it carries `a`'s fenced inits and nothing else: no data and
  // no phase knowledge.
  // Init facts are kept only where a peer CTA can use a barrier (cluster shapes): elsewhere
  // they would be joined at every edge and never read.
  void track_init_visibility(bool on) { track_inits_ = on; }
  // Phase knowledge (known_phase) is kept only where something reads it: parity-bit waits,
  // try_wait statuses, cluster shapes (the runtime turns it on; then at the next reset).
  // Without it a release or an acquire joins clocks alone.
  void track_knowledge(bool on) { track_knowledge_ = on; }
  void release_knowledge(AgentId a, std::uint32_t barrier, std::int64_t phase);
  // A convergence that orders no memory (elect.sync, shfl.sync, wgmma's, a bar instruction's
  // warp round) still lines its lanes up: the phases one lane knows complete are facts of the
  // execution's order that the others may read their phase bits against (no clock, no init
  // fact: those are memory order). `arriving`: into the round's slot; else out of it.
  void converge_knowledge(AgentId a, std::uint32_t barrier, std::int64_t phase, bool arriving);
  std::uint32_t now(AgentId a) const { return clocks_[a][a]; }  // a's current epoch
  // Entry `of` of a's clock: the newest epoch of `of` ordered before a's present.
  std::uint32_t entry(AgentId a, AgentId of) const { return a < clocks_.size() ? clocks_[a][of] : 0; }
  // A thread of `cta` exits (cluster shapes): its past joins the CTA's exit clock, against which
  // the runtime checks that peers' uses of the CTA's shared memory come before its end.
  void thread_exit(AgentId a, std::uint32_t cta);
  bool before_exit(std::uint32_t cta, AgentId agent, std::uint32_t clock) const {
    return cta < exit_clocks_.size() && exit_clocks_[cta][agent] >= clock;
  }
  // Records an access (`async`: by the async proxy, i.e. a bulk copy or store); returns the
  // first race it completes.
  // `site` names the access's source line (an id the runtime keeps; 0: unknown).
  std::optional<Race> access(AgentId a, const void* addr, std::size_t bytes, bool write, bool async = false,
                             std::uint32_t site = 0, MemorySpace space = MemorySpace::own_shared, bool atomic = false);

 private:
  using VClock = Clock;
  using Epoch = race_shadow::Epoch;
  using Word = race_shadow::Word;
  using Page = race_shadow::Page;
  static constexpr std::size_t kPageWords = race_shadow::kPageWords;
  // Knowledge, joined along every happens-before edge as the clocks are; index: the barrier's
  // knowledge slot (knowledge_slot).
  // Per barrier the newest phase known complete, as a 32-bit key in one order per barrier, so
  // that a join is a max: the phases of its current incarnation are keys first_key_ + 1 +
  // phase, and each init starts past every key its earlier incarnations handed out, so a
  // newer incarnation wins and a key at or below first_key_ is void; 0: nothing known.
  // And, in cluster shapes only (track_init_visibility), the init facts.
  std::uint32_t phase_key(std::uint32_t barrier, std::int64_t phase) {  // hands the key out (inline: every acquire)
    if (barrier < first_key_.size() && phase >= -1) {
      const std::uint64_t key = std::uint64_t{first_key_[barrier]} + 1 + static_cast<std::uint64_t>(phase);
      if (key < UINT32_MAX - 1) {
        std::uint32_t& last = last_key_[barrier];
        last = std::max(last, static_cast<std::uint32_t>(key));
        return static_cast<std::uint32_t>(key);
      }
    }
    return phase_key_slow(barrier, phase);
  }
  std::uint32_t phase_key_slow(std::uint32_t barrier, std::int64_t phase);  // grows the tables; or throws
  std::vector<std::uint32_t> first_key_;  // per barrier: its current incarnation's key of phase -1
  std::vector<std::uint32_t> last_key_;   // per barrier: the largest key handed out
  struct InitFacts {
    std::uint32_t visible = 0;  // the incarnation whose init is visible to the agent (joined)
    std::uint32_t fenced = 0;   // ... and fenced by it (the agent's own; never joined)
  };
  struct Knowledge {
    KnowledgeKeys phase;
    std::vector<InitFacts> init;
    void clear() {
      phase.clear();
      init.clear();
    }
    bool has_storage() const { return phase.has_storage() || init.capacity() != 0; }
  };
  // Inline: every release and acquire joins knowledge; the init facts (cluster shapes) apart.
  static void join_knowledge(Knowledge& into, const Knowledge& from) {
    if (&into == &from) return;
    into.phase.join(from.phase);
    if (!from.init.empty()) join_inits(into, from);
  }
  static void join_inits(Knowledge& into, const Knowledge& from);
  bool ordered(const Epoch& e, AgentId a) const { return e.agent == ~0u || clocks_[a][e.agent] >= e.clock; }
  // Inline: nearly every access finds its page among the last ones used. Several are cached
  // (by the index's low bits), since a step's accesses alternate between global and shared
  // memory: with one, most accesses went to the map.
  Page& page(std::uintptr_t page_index) {
    const std::size_t k = page_index % kCachedPages;
    return cached_index_[k] == page_index ? *cached_page_[k] : page_miss(page_index);
  }
  Page& page_miss(std::uintptr_t page_index);
  [[gnu::noinline]] static void note_race(std::optional<Race>& found, const Epoch& e, bool e_writes, const Epoch& now,
                                          bool write, std::uintptr_t w);
  VClock& released_clock(std::uint32_t barrier, std::int64_t phase);

  std::vector<VClock> clocks_;
  std::vector<std::uint32_t> step_;  // current step of each agent
  // Emptied buffers of retired agents, taken by the next agents (no allocation per copy).
  std::vector<VClock> spare_clocks_;
  std::vector<Knowledge> spare_knowledge_;
  void spare(AgentId a);               // its buffers, emptied, to the spares
  bool has_buffers(AgentId a) const {  // anything for spare() to keep
    return clocks_[a].has_storage() || (a < known_.size() && known_[a].has_storage());
  }
  // Per barrier: the join of the releases of its newest phases, phase p in slot p mod kSlots
  // (one compare finds it). A wait on an mbarrier that succeeds sees the current or the
  // preceding phase (anything else is reported as aliasing); a named barrier's waiter may come
  // late, after later generations: it finds its own here until generation p + kSlots releases
  // (a waiter lapped further would lose happens-before, which can only add a race report,
  // never hide one).
  static constexpr int kSlots = 8;
  struct Released {
    std::int64_t phase[kSlots] = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN,
                                  INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
    VClock clock[kSlots];
    VClock remote[kSlots];  // releases by other CTAs' threads: for .cluster-scope acquires only
    Knowledge known[kSlots];
    static int slot(std::int64_t p) { return static_cast<int>(p & (kSlots - 1)); }
  };
  Knowledge& released_knowledge(std::uint32_t barrier, std::int64_t phase);
  Knowledge& knowledge(AgentId a);  // a's, made on first use
  // Knowledge is indexed by slot, not barrier id: a slot per barrier that is not a hidden
  // counter, given at its first use in the execution, so that knowledge is as long as the
  // mbarriers, not as all the counters (a cluster-gemm has hundreds of hidden ones).
  static constexpr std::uint32_t kNoSlot = ~0u;
  std::uint32_t knowledge_slot(std::uint32_t barrier);  // given here if it has none yet
  std::uint32_t slot_if_any(std::uint32_t barrier) const {
    return barrier < slot_of_.size() ? slot_of_[barrier] : kNoSlot;
  }
  bool is_hidden(std::uint32_t barrier) const { return barrier < hidden_.size() && hidden_[barrier]; }
  std::vector<std::uint32_t> slot_of_;  // per barrier id
  std::uint32_t slots_ = 0;
  std::uint32_t incarnation(std::uint32_t barrier) const;  // inits of it so far
  std::vector<Knowledge> known_;                           // per agent
  VClock sync_clock_;                                      // join_all's buffers
  Knowledge sync_known_;
  bool track_inits_ = true;
  bool track_knowledge_ = true;
  std::vector<std::uint32_t> incarnation_;  // per barrier: inits so far
  std::vector<AgentId> init_by_;            // per barrier: who made its current init
  std::vector<std::uint8_t> hidden_;        // per barrier: a hidden counter (barrier_init)
  std::vector<Released> released_;          // index: barrier id
  std::unordered_map<std::uintptr_t, std::unique_ptr<Page>> pages_;
  static constexpr std::size_t kCachedPages = 4;
  std::uintptr_t cached_index_[kCachedPages] = {~std::uintptr_t{0}, ~std::uintptr_t{0}, ~std::uintptr_t{0},
                                                ~std::uintptr_t{0}};
  Page* cached_page_[kCachedPages] = {};  // pages_'s, which keeps every page till the end
  std::uint32_t generation_ = 0;          // from one process-wide counter (race_detector.cpp)
  std::uint32_t wraps_seen_ = 0;          // that counter's wraps when this detector's pages were last valid
  std::vector<std::vector<Epoch>> shared_reads_;
  std::vector<std::pair<VClock, Knowledge>> block_arrivals_;  // per CTA: this generation's bar.arrive 0
  // per agent and MemorySpace: its generic writes there up to this epoch are fenced
  std::vector<std::array<std::uint32_t, kMemorySpaces>> fenced_;
  // Strict proxy fences: per agent and MemorySpace, the epochs of its fence.proxy.async covering
  // it, in order (a read is covered by the first fence at or after it, if the writer knows the
  // reader past that fence); and per agent, its clock at its latest fence and that fence's
  // spaces (a copy agent starts with its issuer's: the fence came before the issue).
  bool strict_proxy_ = false;
  std::uint32_t threads_ = 0, threads_per_cta_ = 1;
  std::vector<AgentId> fencers_;  // the threads that ran a fence.proxy.async this execution
  std::vector<std::array<std::vector<std::uint32_t>, kMemorySpaces>> fence_epochs_;
  std::vector<VClock> fence_knows_;
  std::vector<FenceSpaces> fence_knows_spaces_;
  bool read_fenced(const Epoch& r, AgentId writer) const;
  void keep_read(Word& s);
  // per kind, issuing thread and async-group: the join of its done members' clocks
  std::vector<std::vector<VClock>> groups_done_[kGroupKinds];
  std::vector<VClock> done_uncommitted_[kGroupKinds];  // per family and owner: done before their commit
  // Per family, the owners whose entries above this execution wrote (each once): reset clears
  // only theirs (a fuzzing run has one such owner among its 14 agents, if any).
  std::vector<AgentId> group_owners_[kGroupKinds];
  std::vector<std::uint8_t> is_group_owner_[kGroupKinds];  // per agent: in group_owners_
  void note_group_owner(std::size_t k, AgentId owner) {
    if (is_group_owner_[k].size() <= owner) is_group_owner_[k].resize(owner + 1, 0);
    if (!is_group_owner_[k][owner]) {
      is_group_owner_[k][owner] = 1;
      group_owners_[k].push_back(owner);
    }
  }
  std::vector<VClock> exit_clocks_;  // per CTA: the join of its exited threads' clocks
};

}  // namespace mbcheck::sim

namespace mbcheck::sim {

// The race detector of a runtime. Each execution picks its clocks at reset, by its thread
// count: dense below kChunkedFromThreads (a fuzzing run's 14 agents join in a few vector
// instructions), chunks shared copy-on-write from there (cluster shapes of thousands of
// threads, whose dense clocks made each acquire and release a pass over every agent).
class RaceDetector {
  // Runs f on the detector this execution uses (defined first: its return type is deduced).
  template <class F>
  decltype(auto) with(F&& f) {
    if (chunked_) return f(shared_);
    return f(dense_);
  }
  template <class F>
  decltype(auto) with(F&& f) const {
    if (chunked_) return f(shared_);
    return f(dense_);
  }

 public:
  using Race = DataRace;
  static constexpr std::size_t kChunkedFromThreads = 512;

  void reset(std::size_t agents) {
    chunked_ = agents >= chunked_from_threads().load(std::memory_order_relaxed);
    with([&](auto& d) { d.reset(agents); });
  }
  // The thread count from which executions use chunks, for the whole process: tests and the
  // differential soak set it (0: always, SIZE_MAX: never) to run one program both ways.
  static std::atomic<std::size_t>& chunked_from_threads() {
    static std::atomic<std::size_t> threads{kChunkedFromThreads};
    return threads;
  }
  bool chunked() const { return chunked_; }  // this execution's

  void add_agent(AgentId id, AgentId parent) {
    with([&](auto& d) { d.add_agent(id, parent); });
  }
  void retire(AgentId a) {
    with([&](auto& d) { d.retire(a); });
  }
  void tick(AgentId a, std::uint64_t step) {
    with([&](auto& d) { d.tick(a, step); });
  }
  void release(AgentId a, std::uint32_t barrier, std::int64_t phase, bool remote = false) {
    with([&](auto& d) { d.release(a, barrier, phase, remote); });
  }
  void release_own(AgentId a, std::uint32_t barrier, std::int64_t phase) {
    with([&](auto& d) { d.release_own(a, barrier, phase); });
  }
  void acquire(AgentId a, std::uint32_t barrier, std::int64_t phase, bool cluster = false) {
    with([&](auto& d) { d.acquire(a, barrier, phase, cluster); });
  }
  void block_arrive(AgentId a, std::uint32_t key) {
    with([&](auto& d) { d.block_arrive(a, key); });
  }
  void join_all(const std::vector<AgentId>& agents, std::uint32_t key) {
    with([&](auto& d) { d.join_all(agents, key); });
  }
  void fence_async(AgentId a, FenceSpaces spaces) {
    with([&](auto& d) { d.fence_async(a, spaces); });
  }
  void set_strict_proxy(bool on, std::uint32_t threads, std::uint32_t threads_per_cta) {
    dense_.set_strict_proxy(on, threads, threads_per_cta);
    shared_.set_strict_proxy(on, threads, threads_per_cta);
  }
  void group_member_done(AgentId member, AgentId owner, GroupKind kind, std::uint32_t group) {
    with([&](auto& d) { d.group_member_done(member, owner, kind, group); });
  }
  void acquire_groups(AgentId waiter, AgentId owner, GroupKind kind, std::uint32_t groups) {
    with([&](auto& d) { d.acquire_groups(waiter, owner, kind, groups); });
  }
  void commit_group(AgentId owner, GroupKind kind, std::uint32_t group) {
    with([&](auto& d) { d.commit_group(owner, kind, group); });
  }
  std::int64_t known_phase(AgentId a, std::uint32_t barrier) const {
    return with([&](const auto& d) { return d.known_phase(a, barrier); });
  }
  void barrier_init(std::uint32_t barrier, AgentId by, bool hidden = false) {
    with([&](auto& d) { d.barrier_init(barrier, by, hidden); });
  }
  void fence_inits(AgentId a) {
    with([&](auto& d) { d.fence_inits(a); });
  }
  bool init_visible(AgentId a, std::uint32_t barrier) const {
    return with([&](const auto& d) { return d.init_visible(a, barrier); });
  }
  void track_init_visibility(bool on) {
    dense_.track_init_visibility(on);
    shared_.track_init_visibility(on);
  }
  void track_knowledge(bool on) {
    dense_.track_knowledge(on);
    shared_.track_knowledge(on);
  }
  void release_knowledge(AgentId a, std::uint32_t barrier, std::int64_t phase) {
    with([&](auto& d) { d.release_knowledge(a, barrier, phase); });
  }
  void converge_knowledge(AgentId a, std::uint32_t barrier, std::int64_t phase, bool arriving) {
    with([&](auto& d) { d.converge_knowledge(a, barrier, phase, arriving); });
  }
  std::uint32_t now(AgentId a) const {
    return with([&](const auto& d) { return d.now(a); });
  }
  std::uint32_t entry(AgentId a, AgentId of) const {
    return with([&](const auto& d) { return d.entry(a, of); });
  }
  void thread_exit(AgentId a, std::uint32_t cta) {
    with([&](auto& d) { d.thread_exit(a, cta); });
  }
  bool before_exit(std::uint32_t cta, AgentId agent, std::uint32_t clock) const {
    return with([&](const auto& d) { return d.before_exit(cta, agent, clock); });
  }
  std::optional<Race> access(AgentId a, const void* addr, std::size_t bytes, bool write, bool async = false,
                             std::uint32_t site = 0, MemorySpace space = MemorySpace::own_shared, bool atomic = false) {
    return with([&](auto& d) { return d.access(a, addr, bytes, write, async, site, space, atomic); });
  }

 private:
  bool chunked_ = false;

  RaceDetectorCore<DenseClock> dense_;
  RaceDetectorCore<SharedClock> shared_;
};

}  // namespace mbcheck::sim
