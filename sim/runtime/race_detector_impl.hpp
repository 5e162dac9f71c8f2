// The race detector's definitions, over either clock representation: included by the two
// files that build it, race_detector.cpp (DenseClock) and race_detector_chunked.cpp
// (SharedClock). Two translation units, so that each keeps the inlining of one.
#pragma once

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "sim/runtime/race_detector.hpp"

namespace mbcheck::sim {

template <class Clock>
void RaceDetectorCore<Clock>::join_inits(Knowledge& into, const Knowledge& from) {
  if (into.init.size() < from.init.size()) into.init.resize(from.init.size());
  for (std::size_t b = 0; b < from.init.size(); ++b)
    into.init[b].visible = std::max(into.init[b].visible, from.init[b].visible);
}

template <class Clock>
std::uint32_t RaceDetectorCore<Clock>::knowledge_slot(std::uint32_t barrier) {
  if (slot_of_.size() <= barrier) slot_of_.resize(barrier + 1, kNoSlot);
  if (slot_of_[barrier] == kNoSlot) slot_of_[barrier] = slots_++;
  return slot_of_[barrier];
}

template <class Clock>
typename RaceDetectorCore<Clock>::Knowledge& RaceDetectorCore<Clock>::knowledge(AgentId a) {
  if (known_.size() <= a) known_.resize(a + 1);
  return known_[a];
}

template <class Clock>
std::uint32_t RaceDetectorCore<Clock>::incarnation(std::uint32_t barrier) const {
  return barrier < incarnation_.size() ? incarnation_[barrier] : 0;
}

template <class Clock>
std::int64_t RaceDetectorCore<Clock>::known_phase(AgentId a, std::uint32_t barrier) const {
  if (!track_knowledge_) throw std::logic_error("mbcheck: known_phase in an execution that keeps no knowledge");
  if (is_hidden(barrier))
    throw std::logic_error("mbcheck: known_phase of a hidden counter, of which no knowledge is kept");
  const std::uint32_t slot = slot_if_any(barrier);
  if (a >= known_.size() || slot == kNoSlot) return -1;  // (kNoSlot: nothing learnt of it)
  const std::uint32_t k = known_[a].phase[slot];
  const std::uint32_t first = barrier < first_key_.size() ? first_key_[barrier] : 0;
  return k > first ? std::int64_t{k} - first - 1 : -1;
}

template <class Clock>
std::uint32_t RaceDetectorCore<Clock>::phase_key_slow(std::uint32_t barrier, std::int64_t phase) {
  if (first_key_.size() <= barrier) {
    first_key_.resize(barrier + 1, 0);
    last_key_.resize(barrier + 1, 0);
  }
  const std::int64_t key = std::int64_t{first_key_[barrier]} + 1 + phase;
  if (phase < -1 || key > std::int64_t{UINT32_MAX - 1})
    throw std::logic_error("mbcheck: a barrier's phase knowledge ran out of 32-bit keys (phase " +
                           std::to_string(phase) + ")");
  last_key_[barrier] = std::max(last_key_[barrier], static_cast<std::uint32_t>(key));
  return static_cast<std::uint32_t>(key);
}

template <class Clock>
void RaceDetectorCore<Clock>::barrier_init(std::uint32_t barrier, AgentId by, bool hidden) {
  if (incarnation_.size() <= barrier) incarnation_.resize(barrier + 1, 0);
  if (init_by_.size() <= barrier) init_by_.resize(barrier + 1, ~0u);
  if (hidden_.size() <= barrier) hidden_.resize(barrier + 1, 0);
  ++incarnation_[barrier];
  if (first_key_.size() <= barrier) {
    first_key_.resize(barrier + 1, 0);
    last_key_.resize(barrier + 1, 0);
  }
  if (last_key_[barrier] >= UINT32_MAX - 1)
    throw std::logic_error("mbcheck: a barrier's phase knowledge ran out of 32-bit keys (too many inits)");
  first_key_[barrier] = last_key_[barrier] = last_key_[barrier] + 1;  // past every earlier key
  // The new incarnation's phases start again from 0: what earlier ones released is void (a wait
  // on the new phase 0 must not take the releases of an old phase 0 that never completed).
  if (barrier < released_.size())
    for (int s = 0; s < kSlots; ++s) released_[barrier].phase[s] = INT64_MIN;
  init_by_[barrier] = by;
  hidden_[barrier] = hidden;
  if (!track_inits_ || hidden) return;
  Knowledge& k = knowledge(by);  // the initialiser knows its init from here on
  const std::uint32_t slot = knowledge_slot(barrier);
  if (k.init.size() <= slot) k.init.resize(slot + 1);
  k.init[slot].visible = incarnation_[barrier];
}

template <class Clock>
void RaceDetectorCore<Clock>::fence_inits(AgentId a) {
  if (!track_inits_) return;
  Knowledge& mine = knowledge(a);
  for (std::uint32_t b = 0; b < init_by_.size(); ++b) {
    if (init_by_[b] != a || hidden_[b]) continue;
    const std::uint32_t slot = knowledge_slot(b);
    if (mine.init.size() <= slot) mine.init.resize(slot + 1);
    mine.init[slot].fenced = incarnation_[b];
  }
}

template <class Clock>
bool RaceDetectorCore<Clock>::init_visible(AgentId a, std::uint32_t barrier) const {
  if (!track_inits_) return true;  // no peer CTA can use it
  const std::uint32_t slot = slot_if_any(barrier);
  return a < known_.size() && slot < known_[a].init.size() && known_[a].init[slot].visible == incarnation(barrier);
}

template <class Clock>
void RaceDetectorCore<Clock>::release_knowledge(AgentId a, std::uint32_t barrier, std::int64_t phase) {
  Knowledge& into = released_knowledge(barrier, phase);
  const Knowledge& from = knowledge(a);
  if (into.init.size() < from.init.size()) into.init.resize(from.init.size());
  for (std::size_t b = 0; b < from.init.size(); ++b)
    into.init[b].visible = std::max(into.init[b].visible, from.init[b].fenced);
}

template <class Clock>
void RaceDetectorCore<Clock>::converge_knowledge(AgentId a, std::uint32_t barrier, std::int64_t phase, bool arriving) {
  if (!track_knowledge_) return;
  if (arriving) {
    released_knowledge(barrier, phase).phase.join(knowledge(a).phase);
    return;
  }
  if (released_.size() <= barrier) return;
  const Released& r = released_[barrier];
  if (const int slot = Released::slot(phase); r.phase[slot] == phase) knowledge(a).phase.join(r.known[slot].phase);
}

template <class Clock>
RaceDetectorCore<Clock>::~RaceDetectorCore() {
  for (auto& [index, page] : pages_) race_shadow::pool_page(std::move(page));
}

template <class Clock>
void RaceDetectorCore<Clock>::reset(std::size_t agents) {
  // Every buffer is emptied, not freed: a fuzzing campaign runs the same shape again and
  // again, and allocating them anew was a tenth of a step's cost. The per-barrier tables keep
  // their length (zeros: nothing known), not grown again entry by entry in every run.
  // Clocks start as wide as the last execution's agents (its copies too; zeros): a join then
  // finds them long enough, where growing them one copy at a time resized them in most joins.
  // Rounded up to whole vectors of 8 entries, so that a join's vector loop needs no tail.
  const std::size_t width = (std::max(agents, clocks_.size()) + 7) / 8 * 8;
  // The agent tables keep their length too: entries past `agents` (the last execution's
  // copies) are stale until add_agent overwrites them, and nothing reads an agent before.
  for (std::size_t a = agents; a < clocks_.size(); ++a)  // the last execution's copies
    if (has_buffers(static_cast<AgentId>(a))) spare(static_cast<AgentId>(a));
  if (known_.size() < agents) known_.resize(agents);
  if (track_knowledge_)
    for (std::size_t a = 0; a < agents; ++a) known_[a].clear();
  std::fill(incarnation_.begin(), incarnation_.end(), 0);
  std::fill(first_key_.begin(), first_key_.end(), 0);
  std::fill(last_key_.begin(), last_key_.end(), 0);
  std::fill(init_by_.begin(), init_by_.end(), ~0u);
  std::fill(hidden_.begin(), hidden_.end(), 0);  // kept at their length: no resize per execution
  std::fill(slot_of_.begin(), slot_of_.end(), kNoSlot);
  slots_ = 0;
  if (clocks_.size() < agents) clocks_.resize(agents);
  if (step_.size() < agents) step_.resize(agents);
  for (std::size_t a = 0; a < agents; ++a) {
    clocks_[a].reset(width, a, 1);
    step_[a] = 0;
  }
  for (Released& r : released_)  // (a slot's clock and knowledge are cleared when it is taken)
    for (int s = 0; s < kSlots; ++s) r.phase[s] = INT64_MIN;
  shared_reads_.clear();
  fenced_.assign(agents, {});
  for (VClock& c : fence_knows_) c.clear();
  fencers_.clear();
  for (auto& spaces : fence_epochs_)
    for (auto& epochs : spaces) epochs.clear();
  fence_knows_spaces_.assign(fence_knows_spaces_.size(), 0);
  for (VClock& c : exit_clocks_) c.clear();
  for (auto& [clock, known] : block_arrivals_) {
    clock.clear();
    known.clear();
  }
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    for (AgentId o : group_owners_[k]) {
      if (o < groups_done_[k].size()) groups_done_[k][o].clear();
      if (o < done_uncommitted_[k].size()) done_uncommitted_[k][o].clear();
      is_group_owner_[k][o] = 0;
    }
    group_owners_[k].clear();
    if (groups_done_[k].size() < agents) groups_done_[k].resize(agents);
    if (done_uncommitted_[k].size() < agents) done_uncommitted_[k].resize(agents);
  }
  // Every shadow word of the last execution is now stale.
  generation_ = race_shadow::next_generation();
  if (const std::uint32_t wraps = race_shadow::generation_wraps(); wraps != wraps_seen_) {
    for (auto& [index, page] : pages_) race_shadow::clear_generations(*page);
    wraps_seen_ = wraps;
  }
}

template <class Clock>
void RaceDetectorCore<Clock>::spare(AgentId a) {
  if (clocks_[a].has_storage()) {
    clocks_[a].clear();
    spare_clocks_.push_back(std::move(clocks_[a]));
    clocks_[a] = VClock();
  }
  if (a < known_.size() && known_[a].has_storage()) {
    known_[a].clear();
    spare_knowledge_.push_back(std::move(known_[a]));
    known_[a] = Knowledge();
  }
}

template <class Clock>
void RaceDetectorCore<Clock>::add_agent(AgentId id, AgentId parent) {
  if (clocks_.size() <= id) clocks_.resize(id + 1);
  if (step_.size() <= id) step_.resize(id + 1, 0);
  if (known_.size() <= id) known_.resize(id + 1);
  // A retired copy's buffers are taken first: a copy a stage costs no allocation.
  if (!clocks_[id].has_storage() && !spare_clocks_.empty()) {
    clocks_[id] = std::move(spare_clocks_.back());
    spare_clocks_.pop_back();
  }
  if (!known_[id].has_storage() && !spare_knowledge_.empty()) {
    known_[id] = std::move(spare_knowledge_.back());
    spare_knowledge_.pop_back();
  }
  if (track_knowledge_) known_[id] = known_[parent];
  clocks_[id] = clocks_[parent];
  clocks_[id].at(id) = 1;
  if (strict_proxy_ && parent < fence_knows_spaces_.size() && fence_knows_spaces_[parent] != 0) {
    if (fence_knows_.size() <= id) {
      fence_knows_.resize(id + 1);
      fence_knows_spaces_.resize(id + 1, 0);
    }
    fence_knows_[id] = fence_knows_[parent];
    fence_knows_spaces_[id] = fence_knows_spaces_[parent];
  } else if (id < fence_knows_spaces_.size()) {
    fence_knows_spaces_[id] = 0;
  }
  step_[id] = step_[parent];
  ++clocks_[parent].at(parent);  // the issuer's later accesses are not ordered before the copy
}

template <class Clock>
void RaceDetectorCore<Clock>::thread_exit(AgentId a, std::uint32_t cta) {
  if (exit_clocks_.size() <= cta) exit_clocks_.resize(cta + 1);
  exit_clocks_[cta].join(clocks_[a], clocks_.size());
}

template <class Clock>
Clock& RaceDetectorCore<Clock>::released_clock(std::uint32_t barrier, std::int64_t phase) {
  if (released_.size() <= barrier) released_.resize(barrier + 1);
  Released& r = released_[barrier];
  const int slot = Released::slot(phase);
  if (r.phase[slot] != phase) {  // an older phase's slot (or none): taken over
    r.phase[slot] = phase;
    r.clock[slot].clear();
    r.remote[slot].clear();
    r.known[slot].clear();
  }
  return r.clock[slot];
}

template <class Clock>
typename RaceDetectorCore<Clock>::Knowledge& RaceDetectorCore<Clock>::released_knowledge(std::uint32_t barrier,
                                                                                         std::int64_t phase) {
  released_clock(barrier, phase);  // takes the phase's slot if need be
  return released_[barrier].known[Released::slot(phase)];
}

template <class Clock>
void RaceDetectorCore<Clock>::release(AgentId a, std::uint32_t barrier, std::int64_t phase, bool remote) {
  if (released_.size() <= barrier) released_.resize(barrier + 1);
  Released& r = released_[barrier];
  const int slot = Released::slot(phase);
  if (r.phase[slot] != phase) {  // the phase's first release: its slot becomes a's past
    r.phase[slot] = phase;
    (remote ? r.remote : r.clock)[slot] = clocks_[a];
    (remote ? r.clock : r.remote)[slot].clear();
    if (track_knowledge_) r.known[slot] = knowledge(a);
  } else {
    if (track_knowledge_) join_knowledge(r.known[slot], knowledge(a));
    (remote ? r.remote : r.clock)[slot].join(clocks_[a], clocks_.size());
  }
  ++clocks_[a].at(a);  // what a does next is not covered by this release
}

template <class Clock>
void RaceDetectorCore<Clock>::release_own(AgentId a, std::uint32_t barrier, std::int64_t phase) {
  auto& into = released_clock(barrier, phase);
  into.raise(a, clocks_[a][a]);
  ++clocks_[a].at(a);
}

template <class Clock>
void RaceDetectorCore<Clock>::acquire(AgentId a, std::uint32_t barrier, std::int64_t phase, bool cluster) {
  // a saw `phase` complete: it knows so from now on, even where nothing was released on it.
  if (track_knowledge_ && !is_hidden(barrier)) {
    Knowledge& mine = knowledge(a);
    const std::uint32_t slot = knowledge_slot(barrier);
    std::uint32_t& key = mine.phase.at(slot);
    key = std::max(key, phase_key(barrier, phase));  // mine is of no newer incarnation
  }
  if (released_.size() <= barrier) return;
  const Released& r = released_[barrier];
  if (const int slot = Released::slot(phase); r.phase[slot] == phase) {
    clocks_[a].join(r.clock[slot], clocks_.size());
    if (cluster) clocks_[a].join(r.remote[slot], clocks_.size());
    if (track_knowledge_) join_knowledge(known_[a], r.known[slot]);
  }
}

template <class Clock>
void RaceDetectorCore<Clock>::block_arrive(AgentId a, std::uint32_t key) {
  if (block_arrivals_.size() <= key) block_arrivals_.resize(key + 1);
  block_arrivals_[key].first.join(clocks_[a], clocks_.size());
  if (track_knowledge_) join_knowledge(block_arrivals_[key].second, knowledge(a));
  ++clocks_[a].at(a);  // what a does next is not covered by this arrival
}

template <class Clock>
void RaceDetectorCore<Clock>::join_all(const std::vector<AgentId>& agents, std::uint32_t key) {
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
    all.join(clocks_[a], clocks_.size());
    if (track_knowledge_) join_knowledge(known, known_[a]);
  }
  // `all` holds every waiter's clock and phase knowledge: each waiter takes a copy (no max
  // needed; its init facts are joined, as its own fenced ones must stay).
  for (AgentId a : agents) {
    if (track_knowledge_) {
      known_[a].phase = known.phase;
      if (!known.init.empty()) join_knowledge(known_[a], known);
    }
    clocks_[a] = all;
    ++clocks_[a].at(a);
  }
}

template <class Clock>
void RaceDetectorCore<Clock>::fence_async(AgentId a, FenceSpaces spaces) {
  if (fenced_.size() <= a) fenced_.resize(a + 1);
  for (std::size_t s = 0; s < kMemorySpaces; ++s)
    if (spaces >> s & 1u) fenced_[a][s] = clocks_[a][a];
  if (strict_proxy_) {
    if (fence_knows_.size() <= a) {
      fence_knows_.resize(a + 1);
      fence_knows_spaces_.resize(a + 1, 0);
    }
    if (fence_knows_spaces_[a] == 0 && a < threads_) fencers_.push_back(a);
    fence_knows_[a] = clocks_[a];
    fence_knows_spaces_[a] = spaces;
    if (fence_epochs_.size() <= a) fence_epochs_.resize(a + 1);
    for (std::size_t s = 0; s < kMemorySpaces; ++s)
      if (spaces >> s & 1u) fence_epochs_[a][s].push_back(clocks_[a][a]);
  }
  ++clocks_[a].at(a);  // writes after the fence are not covered by it
}

// A generic read `r`, ordered before an async write by `writer`: covered by the reader's fence
// (after the read: its epoch at the fence is the read's or later; before the release that
// orders it: the writer knows the reader past the fence), by the issuer's (its latest fence
// before the issue knew of the read), or by another thread's (below), with a fence whose spaces
// hold the read's.
template <class Clock>
bool RaceDetectorCore<Clock>::read_fenced(const Epoch& r, AgentId writer) const {
  const auto space = static_cast<std::size_t>(r.space);
  if (r.agent < fence_epochs_.size()) {
    const auto& epochs = fence_epochs_[r.agent][space];
    const auto first = std::lower_bound(epochs.begin(), epochs.end(), r.clock);
    if (first != epochs.end() && clocks_[writer][r.agent] > *first) return true;
  }
  if (writer < fence_knows_spaces_.size() && (fence_knows_spaces_[writer] >> space & 1u) != 0 &&
      fence_knows_[writer][r.agent] >= r.clock)
    return true;
  // Another thread's latest fence (a fence covers the generic accesses its thread knows of):
  // one of the reader's CTA for its shared memory, any for global memory.
  for (const AgentId x : fencers_) {
    if (x == r.agent || (fence_knows_spaces_[x] >> space & 1u) == 0) continue;
    if (r.space != MemorySpace::global && (r.agent >= threads_ || x / threads_per_cta_ != r.agent / threads_per_cta_))
      continue;
    if (fence_knows_[x][r.agent] >= r.clock && clocks_[writer][x] > fence_knows_[x][x]) return true;
  }
  return false;
}

template <class Clock>
void RaceDetectorCore<Clock>::group_member_done(AgentId member, AgentId issuer, GroupKind kind, std::uint32_t group) {
  const std::size_t k = group_index(kind);
  note_group_owner(k, issuer);
  if (group == ~0u) {
    auto& pending = done_uncommitted_[k];
    if (pending.size() <= issuer) pending.resize(issuer + 1);
    pending[issuer].raise(member, clocks_[member][member]);
    return;
  }
  // Only the member's own accesses: a wgmma read agent's clock holds every lane's past at the
  // issue, which a lane's wait_group must not pass on to it (the waiter of a bulk store or a
  // cp.async is its issuer, which has that past already).
  auto& all = groups_done_[k];
  if (all.size() <= issuer) all.resize(issuer + 1);
  if (all[issuer].size() <= group) all[issuer].resize(group + 1);
  all[issuer][group].raise(member, clocks_[member][member]);
}

template <class Clock>
void RaceDetectorCore<Clock>::commit_group(AgentId issuer, GroupKind kind, std::uint32_t group) {
  const std::size_t k = group_index(kind);
  auto& pending = done_uncommitted_[k];
  if (issuer >= pending.size() || pending[issuer].empty()) return;
  auto& all = groups_done_[k];
  if (all.size() <= issuer) all.resize(issuer + 1);
  if (all[issuer].size() <= group) all[issuer].resize(group + 1);
  all[issuer][group].join(pending[issuer], clocks_.size());
  pending[issuer].clear();
}

template <class Clock>
void RaceDetectorCore<Clock>::acquire_groups(AgentId waiter, AgentId owner, GroupKind kind, std::uint32_t groups) {
  const auto& all = groups_done_[group_index(kind)];
  if (owner >= all.size()) return;
  for (std::uint32_t g = 0; g < groups && g < all[owner].size(); ++g)
    clocks_[waiter].join(all[owner][g], clocks_.size());
}

template <class Clock>
race_shadow::Page& RaceDetectorCore<Clock>::page_miss(std::uintptr_t page_index) {
  auto& slot = pages_[page_index];
  if (!slot) slot = race_shadow::take_page();
  cached_index_[page_index % kCachedPages] = page_index;
  cached_page_[page_index % kCachedPages] = slot.get();
  return *slot;
}

// The word's read moves to its list of kept reads (Word::more_reads), for a new one to take its place.
template <class Clock>
void RaceDetectorCore<Clock>::keep_read(Word& s) {
  if (!s.more_reads) {
    shared_reads_.emplace_back();
    s.more_reads = static_cast<std::uint32_t>(shared_reads_.size());
  }
  shared_reads_[s.more_reads - 1].push_back(s.read);
}

// The first race of an access, built out of line: access() keeps only what its word loop needs.
template <class Clock>
void RaceDetectorCore<Clock>::note_race(std::optional<Race>& found, const Epoch& e, bool e_writes, const Epoch& now,
                                        bool write, std::uintptr_t w) {
  if (!found)
    found = Race{
        e.agent, now.agent, e_writes, write, e.step, now.step, e.site, now.site, reinterpret_cast<const void*>(w * 4)};
}

template <class Clock>
std::optional<DataRace> RaceDetectorCore<Clock>::access(AgentId a, const void* addr, std::size_t bytes, bool write,
                                                        bool async, std::uint32_t site, MemorySpace space,
                                                        bool atomic) {
  const auto begin = reinterpret_cast<std::uintptr_t>(addr) / 4;
  const auto end = (reinterpret_cast<std::uintptr_t>(addr) + bytes + 3) / 4;
  const Epoch now{a, clocks_[a][a], step_[a], site, async, space, atomic};
  std::optional<Race> found;
  Page* pg = nullptr;
  for (std::uintptr_t w = begin; w < end; ++w) {
    if (!pg || w % kPageWords == 0) pg = &page(w / kPageWords);
    Word& s = pg->words[w % kPageWords];
    if (s.generation != generation_) {  // its first access in this execution: nothing to check
      s.generation = generation_;
      s.more_reads = 0;
      s.write = write ? now : Epoch{};
      s.read = write ? Epoch{} : now;
      continue;
    }
    if (s.write.agent != a && !ordered(s.write, a) && !(atomic && s.write.atomic)) [[unlikely]]
      note_race(found, s.write, true, now, write, w);
    // The async proxy reading what a thread stored: that thread must have fenced since, with
    // a fence whose state space holds the write.
    if (async && !write && s.write.agent != ~0u && !s.write.async && !found &&
        (s.write.agent >= fenced_.size() ||
         fenced_[s.write.agent][static_cast<std::size_t>(s.write.space)] < s.write.clock)) {
      note_race(found, s.write, true, now, write, w);
      found->missing_fence = true;
      found->written_space = s.write.space;
    }
    if (write) {
      if (s.read.agent != a && !ordered(s.read, a) && !(atomic && s.read.atomic)) [[unlikely]]
        note_race(found, s.read, false, now, write, w);
      if (s.more_reads) [[unlikely]]
        for (const Epoch& r : shared_reads_[s.more_reads - 1])
          if (r.agent != a && !ordered(r, a) && !(atomic && r.atomic)) note_race(found, r, false, now, write, w);
      // Strict proxy fences: the async proxy overwriting what a thread read with the generic proxy.
      if (strict_proxy_ && async && !found) [[unlikely]] {
        auto unfenced = [&](const Epoch& r) { return r.agent != ~0u && !r.async && !read_fenced(r, a); };
        const Epoch* r = unfenced(s.read) ? &s.read : nullptr;
        if (!r && s.more_reads)
          for (const Epoch& e : shared_reads_[s.more_reads - 1])
            if (unfenced(e)) {
              r = &e;
              break;
            }
        if (r) {
          note_race(found, *r, false, now, write, w);
          found->missing_fence = true;
          found->written_space = r->space;
        }
      }
      s.write = now;
      s.read = Epoch{};
      s.more_reads = 0;
    } else if (s.read.agent == ~0u || s.read.agent == a || ordered(s.read, a)) {
      // The earlier read happens before this one: no later write can race it and not this one.
      // Under strict proxy fences another thread's generic read is kept all the same: an async
      // overwrite must still find it fenced.
      if (strict_proxy_ && s.read.agent != ~0u && s.read.agent != a && !s.read.async) [[unlikely]]
        keep_read(s);
      s.read = now;
    } else {
      keep_read(s);  // concurrent readers: keep them all (rare in pipelines: one reader per word)
      s.read = now;
    }
  }
  return found;
}

}  // namespace mbcheck::sim
