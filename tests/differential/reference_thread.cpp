// The reference enumerator: one step of a thread (the statements of diff_program.hpp).

#include "tests/differential/reference_explorer.hpp"

namespace mbcheck::diff::ref {

// --- thread steps ---
namespace {
// mbarrier.init: the emulator's checks in its order, then a new incarnation from phase 0 that
// carries nothing of an earlier one (its releases, knowledge and peers are per phase of it).
void init_barrier(Barrier& b, I count) {
  if (b.live) misuse("reinit-live");
  if (count < 1 || count > kMaxCount) misuse("count-out-of-range");
  const I index = b.index, incarnation = b.incarnation + 1;
  b = Barrier{};
  b.index = index;
  b.incarnation = incarnation;
  b.live = 1;
  b.expected = b.pending = count;
}
}  // namespace

// Any poll, or the run of a blocking wait, for phase q: the answer, acquiring on true.
bool Explorer::poll(Thread& t, Barrier& b, I q, bool cluster_scope) {
  require_live(b);
  if (q != b.phase && q != b.phase - 1) throw Bug{"aliasing"};
  if (q != b.phase - 1) return false;
  if (b.phase > 0) b.observed = 1;
  // a thread of the barrier's CTA saw q complete: other CTAs' counter ops on q were performed
  if (q >= 0 && static_cast<std::size_t>(q) < b.peer.size()) b.peer[static_cast<std::size_t>(q)].clear();
  if (q >= 0 && static_cast<std::size_t>(q) < b.releases.size()) join(t.clock, b.releases[static_cast<std::size_t>(q)]);
  if (cluster_scope && q >= 0 && static_cast<std::size_t>(q) < b.remote.size())
    join(t.clock, b.remote[static_cast<std::size_t>(q)]);
  // it knows q complete now, and whatever the releases on q knew
  t.known[static_cast<std::size_t>(b.index)] = std::max(t.known[static_cast<std::size_t>(b.index)], known_key(b, q));
  if (q >= 0 && static_cast<std::size_t>(q) < b.known.size()) join_known(t.known, b.known[static_cast<std::size_t>(q)]);
  return true;
}

// The arrive-on family: checks in the emulator's order, then release, then the arrive.
void Explorer::arrive(Thread& t, int g, Barrier& b, const Instr& in, bool remote) {
  require_live(b);
  const bool drop = in.op == Stmt::arrive_drop, no_complete = in.op == Stmt::arrive_no_complete;
  const bool with_tx = in.op == Stmt::arrive_expect_tx;
  if (with_tx) {
    check_bytes(in.arg);
    check_tx(b.tx + in.arg);
  }
  if (drop && b.expected < 1) misuse("count-out-of-range");
  if (b.pending < 1) misuse("over-arrival");
  // The missing-wait rule, on the arrive-on that completes the phase (its own expect-tx
  // counted): an earlier one leaves every wait's answer as it was (docs/semantics.md).
  if (b.phase > 0 && !b.observed && b.pending == 1 && b.tx + (with_tx ? in.arg : 0) == 0) misuse("missing-wait");
  if (no_complete && b.pending == 1 && b.tx == 0) misuse("nocomplete-completes");
  if (no_complete) t.regs.push_back(b.pending);  // the token's pending_count: before the arrive
  if (in.op == Stmt::arrive_token) t.token[in.bar] = b.phase + 1;
  if (in.op != Stmt::arrive_relaxed) {  // .relaxed: the arrive-on alone
    release(b, t.clock, remote);
    release_known(b, t.known);
    t.clock[static_cast<std::size_t>(g)] += 1;  // later accesses are not covered by this release
  }
  if (with_tx) b.tx += in.arg;  // expect-tx first, then arrive-on(1)
  if (drop) b.expected -= 1;    // this and every later phase
  b.pending -= 1;
  complete_if_done(b);
}

// Runs thread g's next step on s. False: the thread is blocked (s untouched). Throws Bug.
bool Explorer::thread_step(State& s, int g) const {
  Thread& t = s.threads[static_cast<std::size_t>(g)];
  if (t.finished) return false;
  const int cta = cta_of(g);
  if (t.pc == length(g)) {  // past its last statement in a cluster: the exit (see settle)
    exit_thread(s, g);
    sync_release(s, cta);
    rendezvous(s, g);
    return true;
  }
  if (is_init(g, t.pc)) {
    init_barrier(bar(s, cta, static_cast<int>(t.pc)), p_.counts[static_cast<std::size_t>(t.pc)]);
    t.known[init_entry(cta, static_cast<int>(t.pc))] = 1;  // visible to the initialising thread
    advance(s, g);
    return true;
  }
  const Instr in = instr_at(g, t.pc);
  Barrier unused;  // for the statements that name no barrier
  Barrier& b = uses_barrier(in.op) ? bar(s, cta, in.bar) : unused;
  switch (in.op) {
    case Stmt::arrive:
    case Stmt::arrive_drop:
    case Stmt::arrive_no_complete:
    case Stmt::arrive_expect_tx:
    case Stmt::arrive_token:
    case Stmt::arrive_relaxed: arrive(t, g, b, in); break;
    case Stmt::inval:
      require_live(b);
      b.live = 0;
      b.invalidated = 1;
      break;
    case Stmt::reinit:
      init_barrier(b, in.arg);
      t.known[init_entry(cta, in.bar)] = 1;  // visible to the initialising thread
      break;
    case Stmt::expect_tx:  // relaxed; never completes a phase
      require_live(b);
      check_bytes(in.arg);
      check_tx(b.tx + in.arg);
      if (b.pending == 0 && b.tx < 0 && b.tx + in.arg == 0) misuse("expect-tx-completes");
      b.tx += in.arg;
      break;
    case Stmt::complete_tx:  // relaxed: releases nothing
      require_live(b);
      check_bytes(in.arg);
      check_tx(b.tx - in.arg);
      b.tx -= in.arg;
      complete_if_done(b);
      break;
    case Stmt::wait:
    case Stmt::wait_cluster:
      if (!wait_proceeds(b, in.arg)) return false;
      poll(t, b, in.arg, in.op == Stmt::wait_cluster);  // true, or aliasing
      break;
    case Stmt::test_wait:
    case Stmt::try_wait: t.regs.push_back(poll(t, b, in.arg) ? 1 : 0); break;
    case Stmt::token_test_wait:  // settle() skipped it if the slot was empty
      t.regs.push_back(poll(t, b, t.token[in.bar] - 1) ? 1 : 0);
      break;
    case Stmt::token_wait:
      if (!wait_proceeds(b, t.token[in.bar] - 1)) return false;
      poll(t, b, t.token[in.bar] - 1);
      break;
    case Stmt::spin_try_wait:
      if (!poll(t, b, in.arg)) return true;  // a failed poll changes nothing: a self-loop
      break;
    case Stmt::spin_backoff_grow:  // its counter is dead after the loop: outcomes as a plain spin
      if (!poll(t, b, in.arg)) return true;
      break;
    case Stmt::spin_flag:
      if (t.sub == 0) {  // the poll
        if (!poll(t, b, in.arg)) {
          t.sub = 1;  // then the flag's load, a step of its own
          return true;
        }
        t.regs.push_back(0);
      } else {  // the load of A[0]
        if (s.atomics[0] == 0) {
          t.sub = 0;  // back to the poll (the same state as before it: a self-loop)
          return true;
        }
        t.regs.push_back(1);
      }
      break;
    case Stmt::spin_backoff:
      if (!poll(t, b, in.arg)) {
        t.sub = std::min(t.sub + 1, kMaxBackoff);  // a self-loop once n saturates
        return true;
      }
      t.regs.push_back(t.sub);
      break;
    case Stmt::spin_two_sites:  // sub 0..2: at the try_wait with n = sub; 3: at the test_wait
      if (t.sub < 3) {
        if (!poll(t, b, in.arg)) {
          t.sub += 1;  // n < 2: ++n; n == 2: on to the test_wait
          return true;
        }
        t.regs.push_back(0);
      } else {
        if (!poll(t, b, in.arg)) {
          t.sub = 2;  // back to the try_wait with n = 2 (the state it had there: a cycle)
          return true;
        }
        t.regs.push_back(1);
      }
      break;
    case Stmt::spin_counter_mem:  // sub = c, the thread's own count (no other thread reads it)
      if (poll(t, b, in.arg)) {
        t.regs.push_back(t.sub);
      } else if (t.sub + 1 < 2) {
        t.sub += 1;
        return true;
      } else {
        t.regs.push_back(2);  // gave up
      }
      break;
    case Stmt::try_then_wait:
    case Stmt::try_guard_wait:
      if (t.sub == 0) {  // the try_wait
        bool done = poll(t, b, in.arg);
        if (in.op == Stmt::try_then_wait) t.regs.push_back(done ? 1 : 0);
        if (!done) {
          t.sub = 1;  // the blocking wait is a step of its own
          return true;
        }
      } else {
        if (!wait_proceeds(b, in.arg)) return false;
        poll(t, b, in.arg);
      }
      break;
    case Stmt::status_try:  // a plain try_wait; its answer goes to the status slot
      t.status[in.bar] = 1 + 2 * (in.arg + 1) + (poll(t, b, in.arg) ? 1 : 0);
      break;
    case Stmt::status_wait: {  // settle() skipped it if the slot is empty or done
      const I phase = (t.status[in.bar] - 1) / 2 - 1;
      if (!wait_proceeds(b, phase)) return false;
      poll(t, b, phase);
      break;
    }
    case Stmt::copy: {  // the issue: the copy agent starts with everything its issuer did
      int c = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
      Copy& cp = s.copies[static_cast<std::size_t>(c)];
      cp.status = 1;
      cp.landed = 0;
      cp.clock = t.clock;
      cp.clock[static_cast<std::size_t>(n_ + c)] = 1;
      cp.proxy_fence = t.proxy_fence;
      t.clock[static_cast<std::size_t>(g)] += 1;  // the issuer's later accesses are not before the copy
      break;
    }
    case Stmt::fence_proxy: {  // fence.proxy.async.shared::cta: this CTA's slots it read so far
      for (int sl = 0; sl < kSlots; ++sl)
        for (int j = 0; j < kSlotWords; ++j) {
          Word& w = slot_word(s, cta, sl, j);
          if (w.reads[static_cast<std::size_t>(g)] > 0 && w.read_fenced[static_cast<std::size_t>(g)] == 0)
            w.read_fenced[static_cast<std::size_t>(g)] = t.clock[static_cast<std::size_t>(g)];
        }
      t.proxy_fence = t.clock;
      t.clock[static_cast<std::size_t>(g)] += 1;  // a read after the fence is not covered by it
      break;
    }
    case Stmt::load_slot: {
      Word& w = slot_word(s, cta, in.arg, 0);
      access(w, g, t.clock, false);
      t.regs.push_back(w.value);
      break;
    }
    case Stmt::store: {
      Word& w = data_word(s, cta, in.arg);
      access(w, g, t.clock, true);
      w.value = g + 1;
      break;
    }
    case Stmt::load: {
      Word& w = data_word(s, cta, in.arg);
      access(w, g, t.clock, false);
      t.regs.push_back(w.value);
      break;
    }
    case Stmt::atomic_store: s.atomics[static_cast<std::size_t>(in.arg)] = g + 1; break;
    case Stmt::atomic_load: t.regs.push_back(s.atomics[static_cast<std::size_t>(in.arg)]); break;
    case Stmt::spin_atomic:  // a load that reads 0 changes nothing: a self-loop
      if (s.atomics[static_cast<std::size_t>(in.arg)] == 0) return true;
      t.regs.push_back(s.atomics[static_cast<std::size_t>(in.arg)]);
      break;
    case Stmt::spin_atomic_pair: {  // loads of A[0], A[1], A[0], ... until one is not 0
      const std::int64_t v = s.atomics[t.sub];
      if (v == 0) {
        t.sub = 1 - t.sub;  // the next load, a step of its own (back at A[0]: a cycle)
        return true;
      }
      t.regs.push_back(t.sub);
      t.regs.push_back(v);
      break;
    }
    case Stmt::atomic_add:
      t.regs.push_back(s.atomics[static_cast<std::size_t>(in.arg)]);
      s.atomics[static_cast<std::size_t>(in.arg)] += 1;
      break;
    case Stmt::sync_threads:
      if (!t.released) return false;  // arrived, waiting for the rest of the CTA
      t.released = 0;
      break;
    case Stmt::bar_arrive:
    case Stmt::bar_sync: {
      Named& nb = s.named[static_cast<std::size_t>(cta * kNamedIds + in.bar)];
      if (t.sub == 0) {  // the arrival
        if (in.arg < 1 || in.arg > static_cast<I>(p_.threads)) misuse("named-barrier");
        if (nb.count == 0)
          nb.count = in.arg;
        else if (nb.count != in.arg)
          misuse("named-barrier");
        const I generation = nb.generation;
        if (static_cast<I>(nb.releases.size()) <= generation)
          nb.releases.resize(static_cast<std::size_t>(generation + 1), Clock(static_cast<std::size_t>(agents_), 0));
        join(nb.releases[static_cast<std::size_t>(generation)], t.clock);
        if (static_cast<I>(nb.known.size()) <= generation)
          nb.known.resize(static_cast<std::size_t>(generation + 1), std::vector<I>(t.known.size(), -1));
        join_known(nb.known[static_cast<std::size_t>(generation)], t.known);
        t.clock[static_cast<std::size_t>(g)] += 1;
        if (++nb.arrived == nb.count) {
          nb.arrived = 0;
          nb.generation += 1;
        }
        if (in.op == Stmt::bar_sync) {
          t.sub = generation + 1;  // the wait is a step of its own
          return true;
        }
        break;
      }
      if (nb.generation <= t.sub - 1) return false;  // bar_sync: its generation is not complete yet
      join(t.clock, nb.releases[static_cast<std::size_t>(t.sub - 1)]);
      join_known(t.known, nb.known[static_cast<std::size_t>(t.sub - 1)]);
      break;
    }
    case Stmt::cpa_copy: {  // the issue: its agent starts with everything its issuer did
      const int k = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
      CpAsync& c = s.cpas[static_cast<std::size_t>(k)];
      c.status = 1;
      c.group = -1;
      c.clock = t.clock;
      c.clock[static_cast<std::size_t>(cpa_base_ + k)] = 1;
      t.clock[static_cast<std::size_t>(g)] += 1;
      break;
    }
    case Stmt::cpa_commit: break;  // settle() did it when the thread reached it
    case Stmt::wg_mma: {           // thread 0's issue (settle() skips the others'): as a cp.async's
      const int k = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
      WgRead& w = s.wgs[static_cast<std::size_t>(k)];
      w.status = 1;
      w.group = -1;
      w.clock = t.clock;
      w.clock[static_cast<std::size_t>(wg_base_ + k)] = 1;
      t.clock[static_cast<std::size_t>(g)] += 1;
      break;
    }
    case Stmt::wg_commit: break;  // settle() did it (or skipped it) when the thread reached it
    case Stmt::wg_wait: {         // the CTA's groups, kept by its thread 0
      const int leader = cta_of(g) * static_cast<int>(p_.threads);
      const I waited = s.threads[static_cast<std::size_t>(leader)].wg_groups - in.arg;
      for (std::size_t k = 0; k < s.wgs.size(); ++k)
        if (wg_issuer_[k] == leader && s.wgs[k].group >= 0 && s.wgs[k].group < waited && s.wgs[k].status != 2)
          return false;  // a waited-for group has a read pending
      for (std::size_t k = 0; k < s.wgs.size(); ++k)
        if (wg_issuer_[k] == leader && s.wgs[k].group >= 0 && s.wgs[k].group < waited) join(t.clock, s.wgs[k].clock);
      break;
    }
    case Stmt::cpa_wait: {
      const I waited = t.groups - in.arg;
      for (std::size_t k = 0; k < s.cpas.size(); ++k)
        if (cpa_issuer_[k] == g && s.cpas[k].group >= 0 && s.cpas[k].group < waited && s.cpas[k].status != 2)
          return false;  // a waited-for group has a copy in flight
      for (std::size_t k = 0; k < s.cpas.size(); ++k)
        if (cpa_issuer_[k] == g && s.cpas[k].group >= 0 && s.cpas[k].group < waited) join(t.clock, s.cpas[k].clock);
      break;
    }
    case Stmt::cpa_arrive: {
      require_live(b);
      if (in.arg == 0) {  // without .noinc: pending + 1 first
        if (b.pending + 1 > kMaxCount) misuse("count-out-of-range");
        b.pending += 1;
      }
      const int k = copy_index_[static_cast<std::size_t>(g)][static_cast<std::size_t>(t.pc - prologue_len(g))];
      Arriver& a = s.arrivers[static_cast<std::size_t>(k)];
      a.status = 1;
      a.tracked = 0;
      for (std::size_t c = 0; c < s.cpas.size(); ++c)  // every prior one, landed or not
        if (cpa_issuer_[c] == g && s.cpas[c].status != 0) a.tracked |= I{1} << c;
      break;
    }
    case Stmt::parity_wait:
    case Stmt::parity_try_wait: {
      // The bit read against what the thread knows of the barrier (diff_program.hpp).
      const I k = known_phase(b, t.known[static_cast<std::size_t>(b.index)]);
      const I q = (k & 1) == (in.arg & 1) ? k : k + 1;
      if (in.op == Stmt::parity_wait) {
        if (!wait_proceeds(b, q)) return false;
        poll(t, b, q);  // true, or aliasing
      } else {
        t.regs.push_back(poll(t, b, q) ? 1 : 0);
      }
      break;
    }
    case Stmt::remote_arrive:
    case Stmt::remote_complete_tx:
    case Stmt::remote_arrive_expect_tx:
    case Stmt::multicast:
    case Stmt::cluster_arrive:
    case Stmt::cluster_arrive_relaxed:
    case Stmt::cluster_wait:
    case Stmt::fence_init:
    case Stmt::dsmem_store:
    case Stmt::dsmem_load:
    case Stmt::syncwarp:
    case Stmt::elect_sync:
    case Stmt::shfl_idx:
      if (!cluster_step(s, g, in)) return false;
      break;
    case Stmt::count_: throw std::invalid_argument("reference: bad statement");
  }
  advance(s, g);
  return true;
}

}  // namespace mbcheck::diff::ref
