// The reference enumerator: clusters, scopes and warp collectives (diff_program.hpp's cluster
// section), written from the PTX ISA:
// * mapa / .shared::cluster: an address of a peer CTA's shared memory; the mbarrier
//   instructions with .shared::cluster (arrive.release.cluster, arrive.expect_tx.release.cluster,
//   complete_tx.relaxed.cluster) act on the peer's barrier exactly as the local forms do.
// * cp.async.bulk ... .multicast::cluster: "copied to the same CTA-relative offset ... in the
//   shared memory of each destination CTA", and the mbarrier signal is "also multicast to the
//   same CTA-relative offset" as the destination: one landing per destination, each with its
//   own complete_tx.
// * barrier.cluster.arrive / wait: every non-exited thread of the cluster arrives; wait
//   "causes the executing thread to wait for all non-exited threads of the cluster to perform
//   barrier.cluster.arrive"; arrive defaults to .release and wait to .acquire; .relaxed
//   removes the release. Arriving twice without a wait between, or waiting without an arrive,
//   is undefined (misuse cluster).
// * fence.mbarrier_init.release.cluster: a light-weight fence ordering the thread's prior
//   mbarrier.init before its later (relaxed) cluster arrive: the init then reaches the
//   cluster's waiters, which is what CUTLASS's fence_barrier_init + cluster_arrive_relaxed +
//   cluster_wait rely on. Every release/acquire edge carries an init's visibility.
// * Scopes (PTX ISA 9.1, 8.7): a release and an acquire synchronize only if "each operation
//   ... specifies a scope that includes the thread executing the other operation". A remote
//   arrive is .release.cluster, the program's waits are .acquire.cta (their default): a peer's
//   arrive orders nothing before a wait of the barrier's CTA (its phase knowledge still counts:
//   the emulator reads parity waits against it); barrier.cluster's arrive and wait are
//   cluster-scoped.
// * A CTA's shared memory lives while one of its threads has not exited (docs/semantics.md
//   "CTA-exit lifetime"): peer uses must be ordered before one of its exits.
// * bar.warp.sync, elect.sync, shfl.sync with the full mask: every lane of the mask executes
//   the same instruction before any leaves it. Only bar.warp.sync orders memory ("also
//   guarantee memory ordering among threads participating in barrier", 9.7.13.2); elect.sync
//   and shfl.sync have no memory semantics: the lanes share their phase knowledge (facts of the
//   execution's order) and nothing else.
#include "tests/differential/reference_explorer.hpp"

namespace mbcheck::diff::ref {

int Explorer::target_cta(int g, I rank) const {
  if (rank < 0 || rank >= csize()) misuse("cluster");
  return cluster_base(g) + static_cast<int>(rank);
}

void Explorer::peer_use(State& s, int c, int agent, I epoch, int b) const {
  const int first = c * static_cast<int>(p_.threads);
  bool alive = false;
  for (int g = first; g < first + static_cast<int>(p_.threads); ++g) alive |= !s.threads[g].finished;
  if (!alive) throw Bug{"lifetime"};  // its shared memory is gone
  Clock* into = &s.uses[static_cast<std::size_t>(c)];
  if (b >= 0) {  // a counter op: on the barrier's current phase
    Barrier& bb = bar(s, c, b);
    const auto phase = static_cast<std::size_t>(std::max<I>(bb.phase, 0));
    if (bb.peer.size() <= phase) bb.peer.resize(phase + 1);
    if (bb.peer[phase].empty()) bb.peer[phase].assign(static_cast<std::size_t>(agents_), 0);
    into = &bb.peer[phase];
  }
  (*into)[static_cast<std::size_t>(agent)] = std::max((*into)[static_cast<std::size_t>(agent)], epoch);
}

void Explorer::on_exit(State& s, int g) const {
  const int c = cta_of(g);
  Clock& exits = s.exits[static_cast<std::size_t>(c)];
  join(exits, s.threads[static_cast<std::size_t>(g)].clock);
  const int first = c * static_cast<int>(p_.threads);
  for (int h = first; h < first + static_cast<int>(p_.threads); ++h)
    if (!s.threads[h].finished) return;
  // The last exit: every use by another CTA must happen before some exit of this CTA.
  auto covered = [&](const Clock& uses) {
    for (std::size_t a = 0; a < uses.size(); ++a)
      if (uses[a] > exits[a]) return false;
    return true;
  };
  if (!covered(s.uses[static_cast<std::size_t>(c)])) throw Bug{"lifetime"};
  for (int b = 0; b < nbars_; ++b)
    for (const Clock& ops : bar(s, c, b).peer)
      if (!covered(ops)) throw Bug{"lifetime"};
  std::fill(exits.begin(), exits.end(), 0);  // never read again: keep states canonical
}

bool Explorer::cluster_step(State& s, int g, const Instr& in) const {
  Thread& t = s.threads[static_cast<std::size_t>(g)];
  const int cta = cta_of(g);
  const auto self = static_cast<std::size_t>(g);
  // A barrier of another CTA: its init must be visible to the thread (unfenced-init).
  auto peer_barrier = [&](int c, int b) -> Barrier& {
    Barrier& pb = bar(s, c, b);
    if (c != cta && t.known[init_entry(c, b)] < 1) misuse("unfenced-init");
    return pb;
  };
  switch (in.op) {
    case Stmt::remote_arrive:
    case Stmt::remote_arrive_expect_tx: {
      const int c = target_cta(g, in.arg);
      Barrier& b = peer_barrier(c, in.bar);
      if (c != cta) peer_use(s, c, g, t.clock[self], in.bar);
      const Instr local = in.op == Stmt::remote_arrive
                              ? Instr{Stmt::arrive, in.bar, 0}
                              : Instr{Stmt::arrive_expect_tx, in.bar, static_cast<std::int32_t>(16 * p_.copy_pieces)};
      arrive(t, g, b, local, c != cta);
      break;
    }
    case Stmt::remote_complete_tx: {  // relaxed: releases nothing
      const int c = target_cta(g, in.arg);
      Barrier& b = peer_barrier(c, in.bar);
      if (c != cta) peer_use(s, c, g, t.clock[self], in.bar);
      require_live(b);
      check_tx(b.tx - kPieceBytes);
      b.tx -= kPieceBytes;
      complete_if_done(b);
      break;
    }
    case Stmt::multicast: {  // the issue: one copy agent per destination
      const I mask = in.arg & 15;
      if (mask == 0 || (mask >> csize()) != 0) misuse("cluster");
      for (int r = 0; r < csize(); ++r)
        if (mask >> r & 1) peer_barrier(cluster_base(g) + r, in.bar);
      const int first = copy_index_[self][static_cast<std::size_t>(t.pc - prologue_len(g))];
      for (int r = 0, k = first; r < csize(); ++r) {
        if (!(mask >> r & 1)) continue;
        Copy& cp = s.copies[static_cast<std::size_t>(k)];
        cp.status = 1;
        cp.landed = 0;
        cp.clock = t.clock;
        cp.clock[static_cast<std::size_t>(n_ + k)] = 1;
        cp.proxy_fence = t.proxy_fence;
        ++k;
      }
      t.clock[self] += 1;  // the issuer's later accesses are not before the copies
      break;
    }
    case Stmt::cluster_arrive:
    case Stmt::cluster_arrive_relaxed: {
      if (t.cl_count > t.cl_waited) misuse("cluster");  // a second arrive before its wait
      ClusterBar& cb = s.clusters[static_cast<std::size_t>(cluster_of(g))];
      const auto phase = static_cast<std::size_t>(t.cl_count);  // == cb.gen: it waited for the others
      if (cb.releases.size() <= phase) {
        cb.releases.resize(phase + 1, Clock(static_cast<std::size_t>(agents_), 0));
        cb.known.resize(phase + 1, std::vector<I>(known_size(), -1));
      }
      if (in.op == Stmt::cluster_arrive) {
        join(cb.releases[phase], t.clock);
        join_known(cb.known[phase], t.known);
        t.clock[self] += 1;
      } else if (t.fenced) {  // relaxed: only the fenced inits of the thread
        for (int b = 0; b < static_cast<int>(p_.barriers); ++b) cb.known[phase][init_entry(cta, b)] = 1;
      }
      t.cl_count += 1;
      break;
    }
    case Stmt::cluster_wait: {
      if (t.cl_count == t.cl_waited) misuse("cluster");  // no arrive to wait for
      const ClusterBar& cb = s.clusters[static_cast<std::size_t>(cluster_of(g))];
      if (cb.gen < t.cl_count) return false;
      const auto phase = static_cast<std::size_t>(t.cl_count - 1);
      join(t.clock, cb.releases[phase]);
      join_known(t.known, cb.known[phase]);
      t.cl_waited = t.cl_count;
      break;
    }
    case Stmt::fence_init:  // thread 0 initialised every barrier of the CTA in its prologue
      if (g % static_cast<int>(p_.threads) == 0) t.fenced = 1;
      break;
    case Stmt::dsmem_store:
    case Stmt::dsmem_load: {
      const int c = target_cta(g, in.bar);
      if (c != cta) peer_use(s, c, g, t.clock[self], -1);
      Word& w = data_word(s, c, in.arg);
      const bool write = in.op == Stmt::dsmem_store;
      access(w, g, t.clock, write);
      if (write)
        w.value = g + 1;
      else
        t.regs.push_back(w.value);
      break;
    }
    case Stmt::syncwarp:
    case Stmt::elect_sync:
    case Stmt::shfl_idx: {
      if (!t.released) return false;  // waiting for the rest of the warp
      const I how = t.released;       // rendezvous(): 2 the lowest participant, 3 a shfl source exited
      t.released = 0;
      const int lane = g % static_cast<int>(p_.warp_size), lane0 = g - lane;
      if (in.op == Stmt::elect_sync) t.regs.push_back(how == 2 ? 1 : 0);
      if (in.op == Stmt::shfl_idx) {
        // "results are undefined if a thread sources a register from an inactive thread"
        if (how == 3) misuse("collective");
        t.regs.push_back(lane0 + in.arg + 1);
      }
      break;
    }
    default: throw std::invalid_argument("reference: not a cluster statement");
  }
  return true;
}

void Explorer::rendezvous(State& s, int g) const {
  // The warp: every lane that has not exited stands at a collective it has not been released
  // from (shfl.sync waits for "all non-exited threads corresponding to membermask"; the CUDA
  // guide says the same of __syncwarp; elect.sync is read the same way).
  const int ws = static_cast<int>(p_.warp_size), lane0 = g - g % ws;
  bool all = true;
  int lowest = -1;
  for (int h = lane0; h < lane0 + ws && all; ++h) {
    const Thread& t = s.threads[static_cast<std::size_t>(h)];
    if (t.finished) continue;
    if (lowest < 0) lowest = h;
    all = !t.released && !is_init(h, t.pc) && t.pc < length(h) && is_collective(instr_at(h, t.pc).op);
  }
  if (all && lowest >= 0) {
    const bool orders = instr_at(lowest, s.threads[static_cast<std::size_t>(lowest)].pc).op == Stmt::syncwarp;
    Clock joined(static_cast<std::size_t>(agents_), 0);
    std::vector<I> known(known_size(), -1);
    for (int h = lane0; h < lane0 + ws; ++h) {
      if (s.threads[static_cast<std::size_t>(h)].finished) continue;
      join(joined, s.threads[static_cast<std::size_t>(h)].clock);
      join_known(known, s.threads[static_cast<std::size_t>(h)].known);
    }
    // Without memory order, only the phase entries are shared (not the init facts, which are
    // what release/acquire edges carry).
    if (!orders)
      for (std::size_t i = static_cast<std::size_t>(p_.ctas) * static_cast<std::size_t>(nbars_); i < known.size(); ++i)
        known[i] = -1;
    for (int h = lane0; h < lane0 + ws; ++h) {
      Thread& t = s.threads[static_cast<std::size_t>(h)];
      if (t.finished) continue;
      const Instr in = instr_at(h, t.pc);
      const bool source_gone = in.op == Stmt::shfl_idx && s.threads[static_cast<std::size_t>(lane0 + in.arg)].finished;
      if (orders) {
        t.clock = joined;
        t.known = known;
        t.clock[static_cast<std::size_t>(h)] += 1;
      } else {
        join_known(t.known, known);
      }
      t.released = source_gone ? 3 : h == lowest ? 2 : 1;
    }
  }
  // The cluster barrier: its phase completes once every non-exited thread has arrived in it.
  ClusterBar& cb = s.clusters[static_cast<std::size_t>(cluster_of(g))];
  const int first = cluster_of(g) * csize() * static_cast<int>(p_.threads);
  bool any = false;
  for (int h = first; h < first + csize() * static_cast<int>(p_.threads); ++h) {
    const Thread& t = s.threads[static_cast<std::size_t>(h)];
    if (t.finished) continue;
    if (t.cl_count <= cb.gen) return;
    any = true;
  }
  if (any) cb.gen += 1;
}

}  // namespace mbcheck::diff::ref
