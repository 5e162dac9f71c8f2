#include "tests/differential/generator_cluster.hpp"

#include <fmt/format.h>

namespace mbcheck::diff {

namespace {

struct ClusterGen {
  sim::SplitMix64& rng;
  DiffProgram& p;
  std::uint32_t pick(std::uint32_t n) { return rng.below(n); }
  bool chance(std::uint32_t percent) { return pick(100) < percent; }
  std::uint32_t first(std::uint32_t cta) const { return cta * p.threads; }                 // thread 0 of a CTA
  std::uint32_t last(std::uint32_t cta) const { return cta * p.threads + p.threads - 1; }  // its last thread
  std::vector<Instr>& at(std::uint32_t g) { return p.scripts[g]; }
  std::int32_t tx_bytes() const { return static_cast<std::int32_t>(16 * p.copy_pieces); }

  // A random statement of the cluster section, with operands that name the cluster's ranks,
  // or a plain one of the CTA.
  Instr random_instr() {
    static constexpr Stmt kPool[] = {
        Stmt::remote_arrive,  Stmt::remote_arrive,  Stmt::remote_complete_tx, Stmt::remote_arrive_expect_tx,
        Stmt::multicast,      Stmt::cluster_arrive, Stmt::cluster_wait,       Stmt::cluster_arrive_relaxed,
        Stmt::fence_init,     Stmt::dsmem_store,    Stmt::dsmem_load,         Stmt::dsmem_load,
        Stmt::arrive_relaxed, Stmt::wait,           Stmt::try_wait,           Stmt::store,
        Stmt::load,           Stmt::load_slot,      Stmt::atomic_add,         Stmt::arrive_expect_tx};
    Instr i;
    i.op = kPool[pick(sizeof kPool / sizeof kPool[0])];
    i.bar = static_cast<std::uint8_t>(pick(p.barriers));
    const std::uint32_t size = p.cluster_size();
    switch (i.op) {
      case Stmt::remote_arrive:
      case Stmt::remote_complete_tx:
      case Stmt::remote_arrive_expect_tx: i.arg = static_cast<std::int32_t>(pick(size)); break;
      case Stmt::multicast: {  // mostly the whole cluster; rarely a rank outside it (misuse)
        const std::uint32_t all = (1u << size) - 1;
        const std::uint32_t mask = chance(60) ? all : chance(95) ? 1 + pick(all) : 1u << size;
        i.arg = static_cast<std::int32_t>(mask | pick(kSlots) << 4);
        break;
      }
      case Stmt::dsmem_store:
      case Stmt::dsmem_load:
        i.bar = static_cast<std::uint8_t>(pick(size));
        i.arg = static_cast<std::int32_t>(pick(kDataWords));
        break;
      case Stmt::wait:
      case Stmt::wait_cluster:
      case Stmt::try_wait: i.arg = chance(80) ? 0 : 1; break;
      case Stmt::store:
      case Stmt::load: i.arg = static_cast<std::int32_t>(pick(kDataWords)); break;
      case Stmt::load_slot: i.arg = 0; break;
      case Stmt::arrive_expect_tx: i.arg = tx_bytes(); break;
      default: break;
    }
    return i;
  }

  // The bodies, between the setup sync and the teardown sync.
  void body(std::uint32_t which) {
    const std::uint32_t size = p.cluster_size();
    switch (which) {
      case 0: {  // remote arrivals on rank 0's barrier, one of them after a DSMEM store it guards
        p.counts = {size - 1};
        const bool data = chance(60);
        for (std::uint32_t c = 1; c < size; ++c) {
          if (data && c == 1) at(first(c)).push_back({Stmt::dsmem_store, 0, 0});
          at(first(c)).push_back({Stmt::remote_arrive, 0, 0});
        }
        at(last(0)).push_back({chance(70) ? Stmt::wait : Stmt::spin_try_wait, 0, 0});
        if (data) at(last(0)).push_back({Stmt::load, 0, 0});
        break;
      }
      case 1: {  // CTA 0 multicasts into the full barrier (0) of its row or column of the cluster (as
                 // CUTLASS multicasts A along a row and B along a column); each of those CTAs'
                 // consumer waits, reads the slot and releases rank 0's empty barrier (1), which the
                 // producer waits for
        p.barriers = 2;
        const std::uint32_t mask = size == 2 ? 3u : chance(50) ? 3u : 5u;  // 2x2: ranks {0, 1} or {0, 2}
        p.counts = {1, 2};
        for (std::uint32_t c = 0; c < size; ++c) {
          if (!(mask >> c & 1)) continue;
          auto& s = at(last(c));
          s.push_back({Stmt::arrive_expect_tx, 0, tx_bytes()});
          if (c == 0) at(first(0)).push_back({Stmt::multicast, 0, static_cast<std::int32_t>(mask)});
          s.push_back({chance(70) ? Stmt::wait : Stmt::try_then_wait, 0, 0});
          s.push_back({Stmt::load_slot, 0, 0});
          s.push_back({Stmt::remote_arrive, 1, 0});
        }
        if (chance(85)) at(first(0)).push_back({Stmt::wait, 1, 0});  // the producer's tail
        break;
      }
      case 2: {  // remote expect_tx and complete_tx on rank 0's barrier
        p.counts = {1};
        auto& s = at(first(1));
        if (chance(70)) {
          s.push_back({Stmt::remote_arrive_expect_tx, 0, 0});
        } else {
          at(last(0)).push_back({Stmt::arrive_expect_tx, 0, tx_bytes()});
        }
        for (std::uint32_t k = 0; k < p.copy_pieces; ++k) s.push_back({Stmt::remote_complete_tx, 0, 0});
        at(last(0)).push_back({Stmt::wait, 0, 0});
        break;
      }
      case 3:  // rounds of barrier.cluster with DSMEM reads of the neighbour's data
        p.counts = {1};
        for (std::uint32_t c = 0; c < size; ++c) {
          auto& s = at(first(c));
          s.push_back({Stmt::store, 0, 0});
          s.push_back({chance(80) ? Stmt::cluster_arrive : Stmt::cluster_arrive_relaxed, 0, 0});
          s.push_back({Stmt::cluster_wait, 0, 0});
          s.push_back({Stmt::dsmem_load, static_cast<std::uint8_t>((c + 1) % size), 0});
        }
        for (std::uint32_t g = 0; g < p.total_threads(); ++g)  // the others take part in the barrier
          if (g % p.threads != 0) {
            at(g).push_back({Stmt::cluster_arrive, 0, 0});
            at(g).push_back({Stmt::cluster_wait, 0, 0});
          }
        break;
      case 4:  // a DSMEM store into rank 0, then a remote arrive (or a relaxed complete_tx) there
        p.counts = {1};
        at(first(1)).push_back({Stmt::dsmem_store, 0, 1});
        if (chance(80)) {
          at(first(1)).push_back({Stmt::remote_arrive, 0, 0});
        } else {
          at(last(0)).push_back({Stmt::expect_tx, 0, 16});
          at(last(0)).push_back({Stmt::arrive, 0, 0});
          at(first(1)).push_back({Stmt::remote_complete_tx, 0, 0});
        }
        at(last(0)).push_back({Stmt::wait, 0, 0});
        at(last(0)).push_back({Stmt::load, 0, 1});
        break;
      case 5: {  // a CTA-local round on barrier 0 before a cluster sync; after it another thread
                 // of the CTA reads the barrier by its phase bit (what the sync carried decides)
        p.counts = {1};
        const bool relaxed = chance(50);
        for (std::uint32_t c = 0; c < size; ++c)
          for (std::uint32_t t = first(c); t <= last(c); ++t) {
            if (t == first(c)) {
              at(t).push_back({Stmt::arrive, 0, 0});
              at(t).push_back({Stmt::wait, 0, 0});
            }
            at(t).push_back({relaxed ? Stmt::cluster_arrive_relaxed : Stmt::cluster_arrive, 0, 0});
            at(t).push_back({Stmt::cluster_wait, 0, 0});
            if (t == last(c) && c == 0) at(t).push_back({chance(50) ? Stmt::parity_try_wait : Stmt::parity_wait, 0, 1});
          }
        break;
      }
      default: break;
    }
  }
};

}  // namespace

DiffProgram generate_cluster(sim::SplitMix64& rng) {
  DiffProgram p;
  ClusterGen g{rng, p};
  p.cluster_x = 2;
  p.cluster_y = g.chance(30) ? 2 : 1;
  p.ctas = p.cluster_size();
  p.threads = p.ctas == 4 ? 1 : 1 + g.pick(2);
  p.barriers = 1;
  p.copy_pieces = g.chance(30) ? 2 : 1;
  p.scripts.resize(p.total_threads());
  // Setup: fence.mbarrier_init and a cluster sync (relaxed as CUTLASS's, or release); each
  // part sometimes dropped. Teardown: a cluster sync before exit, sometimes dropped.
  const std::uint32_t which = g.pick(11);  // bodies 0..4 twice as often as 5, which needs 2 threads
  const std::uint32_t body = which < 10 ? which / 2 : p.threads > 1 ? 5 : 3;
  // A mixed setup: thread 0 of each CTA (the initialiser) arrives relaxed, the others release.
  const bool setup = !g.chance(10), fence = !g.chance(12), relaxed = g.chance(70), teardown = !g.chance(15);
  const bool mixed = p.threads > 1 && g.chance(15);
  if (setup)
    for (std::uint32_t t = 0; t < p.total_threads(); ++t) {
      if (fence && t % p.threads == 0) p.scripts[t].push_back({Stmt::fence_init, 0, 0});
      const bool weak = mixed ? t % p.threads == 0 : relaxed;
      p.scripts[t].push_back({weak ? Stmt::cluster_arrive_relaxed : Stmt::cluster_arrive, 0, 0});
      p.scripts[t].push_back({Stmt::cluster_wait, 0, 0});
    }
  g.body(body);
  p.counts.resize(p.barriers, 1);
  // Sometimes one thread (an early-exiting producer) skips the teardown.
  const std::uint32_t skipper = g.chance(12) ? g.pick(p.total_threads()) : p.total_threads();
  if (teardown)
    for (std::uint32_t t = 0; t < p.total_threads(); ++t) {
      if (t == skipper) continue;
      auto& s = p.scripts[t];
      s.push_back({Stmt::cluster_arrive, 0, 0});
      s.push_back({Stmt::cluster_wait, 0, 0});
    }
  for (auto& s : p.scripts)
    if (g.chance(35)) {
      const auto at = g.pick(static_cast<std::uint32_t>(s.size() + 1));
      s.insert(s.begin() + at, g.random_instr());
    }
  // Sometimes a loop of atomic loads alone (drawn last, so that older seeds keep their
  // programs): on one word or both, the words raised by threads of any CTA, or not (a
  // livelock), amid the cluster's syncs, remote arrivals and copies.
  if (g.chance(10)) {
    auto& s = p.scripts[g.pick(p.total_threads())];
    const Instr spin = g.chance(40) ? Instr{Stmt::spin_atomic_pair, 0, 0}
                                    : Instr{Stmt::spin_atomic, 0, static_cast<std::int32_t>(g.pick(kAtomicWords))};
    s.insert(s.begin() + g.pick(static_cast<std::uint32_t>(s.size() + 1)), spin);
    for (std::int32_t w = 0; w < kAtomicWords; ++w) {
      if (!g.chance(60)) continue;
      auto& raiser = p.scripts[g.pick(p.total_threads())];
      raiser.insert(raiser.begin() + g.pick(static_cast<std::uint32_t>(raiser.size() + 1)),
                    Instr{g.chance(50) ? Stmt::atomic_store : Stmt::atomic_add, 0, w});
    }
  }
  // Scopes (drawn last, as the loop above): in about half the programs each wait is at .cluster
  // scope with even odds, so a peer's remote arrive is acquired (wait_cluster) or not (wait).
  if (g.chance(50))
    for (auto& s : p.scripts)
      for (Instr& i : s)
        if (i.op == Stmt::wait && g.chance(50)) i.op = Stmt::wait_cluster;
  return p;
}

void plant_collectives(DiffProgram& p, sim::SplitMix64& rng) {
  auto pick = [&](std::uint32_t n) { return rng.below(n); };
  for (auto& s : p.scripts)
    for (Instr& i : s)
      if (i.op == Stmt::bar_arrive || i.op == Stmt::bar_sync) i = {Stmt::store, 0, static_cast<std::int32_t>(i.bar)};
  static constexpr Stmt kKinds[] = {Stmt::syncwarp, Stmt::elect_sync, Stmt::shfl_idx};
  for (std::uint32_t w = 0; w < p.total_threads() / p.warp_size; ++w) {
    std::vector<Instr> block;
    for (std::uint32_t k = 0, n = 1 + pick(2); k < n; ++k)
      block.push_back({kKinds[pick(3)], 0, static_cast<std::int32_t>(pick(p.warp_size))});
    const bool handoff = pick(100) < 50;  // lane 0 stores before, lane 1 loads after
    for (std::uint32_t lane = 0; lane < p.warp_size; ++lane) {
      auto& s = p.scripts[w * p.warp_size + lane];
      if (s.size() > 4) s.resize(4);
      std::vector<Instr> mine = block;
      if (handoff && lane == 0) mine.insert(mine.begin(), {Stmt::store, 0, 0});
      if (handoff && lane == 1) mine.push_back({Stmt::load, 0, 0});
      const auto at = pick(static_cast<std::uint32_t>(s.size() + 1));
      s.insert(s.begin() + at, mine.begin(), mine.end());
      // Sometimes the last lane exits before the warp's collectives (drawn last of the lane).
      if (lane + 1 == p.warp_size && lane > 0 && pick(100) < 40) s.resize(at);
    }
  }
}

namespace {
bool is_collective_stmt(Stmt op) { return op == Stmt::syncwarp || op == Stmt::elect_sync || op == Stmt::shfl_idx; }
}  // namespace

void add_cluster_coverage(const DiffProgram& p, std::set<std::string>& seen) {
  if (p.cluster_size() > 1) seen.insert(fmt::format("shape:cluster {}x{}", p.cluster_x, p.cluster_y));
  if (p.warp_size > 1) seen.insert(fmt::format("shape:warps of {}", p.warp_size));
  for (std::uint32_t w = 0; p.warp_size > 1 && w < p.total_threads() / p.warp_size; ++w) {
    std::uint32_t with = 0;
    for (std::uint32_t lane = 0; lane < p.warp_size; ++lane)
      for (const Instr& i : p.scripts[w * p.warp_size + lane])
        if (is_collective_stmt(i.op)) {
          ++with;
          break;
        }
    if (with > 0 && with < p.warp_size) seen.insert("pattern:a lane exited before its warp's collectives");
  }
  bool fence = false, relaxed_sync = false, remote = false, multicast = false, dsmem = false, exit_sync = false,
       load_loop = false, cluster_scope = false, cta_scope = false;
  for (const auto& s : p.scripts) {
    for (std::size_t k = 0; k < s.size(); ++k) {
      fence |= s[k].op == Stmt::fence_init;
      relaxed_sync |= s[k].op == Stmt::cluster_arrive_relaxed;
      remote |= s[k].op == Stmt::remote_arrive || s[k].op == Stmt::remote_complete_tx ||
                s[k].op == Stmt::remote_arrive_expect_tx;
      multicast |= s[k].op == Stmt::multicast;
      dsmem |= s[k].op == Stmt::dsmem_load || s[k].op == Stmt::dsmem_store;
      load_loop |= s[k].op == Stmt::spin_atomic || s[k].op == Stmt::spin_atomic_pair;
      cluster_scope |= s[k].op == Stmt::wait_cluster;
      cta_scope |= s[k].op == Stmt::wait;
    }
    exit_sync |= s.size() >= 2 && s.back().op == Stmt::cluster_wait;
  }
  if (p.cluster_size() == 1) return;
  if (remote && fence && relaxed_sync) seen.insert("pattern:init, fence, relaxed cluster sync, remote use");
  if (remote && !fence) seen.insert("pattern:remote use without fence.mbarrier_init");
  if (multicast && remote) seen.insert("pattern:multicast producer, remote empty releases");
  if (load_loop) seen.insert("pattern:a loop of atomic loads in a cluster program");
  if (remote && cluster_scope) seen.insert("pattern:a peer's release acquired at .cluster scope");
  if (remote && cta_scope) seen.insert("pattern:a peer's release and a .cta-scope wait");
  if (dsmem)
    seen.insert(exit_sync ? "pattern:DSMEM with a cluster sync before exit"
                          : "pattern:DSMEM without a cluster sync before exit");
}

}  // namespace mbcheck::diff
