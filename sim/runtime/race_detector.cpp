#include "sim/runtime/race_detector.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>

namespace mbcheck::sim {

namespace {
// The clocks' element-wise max, built twice where the compiler can (GCC's target_clones): for
// the x86-64 baseline, whose SSE2 has no unsigned max, and for AVX2, chosen at load time on
// machines that have it.
// (Not under ASan: an ifunc resolver runs before its runtime is up.)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__SANITIZE_ADDRESS__)
#define MBCHECK_VECTOR_CLONES __attribute__((target_clones("default", "avx2")))
#else
#define MBCHECK_VECTOR_CLONES
#endif

MBCHECK_VECTOR_CLONES void max_into(std::uint32_t* __restrict d, const std::uint32_t* __restrict s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = d[i] < s[i] ? s[i] : d[i];
}

void join(std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& from) {
  const std::size_t n = from.size();
  if (into.size() < n) into.resize(n, 0);
  if (&into == &from) return;
  // Distinct buffers, said so: the loop is then vectorised (a join is most of an acquire).
  max_into(into.data(), from.data(), n);
}
}  // namespace

void RaceDetector::join_knowledge(Knowledge& into, const Knowledge& from) {
  if (&into == &from) return;
  const std::size_t n = from.phase.size();
  if (into.phase.size() < n) into.phase.resize(n, 0);
  std::uint64_t* __restrict to = into.phase.data();  // (AVX2 has no unsigned 64-bit max: scalar)
  const std::uint64_t* __restrict source = from.phase.data();
  for (std::size_t b = 0; b < n; ++b) to[b] = std::max(to[b], source[b]);
  if (from.init.empty()) return;
  if (into.init.size() < from.init.size()) into.init.resize(from.init.size());
  for (std::size_t b = 0; b < from.init.size(); ++b)
    into.init[b].visible = std::max(into.init[b].visible, from.init[b].visible);
}

std::uint32_t RaceDetector::knowledge_slot(std::uint32_t barrier) {
  if (slot_of_.size() <= barrier) slot_of_.resize(barrier + 1, kNoSlot);
  if (slot_of_[barrier] == kNoSlot) slot_of_[barrier] = slots_++;
  return slot_of_[barrier];
}

RaceDetector::Knowledge& RaceDetector::knowledge(AgentId a) {
  if (known_.size() <= a) known_.resize(a + 1);
  return known_[a];
}

std::uint32_t RaceDetector::incarnation(std::uint32_t barrier) const {
  return barrier < incarnation_.size() ? incarnation_[barrier] : 0;
}

std::int64_t RaceDetector::known_phase(AgentId a, std::uint32_t barrier) const {
  if (is_hidden(barrier))
    throw std::logic_error("mbcheck: known_phase of a hidden counter, of which no knowledge is kept");
  const std::uint32_t slot = slot_if_any(barrier);
  if (a >= known_.size() || slot >= known_[a].phase.size()) return -1;  // (kNoSlot: nothing learnt of it)
  const std::uint64_t k = known_[a].phase[slot];
  return key_incarnation(k) == incarnation(barrier) ? key_phase(k) : -1;
}

void RaceDetector::barrier_init(std::uint32_t barrier, AgentId by, bool hidden) {
  if (incarnation_.size() <= barrier) incarnation_.resize(barrier + 1, 0);
  if (init_by_.size() <= barrier) init_by_.resize(barrier + 1, ~0u);
  if (hidden_.size() <= barrier) hidden_.resize(barrier + 1, 0);
  ++incarnation_[barrier];
  init_by_[barrier] = by;
  hidden_[barrier] = hidden;
  if (!track_inits_ || hidden) return;
  Knowledge& k = knowledge(by);  // the initialiser knows its init from here on
  const std::uint32_t slot = knowledge_slot(barrier);
  if (k.init.size() <= slot) k.init.resize(slot + 1);
  k.init[slot].visible = incarnation_[barrier];
}

void RaceDetector::fence_inits(AgentId a) {
  if (!track_inits_) return;
  Knowledge& mine = knowledge(a);
  for (std::uint32_t b = 0; b < init_by_.size(); ++b) {
    if (init_by_[b] != a || hidden_[b]) continue;
    const std::uint32_t slot = knowledge_slot(b);
    if (mine.init.size() <= slot) mine.init.resize(slot + 1);
    mine.init[slot].fenced = incarnation_[b];
  }
}

bool RaceDetector::init_visible(AgentId a, std::uint32_t barrier) const {
  if (!track_inits_) return true;  // no peer CTA can use it
  const std::uint32_t slot = slot_if_any(barrier);
  return a < known_.size() && slot < known_[a].init.size() && known_[a].init[slot].visible == incarnation(barrier);
}

void RaceDetector::release_knowledge(AgentId a, std::uint32_t barrier, std::int64_t phase) {
  Knowledge& into = released_knowledge(barrier, phase);
  const Knowledge& from = knowledge(a);
  if (into.init.size() < from.init.size()) into.init.resize(from.init.size());
  for (std::size_t b = 0; b < from.init.size(); ++b)
    into.init[b].visible = std::max(into.init[b].visible, from.init[b].fenced);
}

// Shadow pages outlive their detector: a check builds a runtime, and so a detector, per
// search, and zeroing fresh 48 KiB pages was a quarter of a 1-execution check's time. A word
// is valid only while its generation is its detector's current one, and generations come from
// one process-wide counter, so no generation is ever handed out twice (until the counter
// wraps, after 2^32 executions: then every detector clears its pages at its next reset, and
// pooled pages are cleared when taken). Pooled per OS thread, up to 64 pages (3 MiB).
namespace {
std::atomic<std::uint32_t> g_generation{0};
std::atomic<std::uint32_t> g_generation_wraps{0};
constexpr std::size_t kPooledPages = 64;
}  // namespace

struct RaceDetector::PagePool {
  std::vector<std::pair<std::unique_ptr<Page>, std::uint32_t>> pages;  // (page, wraps when pooled)
  static PagePool& of_this_thread() {
    thread_local PagePool pool;
    return pool;
  }
};

namespace {
template <class Page>
void clear_generations(Page& p) {
  for (auto& w : p.words) w.generation = 0;
}
}  // namespace

RaceDetector::~RaceDetector() {
  auto& pooled = PagePool::of_this_thread().pages;
  const std::uint32_t wraps = g_generation_wraps.load(std::memory_order_relaxed);
  for (auto& [index, page] : pages_) {
    if (pooled.size() >= kPooledPages) break;
    pooled.emplace_back(std::move(page), wraps);
  }
}

std::unique_ptr<RaceDetector::Page> RaceDetector::new_page() {
  auto& pooled = PagePool::of_this_thread().pages;
  if (pooled.empty()) return std::unique_ptr<Page>(new Page);  // generations 0 (default member init)
  auto [page, wraps] = std::move(pooled.back());
  pooled.pop_back();
  if (wraps != g_generation_wraps.load(std::memory_order_relaxed)) clear_generations(*page);
  return std::move(page);
}

void RaceDetector::reset(std::size_t agents) {
  // Every buffer is emptied, not freed: a fuzzing campaign runs the same shape again and
  // again, and allocating them anew was a tenth of a step's cost.
  for (std::size_t a = agents; a < clocks_.size(); ++a) spare(a);  // the last execution's copies
  for (auto& k : known_) k.clear();
  known_.resize(agents);
  incarnation_.clear();
  init_by_.clear();
  std::fill(hidden_.begin(), hidden_.end(), 0);  // kept at their length: no resize per execution
  std::fill(slot_of_.begin(), slot_of_.end(), kNoSlot);
  slots_ = 0;
  clocks_.resize(agents);
  step_.assign(agents, 0);
  for (std::size_t a = 0; a < agents; ++a) {
    clocks_[a].assign(agents, 0);
    clocks_[a][a] = 1;
  }
  for (Released& r : released_) {
    for (int s = 0; s < kSlots; ++s) {
      r.phase[s] = INT64_MIN;
      r.clock[s].clear();
      r.known[s].clear();
    }
  }
  shared_reads_.clear();
  fenced_.assign(agents, 0);
  for (VClock& c : exit_clocks_) c.clear();
  for (auto& [clock, known] : block_arrivals_) {
    clock.clear();
    known.clear();
  }
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    for (auto& groups : groups_done_[k]) groups.clear();
    groups_done_[k].resize(agents);
    for (auto& pending : done_uncommitted_[k]) pending.clear();
    done_uncommitted_[k].resize(agents);
  }
  // Every shadow word of the last execution is now stale.
  generation_ = g_generation.fetch_add(1, std::memory_order_relaxed) + 1;
  if (generation_ == 0) {
    g_generation_wraps.fetch_add(1, std::memory_order_relaxed);
    generation_ = g_generation.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  if (const std::uint32_t wraps = g_generation_wraps.load(std::memory_order_relaxed); wraps != wraps_seen_) {
    for (auto& [index, page] : pages_) clear_generations(*page);
    wraps_seen_ = wraps;
  }
}

void RaceDetector::spare(AgentId a) {
  if (clocks_[a].capacity()) {
    clocks_[a].clear();
    spare_clocks_.push_back(std::move(clocks_[a]));
    clocks_[a] = VClock();
  }
  if (a < known_.size() && known_[a].capacity()) {
    known_[a].clear();
    spare_knowledge_.push_back(std::move(known_[a]));
    known_[a] = Knowledge();
  }
}

void RaceDetector::add_agent(AgentId id, AgentId parent) {
  if (clocks_.size() <= id) {
    clocks_.resize(id + 1);
    step_.resize(id + 1, 0);
  }
  if (known_.size() <= id) known_.resize(id + 1);
  // A retired copy's buffers are taken first: a copy a stage costs no allocation.
  if (clocks_[id].capacity() == 0 && !spare_clocks_.empty()) {
    clocks_[id] = std::move(spare_clocks_.back());
    spare_clocks_.pop_back();
  }
  if (known_[id].capacity() == 0 && !spare_knowledge_.empty()) {
    known_[id] = std::move(spare_knowledge_.back());
    spare_knowledge_.pop_back();
  }
  known_[id] = known_[parent];
  clocks_[id] = clocks_[parent];
  if (clocks_[id].size() <= id) clocks_[id].resize(id + 1, 0);
  clocks_[id][id] = 1;
  step_[id] = step_[parent];
  ++clocks_[parent][parent];  // the issuer's later accesses are not ordered before the copy
}

void RaceDetector::thread_exit(AgentId a, std::uint32_t cta) {
  if (exit_clocks_.size() <= cta) exit_clocks_.resize(cta + 1);
  join(exit_clocks_[cta], clocks_[a]);
}

void RaceDetector::retire(AgentId a) {
  // Its buffers go back to the spares (so memory stays in proportion to the live agents).
  spare(a);
}

std::vector<std::uint32_t>& RaceDetector::released_clock(std::uint32_t barrier, std::int64_t phase) {
  if (released_.size() <= barrier) released_.resize(barrier + 1);
  Released& r = released_[barrier];
  int slot = r.slot_of(phase);
  if (slot < 0) {
    slot = 0;  // reuse the oldest phase's slot
    for (int s = 1; s < kSlots; ++s)
      if (r.phase[s] < r.phase[slot]) slot = s;
    r.phase[slot] = phase;
    r.clock[slot].clear();
    r.known[slot].clear();
  }
  return r.clock[slot];
}

RaceDetector::Knowledge& RaceDetector::released_knowledge(std::uint32_t barrier, std::int64_t phase) {
  released_clock(barrier, phase);  // finds (or makes) the phase's slot
  Released& r = released_[barrier];
  return r.known[r.slot_of(phase)];
}

void RaceDetector::release(AgentId a, std::uint32_t barrier, std::int64_t phase) {
  VClock& clock = released_clock(barrier, phase);  // finds (or makes) the phase's slot, once
  Released& r = released_[barrier];
  join_knowledge(r.known[&clock - r.clock], knowledge(a));
  join(clock, clocks_[a]);
  ++clocks_[a][a];  // what a does next is not covered by this release
}

void RaceDetector::release_own(AgentId a, std::uint32_t barrier, std::int64_t phase) {
  auto& into = released_clock(barrier, phase);
  if (into.size() <= a) into.resize(a + 1, 0);
  into[a] = std::max(into[a], clocks_[a][a]);
  ++clocks_[a][a];
}

void RaceDetector::acquire(AgentId a, std::uint32_t barrier, std::int64_t phase) {
  // a saw `phase` complete: it knows so from now on, even where nothing was released on it.
  if (!is_hidden(barrier)) {
    Knowledge& mine = knowledge(a);
    const std::uint32_t slot = knowledge_slot(barrier);
    if (mine.phase.size() <= slot) mine.phase.resize(slot + 1, 0);
    const std::uint32_t now = incarnation(barrier);
    mine.phase[slot] = std::max(mine.phase[slot], phase_key(now, phase));  // mine is of no newer incarnation
  }
  if (released_.size() <= barrier) return;
  const Released& r = released_[barrier];
  if (const int slot = r.slot_of(phase); slot >= 0) {
    join(clocks_[a], r.clock[slot]);
    join_knowledge(known_[a], r.known[slot]);
  }
}

void RaceDetector::block_arrive(AgentId a, std::uint32_t key) {
  if (block_arrivals_.size() <= key) block_arrivals_.resize(key + 1);
  join(block_arrivals_[key].first, clocks_[a]);
  join_knowledge(block_arrivals_[key].second, knowledge(a));
  ++clocks_[a][a];  // what a does next is not covered by this arrival
}

void RaceDetector::join_all(const std::vector<AgentId>& agents, std::uint32_t key) {
  // The generation's bar.arrive arrivals, if any, then every waiter (buffers kept: a sync
  // allocates nothing).
  VClock& all = sync_clock_;
  Knowledge& known = sync_known_;
  all.clear();
  known.clear();
  if (key < block_arrivals_.size()) {
    all.swap(block_arrivals_[key].first);
    std::swap(known, block_arrivals_[key].second);
    block_arrivals_[key].first.clear();
    block_arrivals_[key].second.clear();
  }
  for (AgentId a : agents) {
    join(all, clocks_[a]);
    join_knowledge(known, known_[a]);
  }
  for (AgentId a : agents) {
    join_knowledge(known_[a], known);
    join(clocks_[a], all);
    ++clocks_[a][a];
  }
}

void RaceDetector::fence_async(AgentId a) {
  if (fenced_.size() <= a) fenced_.resize(a + 1, 0);
  fenced_[a] = clocks_[a][a];
  ++clocks_[a][a];  // writes after the fence are not covered by it
}

void RaceDetector::group_member_done(AgentId member, AgentId issuer, GroupKind kind, std::uint32_t group) {
  const std::size_t k = group_index(kind);
  if (group == ~0u) {
    auto& pending = done_uncommitted_[k];
    if (pending.size() <= issuer) pending.resize(issuer + 1);
    join(pending[issuer], clocks_[member]);
    return;
  }
  auto& all = groups_done_[k];
  if (all.size() <= issuer) all.resize(issuer + 1);
  if (all[issuer].size() <= group) all[issuer].resize(group + 1);
  join(all[issuer][group], clocks_[member]);
}

void RaceDetector::commit_group(AgentId issuer, GroupKind kind, std::uint32_t group) {
  const std::size_t k = group_index(kind);
  auto& pending = done_uncommitted_[k];
  if (issuer >= pending.size() || pending[issuer].empty()) return;
  auto& all = groups_done_[k];
  if (all.size() <= issuer) all.resize(issuer + 1);
  if (all[issuer].size() <= group) all[issuer].resize(group + 1);
  join(all[issuer][group], pending[issuer]);
  pending[issuer].clear();
}

void RaceDetector::acquire_groups(AgentId waiter, AgentId owner, GroupKind kind, std::uint32_t groups) {
  const auto& all = groups_done_[group_index(kind)];
  if (owner >= all.size()) return;
  for (std::uint32_t g = 0; g < groups && g < all[owner].size(); ++g) join(clocks_[waiter], all[owner][g]);
}

RaceDetector::Page& RaceDetector::page(std::uintptr_t page_index) {
  if (page_index != cached_page_) {
    auto& slot = pages_[page_index];
    if (!slot) slot = new_page();
    cached_page_ = page_index;
    cached_ = slot.get();
  }
  return *cached_;
}

std::optional<RaceDetector::Race> RaceDetector::access(AgentId a, const void* addr, std::size_t bytes, bool write,
                                                       bool async, std::uint32_t site) {
  const auto begin = reinterpret_cast<std::uintptr_t>(addr) / 4;
  const auto end = (reinterpret_cast<std::uintptr_t>(addr) + bytes + 3) / 4;
  const Epoch now{a, clocks_[a][a], step_[a], site, async};
  std::optional<Race> found;
  auto report = [&](const Epoch& e, bool e_writes, std::uintptr_t w) {
    if (!found)
      found = Race{e.agent, a, e_writes, write, e.step, now.step, e.site, site, reinterpret_cast<const void*>(w * 4)};
  };
  Page* pg = nullptr;
  for (std::uintptr_t w = begin; w < end; ++w) {
    if (!pg || w % kPageWords == 0) pg = &page(w / kPageWords);
    Word& s = pg->words[w % kPageWords];
    if (s.generation != generation_) s = Word{generation_, {}, {}, 0};
    if (s.write.agent != a && !ordered(s.write, a)) report(s.write, true, w);
    // The async proxy reading what a thread stored: that thread must have fenced since.
    if (async && !write && s.write.agent != ~0u && !s.write.async && !found &&
        (s.write.agent >= fenced_.size() || fenced_[s.write.agent] < s.write.clock)) {
      report(s.write, true, w);
      found->missing_fence = true;
    }
    if (write) {
      if (s.read.agent != a && !ordered(s.read, a)) report(s.read, false, w);
      if (s.more_reads)
        for (const Epoch& r : shared_reads_[s.more_reads - 1])
          if (r.agent != a && !ordered(r, a)) report(r, false, w);
      s.write = now;
      s.read = Epoch{};
      s.more_reads = 0;
    } else if (s.read.agent == ~0u || s.read.agent == a || ordered(s.read, a)) {
      s.read = now;  // the earlier read happens before this one: it need not be kept
    } else {
      // Concurrent readers: keep them all (rare in pipelines: one reader per word).
      if (!s.more_reads) {
        shared_reads_.emplace_back();
        s.more_reads = static_cast<std::uint32_t>(shared_reads_.size());
      }
      shared_reads_[s.more_reads - 1].push_back(s.read);
      s.read = now;
    }
  }
  return found;
}

}  // namespace mbcheck::sim
