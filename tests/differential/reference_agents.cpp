// The reference enumerator: the initial state, settling a thread past what is not a step,
// sync_threads, and the steps of the asynchronous agents (copies, cp.async, wgmma reads).

#include "tests/differential/reference_explorer.hpp"

namespace mbcheck::diff::ref {

State Explorer::initial() const {
  State s;
  s.threads.resize(static_cast<std::size_t>(n_));
  for (int g = 0; g < n_; ++g) {
    Thread& t = s.threads[g];
    t.token.assign(static_cast<std::size_t>(nbars_), 0);
    t.status.assign(static_cast<std::size_t>(nbars_), 0);
    t.clock.assign(static_cast<std::size_t>(agents_), 0);
    t.clock[g] = 1;  // own components start at 1: epoch 0 means "no access"
    t.known.assign(known_size(), -1);
  }
  s.bars.resize(static_cast<std::size_t>(p_.ctas) * nbars_);
  for (std::size_t i = 0; i < s.bars.size(); ++i) s.bars[i].index = static_cast<I>(i);
  s.copies.resize(copy_issuer_.size());
  for (Copy& c : s.copies) c.clock.assign(static_cast<std::size_t>(agents_), 0);
  s.cpas.resize(cpa_issuer_.size());
  for (CpAsync& c : s.cpas) c.clock.assign(static_cast<std::size_t>(agents_), 0);
  s.arrivers.resize(arv_issuer_.size());
  s.wgs.resize(wg_issuer_.size());
  for (WgRead& w : s.wgs) w.clock.assign(static_cast<std::size_t>(agents_), 0);
  Word blank;
  blank.reads.assign(static_cast<std::size_t>(agents_), 0);
  blank.read_fenced.assign(static_cast<std::size_t>(n_), 0);
  s.data.assign(static_cast<std::size_t>(p_.ctas) * kDataWords, blank);
  s.slots.assign(static_cast<std::size_t>(p_.ctas) * kSlots * kSlotWords, blank);
  s.atomics.assign(kAtomicWords, 0);
  s.named.resize(static_cast<std::size_t>(p_.ctas) * kNamedIds);
  s.clusters.resize(p_.ctas / p_.cluster_size());
  s.uses.assign(p_.ctas, Clock(static_cast<std::size_t>(agents_), 0));
  s.exits.assign(p_.ctas, Clock(static_cast<std::size_t>(agents_), 0));
  for (int g = 0; g < n_; ++g) settle(s, g);
  for (int c = 0; c < static_cast<int>(p_.ctas); ++c) sync_release(s, c);  // e.g. no barriers, one thread
  for (int g = 0; g < n_; ++g) rendezvous(s, g);
  return s;
}

// Moves thread g past its statement, then lets the CTA's sync_threads release if it can.
void Explorer::advance(State& s, int g) const {
  Thread& t = s.threads[static_cast<std::size_t>(g)];
  t.pc += 1;
  t.sub = 0;
  settle(s, g);
  sync_release(s, cta_of(g));
  rendezvous(s, g);
}

// A token wait on an empty slot, or a status wait whose try found its phase complete (or
// with no status), is a no-op, not a scheduling point: skip it as part of the step that
// reached it. Past the last statement the thread has exited.
void Explorer::settle(State& s, int g) const {
  Thread& t = s.threads[static_cast<std::size_t>(g)];
  while (t.pc < length(g) && !is_init(g, t.pc)) {
    Instr in = instr_at(g, t.pc);
    if (in.op == Stmt::cpa_commit) {  // bookkeeping of the thread only: part of the step that reached it
      for (std::size_t k = 0; k < s.cpas.size(); ++k)
        if (cpa_issuer_[k] == g && s.cpas[k].status != 0 && s.cpas[k].group < 0) s.cpas[k].group = t.groups;
      t.groups += 1;
      t.pc += 1;
      continue;
    }
    const bool leader = g % static_cast<int>(p_.threads) == 0;
    if (in.op == Stmt::wg_commit && leader) {  // the CTA's next wgmma group: not a step
      for (std::size_t k = 0; k < s.wgs.size(); ++k)
        if (wg_issuer_[k] == g && s.wgs[k].status != 0 && s.wgs[k].group < 0) s.wgs[k].group = t.wg_groups;
      t.wg_groups += 1;
      t.pc += 1;
      continue;
    }
    if ((in.op == Stmt::wg_mma || in.op == Stmt::wg_commit || in.op == Stmt::wg_wait) &&
        !leader) {  // the warp group's, by thread 0 (see diff_program.hpp)
      t.pc += 1;
      continue;
    }
    const bool token_op = in.op == Stmt::token_test_wait || in.op == Stmt::token_wait;
    const bool status_noop = in.op == Stmt::status_wait && (t.status[in.bar] == 0 || t.status[in.bar] % 2 == 0);
    if (!status_noop && (!token_op || t.token[in.bar] != 0)) break;
    t.pc += 1;
  }
  // In a cluster the exit is a step of its own (PTX's exit is an instruction): other threads
  // may run between a thread's last statement and its exit, which a peer's use of the CTA's
  // shared memory (lifetime) and barrier.cluster's count of non-exited threads can tell.
  if (t.pc == length(g) && p_.cluster_size() == 1) exit_thread(s, g);
}

void Explorer::exit_thread(State& s, int g) const {
  Thread& t = s.threads[static_cast<std::size_t>(g)];
  t.finished = 1;
  on_exit(s, g);                                 // (reads the clock before it is cleared)
  std::fill(t.clock.begin(), t.clock.end(), 0);  // never read again: keep states canonical
}

// When every thread of the CTA that has not exited stands at a sync_threads it has not yet
// been released from, all of them are released together, with the join of their clocks.
void Explorer::sync_release(State& s, int cta) const {
  Clock joined(static_cast<std::size_t>(agents_), 0);
  std::vector<I> known(known_size(), -1);
  bool any = false;
  const int first = cta * static_cast<int>(p_.threads);
  for (int g = first; g < first + static_cast<int>(p_.threads); ++g) {
    const Thread& t = s.threads[static_cast<std::size_t>(g)];
    if (t.finished) continue;
    if (t.pc >= length(g) || !at_sync(g, t.pc) || t.released) return;  // (one about to exit: later)
    join(joined, t.clock);
    join_known(known, t.known);
    any = true;
  }
  if (!any) return;
  for (int g = first; g < first + static_cast<int>(p_.threads); ++g) {
    Thread& t = s.threads[static_cast<std::size_t>(g)];
    if (t.finished) continue;
    t.clock = joined;
    t.known = known;
    t.clock[static_cast<std::size_t>(g)] += 1;
    t.released = 1;
  }
}

// One piece of copy c lands: it writes its 2 words, releases its own writes (and nothing
// of its issuer's) on the phase it lands in, then does complete_tx(16).
bool Explorer::copy_step(State& s, int c) const {
  Copy& cp = s.copies[static_cast<std::size_t>(c)];
  if (cp.status != 1) return false;
  const auto k = static_cast<std::size_t>(c);
  const int source = cta_of(copy_issuer_[k]), cta = copy_dest_[k], slot = copy_slot_[k], agent = n_ + c;
  // A landing in another CTA (multicast) uses its shared memory: checked and recorded first.
  if (cta != source) peer_use(s, cta, agent, cp.clock[static_cast<std::size_t>(agent)], copy_bar_[k]);
  for (int j = static_cast<int>(2 * cp.landed); j < 2 * cp.landed + 2; ++j) {
    Word& w = slot_word(s, cta, slot, j);
    async_overwrite(s, w, cp);
    access(w, agent, cp.clock, true);
    w.wasync = 1;
    w.value = copy_source_value(static_cast<std::uint32_t>(source), slot, j);
  }
  Barrier& b = bar(s, cta, copy_bar_[k]);
  require_live(b);
  check_tx(b.tx - kPieceBytes);
  Clock own(static_cast<std::size_t>(agents_), 0);
  own[static_cast<std::size_t>(agent)] = cp.clock[static_cast<std::size_t>(agent)];
  release(b, own);
  cp.clock[static_cast<std::size_t>(agent)] += 1;
  b.tx -= kPieceBytes;
  complete_if_done(b);
  cp.landed += 1;
  if (cp.landed == static_cast<I>(p_.copy_pieces)) {
    cp.status = 2;
    std::fill(cp.clock.begin(), cp.clock.end(), 0);
  }
  return true;
}

// cp.async instance k lands: it writes words 0..1 of its slot.
bool Explorer::cpa_step(State& s, int k) const {
  CpAsync& c = s.cpas[static_cast<std::size_t>(k)];
  if (c.status != 1) return false;
  const int cta = cta_of(cpa_issuer_[static_cast<std::size_t>(k)]), slot = cpa_slot_[static_cast<std::size_t>(k)];
  for (int j = 0; j < 2; ++j) {
    Word& w = slot_word(s, cta, slot, j);
    access(w, cpa_base_ + k, c.clock, true);
    w.value = copy_source_value(static_cast<std::uint32_t>(cta), slot, j);
  }
  c.status = 2;
  return true;
}

// The read agent of wg_mma instance k: reads words 0..1 of its slot through the async
// proxy; a word last written by the generic proxy (no fence in these programs) is a race.
bool Explorer::wg_step(State& s, int k) const {
  WgRead& r = s.wgs[static_cast<std::size_t>(k)];
  if (r.status != 1) return false;
  const int cta = cta_of(wg_issuer_[static_cast<std::size_t>(k)]), slot = wg_slot_[static_cast<std::size_t>(k)];
  for (int j = 0; j < 2; ++j) {
    Word& w = slot_word(s, cta, slot, j);
    if (w.writer >= 0 && !w.wasync) throw Bug{"race"};
    access(w, wg_base_ + k, r.clock, false);
  }
  r.status = 2;
  return true;
}

// Arrive agent k: once its copies landed, an arrive-on releasing their writes only.
bool Explorer::arrive_step(State& s, int k) const {
  Arriver& a = s.arrivers[static_cast<std::size_t>(k)];
  if (a.status != 1) return false;
  for (std::size_t c = 0; c < s.cpas.size(); ++c)
    if ((a.tracked >> c & 1) && s.cpas[c].status != 2) return false;
  Barrier& b = bar(s, cta_of(arv_issuer_[static_cast<std::size_t>(k)]), arv_bar_[static_cast<std::size_t>(k)]);
  require_live(b);
  if (b.pending < 1) misuse("over-arrival");
  if (b.phase > 0 && !b.observed && b.pending == 1 && b.tx == 0) misuse("missing-wait");  // completing it
  Clock own(static_cast<std::size_t>(agents_), 0);
  for (std::size_t c = 0; c < s.cpas.size(); ++c)
    if (a.tracked >> c & 1)
      own[static_cast<std::size_t>(cpa_base_) + c] = s.cpas[c].clock[static_cast<std::size_t>(cpa_base_) + c];
  release(b, own);
  b.pending -= 1;
  complete_if_done(b);
  a.status = 2;
  return true;
}

}  // namespace mbcheck::diff::ref
