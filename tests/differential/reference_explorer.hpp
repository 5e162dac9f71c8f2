// The reference enumerator's explorer (reference.hpp): its static shape, its steps
// (reference_thread.cpp: thread steps; reference_agents.cpp: the asynchronous agents, settling
// and sync_threads; reference_cluster.cpp: clusters and warp collectives) and its search
// (reference.cpp).
#pragma once

#include <unordered_map>
#include <stdexcept>
#include <utility>

#include "tests/differential/reference.hpp"
#include "tests/differential/reference_state.hpp"

namespace mbcheck::diff::ref {

class Explorer {
 public:
  Explorer(const DiffProgram& p, std::uint64_t max_states) : p_(p), max_states_(max_states) {
    if (p.ctas < 1 || p.threads < 1) throw std::invalid_argument("reference: empty shape");
    if (p.cluster_size() < 1 || p.ctas % p.cluster_size() != 0 || p.cluster_size() > 4)
      throw std::invalid_argument("reference: clusters must divide the grid");
    if ((p.warp_size != 1 && p.warp_size != 2) || p.threads % p.warp_size != 0)
      throw std::invalid_argument("reference: warps of 1 or 2 threads dividing the CTA");
    if (p.scripts.size() != p.total_threads()) throw std::invalid_argument("reference: one script per thread");
    if (p.counts.size() < p.barriers) throw std::invalid_argument("reference: one count per barrier");
    n_ = static_cast<int>(p.total_threads());
    nbars_ = static_cast<int>(p.barriers);
    copy_index_.resize(p.scripts.size());
    for (int g = 0; g < n_; ++g) {
      for (const Instr& in : p.scripts[g]) {
        if (uses_barrier(in.op)) nbars_ = std::max(nbars_, in.bar + 1);  // above `barriers`: never initialised
        if ((in.op == Stmt::bar_arrive || in.op == Stmt::bar_sync) && in.bar >= kNamedIds)
          throw std::invalid_argument("reference: named barrier id out of range");
        int limit = index_limit(in.op);
        if (limit > 0 && (in.arg < 0 || in.arg >= limit)) throw std::invalid_argument("reference: index out of range");
        if ((in.op == Stmt::bar_arrive || in.op == Stmt::bar_sync) && p.warp_size != 1)
          throw std::invalid_argument("reference: named barriers need warps of one thread");
        if (in.op == Stmt::multicast && (in.arg < 0 || (in.arg >> 4) >= kSlots))
          throw std::invalid_argument("reference: multicast slot out of range");
        if (in.op == Stmt::shfl_idx && (in.arg < 0 || in.arg >= static_cast<int>(p.warp_size)))
          throw std::invalid_argument("reference: shfl source lane out of range");
        copy_index_[g].push_back(in.op == Stmt::copy || in.op == Stmt::multicast ? static_cast<int>(copy_issuer_.size())
                                 : in.op == Stmt::cpa_copy                       ? static_cast<int>(cpa_issuer_.size())
                                 : in.op == Stmt::cpa_arrive                     ? static_cast<int>(arv_issuer_.size())
                                 : in.op == Stmt::wg_mma                         ? static_cast<int>(wg_issuer_.size())
                                                                                 : -1);
        if (in.op == Stmt::copy) add_copy(g, cta_of(g), in.bar, in.arg);
        if (in.op == Stmt::multicast)  // one agent per destination in the cluster (a bad mask never issues)
          for (int r = 0; r < static_cast<int>(p.cluster_size()); ++r)
            if (in.arg >> r & 1) add_copy(g, cluster_base(g) + r, in.bar, in.arg >> 4);
        if (in.op == Stmt::cpa_copy) cpa_issuer_.push_back(g), cpa_slot_.push_back(in.arg);
        if (in.op == Stmt::cpa_arrive) arv_issuer_.push_back(g), arv_bar_.push_back(in.bar);
        if (in.op == Stmt::wg_mma) wg_issuer_.push_back(g), wg_slot_.push_back(in.arg);
      }
    }
    if (!copy_issuer_.empty() && (p.copy_pieces < 1 || 2 * p.copy_pieces > kSlotWords))
      throw std::invalid_argument("reference: copy_pieces must fit the 32-byte slot");
    if (cpa_issuer_.size() > 62) throw std::invalid_argument("reference: too many cpa_copy statements");
    cpa_base_ = n_ + static_cast<int>(copy_issuer_.size());
    arv_base_ = cpa_base_ + static_cast<int>(cpa_issuer_.size());
    wg_base_ = arv_base_ + static_cast<int>(arv_issuer_.size());
    agents_ = wg_base_ + static_cast<int>(wg_issuer_.size());
  }

  ReferenceResult run();

 private:
  // --- the program's static shape ---
  int cta_of(int g) const { return g / static_cast<int>(p_.threads); }
  int csize() const { return static_cast<int>(p_.cluster_size()); }
  int cluster_of(int g) const { return cta_of(g) / csize(); }
  int cluster_base(int g) const { return cluster_of(g) * csize(); }  // the CTA of rank 0
  // Knowledge entries: [0, ctas * nbars) the newest phase known complete; then, at
  // init_entry(cta, b), 1 once the barrier's init is visible to the thread (else -1).
  std::size_t init_entry(int cta, int b) const { return static_cast<std::size_t>((p_.ctas + cta) * nbars_ + b); }
  std::size_t known_size() const { return static_cast<std::size_t>(2 * p_.ctas * nbars_); }
  void add_copy(int g, int dest, int b, int slot) {
    copy_issuer_.push_back(g), copy_dest_.push_back(dest), copy_bar_.push_back(b), copy_slot_.push_back(slot);
  }
  // Thread 0 of a CTA inits every barrier (one step each) before its sync_threads.
  I prologue_len(int g) const { return g % static_cast<int>(p_.threads) == 0 ? p_.barriers + 1 : 1; }
  I length(int g) const { return prologue_len(g) + static_cast<I>(p_.scripts[g].size()); }
  bool is_init(int g, I pc) const { return pc < prologue_len(g) - 1; }
  // The statement at pc (the prologue's sync as a sync_threads; not for init pcs).
  Instr instr_at(int g, I pc) const {
    I script_pc = pc - prologue_len(g);
    return script_pc < 0 ? Instr{Stmt::sync_threads, 0, 0} : p_.scripts[g][static_cast<std::size_t>(script_pc)];
  }
  bool at_sync(int g, I pc) const { return !is_init(g, pc) && instr_at(g, pc).op == Stmt::sync_threads; }

  Barrier& bar(State& s, int cta, int b) const { return s.bars[static_cast<std::size_t>(cta * nbars_ + b)]; }
  Word& data_word(State& s, int cta, int w) const { return s.data[static_cast<std::size_t>(cta * kDataWords + w)]; }
  Word& slot_word(State& s, int cta, int slot, int j) const {
    return s.slots[static_cast<std::size_t>((cta * kSlots + slot) * kSlotWords + j)];
  }

  State initial() const;

  // --- race detector: FastTrack-style, exact for a last write plus the reads since it ---
  static void access(Word& w, int agent, const Clock& c, bool write) {
    if (w.writer >= 0 && w.writer != agent && w.wepoch > c[static_cast<std::size_t>(w.writer)]) throw Bug{"race"};
    if (!write) {
      w.reads[static_cast<std::size_t>(agent)] = c[static_cast<std::size_t>(agent)];
      if (static_cast<std::size_t>(agent) < w.read_fenced.size()) w.read_fenced[static_cast<std::size_t>(agent)] = 0;
      return;
    }
    for (std::size_t a = 0; a < w.reads.size(); ++a)
      if (static_cast<int>(a) != agent && w.reads[a] > c[a]) throw Bug{"race"};
    w.writer = agent;
    w.wepoch = c[static_cast<std::size_t>(agent)];
    w.wasync = 0;  // a bulk copy's landing sets it after
    std::fill(w.reads.begin(), w.reads.end(), 0);
    std::fill(w.read_fenced.begin(), w.read_fenced.end(), 0);
  }
  // A bulk copy's landing overwrites w with the async proxy (PTX ISA 8.9.5: a generic read and
  // an async-proxy write are ordered only through a proxy fence): each thread's read of w must be
  // followed by its fence.proxy.async that the copy knows of (the reader's fence before its
  // release), or be known to the issuer's latest fence before the issue, or to the latest fence
  // of another thread of the reader's CTA that the copy knows of.
  void async_overwrite(const State& s, const Word& w, const Copy& cp) const {
    for (std::size_t a = 0; a < w.read_fenced.size(); ++a) {
      const I read = w.reads[a];
      if (read == 0 || read > cp.clock[a]) continue;  // none, or unordered (a race access() reports)
      if (w.read_fenced[a] > 0 && cp.clock[a] >= w.read_fenced[a]) continue;  // the reader's
      if (!cp.proxy_fence.empty() && cp.proxy_fence[a] >= read) continue;     // the issuer's
      bool by_other = false;
      for (std::size_t x = 0; x < s.threads.size() && !by_other; ++x) {
        const Clock& f = s.threads[x].proxy_fence;
        by_other = x != a && !f.empty() && cta_of(static_cast<int>(x)) == cta_of(static_cast<int>(a)) && f[a] >= read &&
                   cp.clock[x] > f[x];
      }
      if (!by_other) throw Bug{"race"};
    }
  }

  // --- thread steps ---
  // Any poll, or the run of a blocking wait, for phase q: the answer, acquiring on true.
  static bool poll(Thread& t, Barrier& b, I q, bool cluster_scope = false);

  // The arrive-on family: checks in the emulator's order, then release, then the arrive.
  static void arrive(Thread& t, int g, Barrier& b, const Instr& in, bool remote = false);

  // Runs thread g's next step on s. False: the thread is blocked (s untouched). Throws Bug.
  bool thread_step(State& s, int g) const;

  // Moves thread g past its statement, then lets the CTA's sync_threads release if it can.
  void advance(State& s, int g) const;

  // A token wait on an empty slot, or a status wait whose try found its phase complete (or
  // with no status), is a no-op, not a scheduling point: skip it as part of the step that
  // reached it. Past the last statement the thread has exited.
  void settle(State& s, int g) const;
  void exit_thread(State& s, int g) const;  // the thread exits (settle, or a step of its own)

  // When every thread of the CTA that has not exited stands at a sync_threads it has not yet
  // been released from, all of them are released together, with the join of their clocks.
  void sync_release(State& s, int cta) const;

  // One piece of copy c lands: it writes its 2 words, releases its own writes (and nothing
  // of its issuer's) on the phase it lands in, then does complete_tx(16).
  bool copy_step(State& s, int c) const;

  // cp.async instance k lands: it writes words 0..1 of its slot.
  bool cpa_step(State& s, int k) const;

  // The read agent of wg_mma instance k: reads words 0..1 of its slot through the async
  // proxy; a word last written by the generic proxy (no fence in these programs) is a race.
  bool wg_step(State& s, int k) const;

  // Arrive agent k: once its copies landed, an arrive-on releasing their writes only.
  bool arrive_step(State& s, int k) const;

  // --- clusters and warp collectives (reference_cluster.cpp) ---
  // Thread g's step of a statement of diff_program.hpp's cluster section (not advancing it).
  bool cluster_step(State& s, int g, const Instr& in) const;
  // The CTA of rank `rank` in g's cluster (misuse cluster outside it).
  int target_cta(int g, I rank) const;
  // Checks and records a use of CTA c's shared memory by `agent` (of another CTA) at `epoch`:
  // a counter op on barrier b (b >= 0) goes to the barrier's phase, a data use to s.uses.
  void peer_use(State& s, int c, int agent, I epoch, int b) const;
  // Thread g exits: joins its clock into its CTA's exits; the CTA's last exit checks lifetime.
  void on_exit(State& s, int g) const;
  // Releases the warp of g from its collective and completes its cluster's barrier phase when
  // they can.
  void rendezvous(State& s, int g) const;

  // --- the search ---
  // The id of s, adding it (and scheduling its expansion) when new.
  std::uint32_t intern(State& s) {
    std::string key = encode(s);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    if (keys_.size() >= max_states_) {
      result_.complete = false;
      return 0;
    }
    auto id = static_cast<std::uint32_t>(keys_.size());
    auto [pos, _] = ids_.emplace(std::move(key), id);
    keys_.push_back(&pos->first);
    ends_.push_back(0);
    stack_.push_back(id);
    return id;
  }

  void expand(std::uint32_t id);

  // Backward reachability from the ends over the reverse edges: a state that reaches none is
  // stuck forever in a cycle of spinning (livelock).
  void find_livelock();

  void note_bug(const std::string& kind);

  const DiffProgram& p_;
  std::uint64_t max_states_;
  int n_ = 0;       // threads in all
  int nbars_ = 0;   // barriers per CTA, counting never-initialised ones named by scripts
  int agents_ = 0;  // threads, copy statements, cpa_copy statements, cpa_arrive statements, wg_mma statements
  int cpa_base_ = 0, arv_base_ = 0;  // the first cp.async agent, the first arrive agent
  int wg_base_ = 0;                  // the first wgmma read agent
  std::vector<int> cpa_issuer_, cpa_slot_, arv_issuer_, arv_bar_, wg_issuer_, wg_slot_;
  std::vector<std::vector<int>> copy_index_;           // [g][script pc]: its copy's index, or -1
  std::vector<int> copy_issuer_;                       // by copy index: the issuing thread
  std::vector<int> copy_dest_, copy_bar_, copy_slot_;  // by copy index: destination CTA, its barrier, slot

  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<const std::string*> keys_;  // by id, into ids_
  std::vector<char> ends_;                // by id: a completed/deadlocked state, or one a bug step leaves
  std::vector<std::uint32_t> stack_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges_;  // (from, to)
  ReferenceResult result_;
};

}  // namespace mbcheck::diff::ref
