#include "tests/differential/generator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sim/explore/strategy.hpp"
#include "tests/differential/generator_cluster.hpp"
#include "tests/differential/generator_cutlass.hpp"

namespace mbcheck::diff {

namespace {

struct Gen {
  sim::SplitMix64 rng;
  DiffProgram p;
  std::uint32_t pick(std::uint32_t n) { return rng.below(n); }
  bool chance(std::uint32_t percent) { return pick(100) < percent; }
  std::int32_t phase() {  // mostly the first two phases; sometimes the one before init
    const std::uint32_t r = pick(100);
    return r < 70 ? 0 : r < 92 ? 1 : -1;
  }
  std::int32_t bytes() { return static_cast<std::int32_t>(16 * (chance(70) ? p.copy_pieces : 1)); }

  Instr random_instr() {
    Instr i;
    i.bar = static_cast<std::uint8_t>(pick(p.barriers));
    // Weights: barrier arrivals and waits dominate, as in real protocols.
    static constexpr Stmt kPool[] = {Stmt::arrive,
                                     Stmt::arrive,
                                     Stmt::arrive,
                                     Stmt::arrive_relaxed,
                                     Stmt::arrive_relaxed,
                                     Stmt::arrive_drop,
                                     Stmt::arrive_no_complete,
                                     Stmt::arrive_expect_tx,
                                     Stmt::arrive_expect_tx,
                                     Stmt::expect_tx,
                                     Stmt::complete_tx,
                                     Stmt::arrive_token,
                                     Stmt::wait,
                                     Stmt::wait,
                                     Stmt::test_wait,
                                     Stmt::try_wait,
                                     Stmt::try_wait,
                                     Stmt::token_test_wait,
                                     Stmt::token_wait,
                                     Stmt::spin_try_wait,
                                     Stmt::spin_try_wait,
                                     Stmt::spin_backoff,
                                     Stmt::try_then_wait,
                                     Stmt::status_try,
                                     Stmt::status_wait,
                                     Stmt::copy,
                                     Stmt::copy,
                                     Stmt::load_slot,
                                     Stmt::store,
                                     Stmt::load,
                                     Stmt::atomic_store,
                                     Stmt::atomic_load,
                                     Stmt::atomic_add,
                                     Stmt::sync_threads,
                                     Stmt::bar_arrive,
                                     Stmt::bar_sync,
                                     Stmt::parity_wait,
                                     Stmt::parity_wait,
                                     Stmt::parity_try_wait,
                                     Stmt::cpa_copy,
                                     Stmt::cpa_commit,
                                     Stmt::cpa_wait,
                                     Stmt::cpa_arrive,
                                     Stmt::wg_mma,
                                     Stmt::wg_commit,
                                     Stmt::wg_wait};
    i.op = kPool[pick(sizeof kPool / sizeof kPool[0])];
    switch (i.op) {
      case Stmt::arrive_expect_tx:
      case Stmt::expect_tx:
      case Stmt::complete_tx: i.arg = bytes(); break;
      case Stmt::wait:
      case Stmt::test_wait:
      case Stmt::try_wait:
      case Stmt::spin_try_wait:
      case Stmt::spin_backoff:
      case Stmt::try_then_wait:
      case Stmt::status_try: i.arg = phase(); break;
      case Stmt::copy:
      case Stmt::load_slot: i.arg = static_cast<std::int32_t>(pick(kSlots)); break;
      case Stmt::store:
      case Stmt::load: i.arg = static_cast<std::int32_t>(pick(kDataWords)); break;
      case Stmt::atomic_store:
      case Stmt::atomic_load:
      case Stmt::atomic_add: i.arg = static_cast<std::int32_t>(pick(kAtomicWords)); break;
      case Stmt::parity_wait:
      case Stmt::parity_try_wait:
      case Stmt::cpa_wait:
      case Stmt::wg_wait:
      case Stmt::cpa_arrive: i.arg = static_cast<std::int32_t>(pick(2)); break;
      case Stmt::cpa_copy:
      case Stmt::wg_mma: i.arg = static_cast<std::int32_t>(pick(kSlots)); break;
      case Stmt::bar_arrive:
      case Stmt::bar_sync: {
        // the whole CTA mostly; fewer threads (surplus arrivals start the next generation);
        // rarely a count past the CTA (misuse)
        i.bar = static_cast<std::uint8_t>(pick(kNamedIds));
        const std::uint32_t r = pick(100);
        i.arg = static_cast<std::int32_t>(r < 60 ? p.threads : r < 92 ? 1 + pick(p.threads) : p.threads + 1);
        break;
      }
      default: break;
    }
    return i;
  }
};

// Patterns users write, planted into some programs so that every run covers them.
void plant_pattern(Gen& g, std::uint32_t which) {
  auto& s = g.p.scripts;
  const std::uint32_t a = 0, b = 1 % g.p.total_threads();
  const std::int32_t q = 0;
  switch (which) {
    case 0:  // a spin loop waiting for another thread's arrive
      s[a].push_back({Stmt::arrive, 0, 0});
      s[b].push_back({g.chance(50) ? Stmt::spin_try_wait : Stmt::spin_backoff, 0, q});
      break;
    case 19:  // a spin loop over two poll sites, or one whose count lives in memory, waiting for
              // another thread's arrive (or for a phase nobody completes: a livelock, or the
              // counted loop's give-up)
      if (g.chance(80)) s[a].push_back({Stmt::arrive, 0, 0});
      s[b].push_back({g.chance(50) ? Stmt::spin_two_sites : Stmt::spin_counter_mem, 0, q});
      break;
    case 20: {           // a stage read with ordinary loads, released, refilled by a bulk copy: a proxy fence
                         // by the reader before its release, by the issuer after (or before) its wait, or
                         // none (PTX: a race)
      g.p.barriers = 2;  // full (0) and empty (1), one arrival each
      g.p.counts = {1, 1};
      const std::int32_t bytes = static_cast<std::int32_t>(16 * g.p.copy_pieces);
      const std::uint32_t where = g.pick(100);
      s[b].push_back({Stmt::arrive, 0, 0});  // the stage's first contents: its initial words
      if (where >= 85 && where < 92) s[b].push_back({Stmt::fence_proxy, 0, 0});  // before the wait: orders nothing
      s[b].push_back({Stmt::wait, 1, 0});
      if (where >= 70 && where < 85) s[b].push_back({Stmt::fence_proxy, 0, 0});
      s[b].push_back({Stmt::arrive_expect_tx, 0, bytes});
      s[b].push_back({Stmt::copy, 0, 0});
      s[a].push_back({Stmt::wait, 0, 0});
      s[a].push_back({Stmt::load_slot, 0, 0});
      if (where < 55) s[a].push_back({Stmt::fence_proxy, 0, 0});
      s[a].push_back({Stmt::arrive, 1, 0});
      if (where >= 55 && where < 70) s[a].push_back({Stmt::fence_proxy, 0, 0});  // after the release: nothing
      break;
    }
    case 1:  // a next-phase poll (or wait) after one's own arrive
      s[a].push_back({Stmt::arrive, 0, 0});
      s[b].push_back({Stmt::arrive, 0, 0});
      s[b].push_back({g.chance(50) ? Stmt::try_wait : Stmt::wait, 0, 1});
      break;
    case 2:  // expect_tx racing a completing arrive
      s[a].push_back({Stmt::arrive, 0, 0});
      s[a].push_back({Stmt::try_wait, 0, 0});
      s[b].push_back({Stmt::expect_tx, 0, 16});
      s[b].push_back({Stmt::complete_tx, 0, 16});
      break;
    case 3:  // producer: arrive.expect_tx + copy; consumer: wait then read the slot
      s[a].push_back({Stmt::arrive_expect_tx, 0, static_cast<std::int32_t>(16 * g.p.copy_pieces)});
      s[a].push_back({Stmt::copy, 0, 0});
      s[b].push_back({g.chance(50) ? Stmt::wait : Stmt::try_then_wait, 0, 0});
      s[b].push_back({Stmt::load_slot, 0, 0});
      break;
    case 4:  // guarded data: store, release-arrive; the other waits and loads
      s[a].push_back({Stmt::store, 0, 0});
      s[a].push_back({g.chance(70) ? Stmt::arrive : Stmt::complete_tx, 0, 16});
      s[b].push_back({Stmt::spin_try_wait, 0, 0});
      s[b].push_back({Stmt::load, 0, 0});
      break;
    case 5:  // negative tx: the copy lands before the expect
      s[a].push_back({Stmt::copy, 0, 1});
      s[b].push_back({Stmt::arrive_expect_tx, 0, static_cast<std::int32_t>(16 * g.p.copy_pieces)});
      break;
    case 6:  // rounds of arrive; wait on one barrier (a CTA-wide sync written with an mbarrier)
      for (std::uint32_t t = 0; t < g.p.threads; ++t)
        for (std::int32_t r = 0; r < 2; ++r) {
          s[t].push_back({Stmt::arrive, 0, 0});
          s[t].push_back({Stmt::wait, 0, r});
        }
      break;
    case 7:  // token polls
      s[a].push_back({Stmt::arrive_token, 0, 0});
      s[a].push_back({g.chance(50) ? Stmt::token_test_wait : Stmt::token_wait, 0, 0});
      s[b].push_back({Stmt::arrive, 0, 0});
      break;
    case 8: {  // CUTLASS's consumer_try_wait / consumer_wait: a try status, maybe work, its wait
      s[a].push_back({Stmt::arrive_expect_tx, 0, static_cast<std::int32_t>(16 * g.p.copy_pieces)});
      s[a].push_back({Stmt::copy, 0, 0});
      s[b].push_back({Stmt::status_try, 0, 0});
      static constexpr Stmt kBetween[] = {Stmt::load_slot, Stmt::store, Stmt::arrive, Stmt::try_wait};
      if (g.chance(50)) s[b].push_back({kBetween[g.pick(4)], 0, 0});
      s[b].push_back({Stmt::status_wait, 0, 0});
      s[b].push_back({Stmt::load_slot, 0, 0});
      break;
    }
    case 9:  // straight-line polls on a phase another thread completes
      s[a].push_back({Stmt::arrive, 0, 0});
      for (int k = 0; k < 3; ++k) s[b].push_back({g.chance(50) ? Stmt::test_wait : Stmt::try_wait, 0, q});
      break;
    case 10:  // a named-barrier handoff: store, bar.arrive; the other bar.syncs and loads
      s[a].push_back({Stmt::store, 0, 0});
      s[a].push_back({Stmt::bar_arrive, 0, 2});
      s[b].push_back({Stmt::bar_sync, 0, 2});
      s[b].push_back({Stmt::load, 0, 0});
      break;
    case 12: {  // CUTLASS's pipeline with phase bits: producer waits empty (bit 1 first), fills,
                // arrives full; the consumer waits full (bit 0 first), reads, arrives empty
      const std::int32_t rounds = g.chance(50) ? 2 : 1;
      g.p.barriers = 2;  // full (0) and empty (1), one arrival each
      g.p.counts = {1, 1};
      for (std::int32_t r = 0; r < rounds; ++r) {
        s[a].push_back({Stmt::parity_wait, 1, 1 - r % 2});
        s[a].push_back({Stmt::store, 0, 0});
        s[a].push_back({Stmt::arrive, 0, 0});
        s[b].push_back({Stmt::parity_wait, 0, r % 2});
        s[b].push_back({Stmt::load, 0, 0});
        s[b].push_back({Stmt::arrive, 1, 0});
      }
      break;
    }
    case 13:              // cp.async then its mbarrier arrive (.noinc, or the +1 form beside an arrive); the
                          // other thread waits and reads the slot
      g.p.counts[0] = 1;  // the one arrival: the async one (.noinc) or the plain one
      s[a].push_back({Stmt::cpa_copy, 0, 0});
      if (g.chance(50)) {
        s[a].push_back({Stmt::cpa_arrive, 0, 1});
      } else {
        s[a].push_back({Stmt::cpa_arrive, 0, 0});
        s[a].push_back({Stmt::arrive, 0, 0});
      }
      s[b].push_back({Stmt::wait, 0, 0});
      s[b].push_back({Stmt::load_slot, 0, 0});
      break;
    case 18: {  // FlashAttention-3's paged-KV producers (PipelineAsync over cp.async): each copies its
                // slot by cp.async, has barrier 0 track it by the +1 form and arrives; the last
                // thread waits and reads slot 0. Sometimes one thing is off: an arrival before
                // its increment, an arrival missing, a count one short, or an increment (with
                // its copy) by a thread that does not arrive, whose arrive-on may land late
      const std::uint32_t total = g.p.threads;  // CTA 0's (barrier 0 is per CTA)
      const std::uint32_t producers = std::min<std::uint32_t>(total, 2 + g.pick(2));
      const std::uint32_t flaw = g.pick(100);
      g.p.counts[0] = flaw >= 84 && flaw < 92 ? producers - 1 : producers;
      for (std::uint32_t t = 0; t < producers; ++t) {
        if (t < static_cast<std::uint32_t>(kSlots)) s[t].push_back({Stmt::cpa_copy, 0, static_cast<std::int32_t>(t)});
        const bool arrive_first = flaw >= 70 && flaw < 77 && t == 0;
        const bool missing = flaw >= 77 && flaw < 84 && t == producers - 1;
        if (arrive_first) s[t].push_back({Stmt::arrive, 0, 0});
        s[t].push_back({Stmt::cpa_arrive, 0, 0});
        if (!arrive_first && !missing) s[t].push_back({Stmt::arrive, 0, 0});
      }
      if (flaw >= 92 && total > producers) {
        s[producers].push_back({Stmt::cpa_copy, 0, 1});  // (slot 1 again when a producer copies it: a race)
        s[producers].push_back({Stmt::cpa_arrive, 0, 0});
      }
      s[total - 1].push_back({Stmt::wait, 0, 0});
      s[total - 1].push_back({Stmt::load_slot, 0, 0});
      break;
    }
    case 14:  // cp.async groups: two groups, wait_group 1 or 0, read the older or newer slot
      s[a].push_back({Stmt::cpa_copy, 0, 0});
      s[a].push_back({Stmt::cpa_commit, 0, 0});
      s[a].push_back({Stmt::cpa_copy, 0, 1});
      s[a].push_back({Stmt::cpa_commit, 0, 0});
      s[a].push_back({Stmt::cpa_wait, 0, static_cast<std::int32_t>(g.pick(2))});
      s[a].push_back({Stmt::load_slot, 0, static_cast<std::int32_t>(g.pick(kSlots))});
      break;
    case 15: {           // a wgmma consumer: wait full, MMA on the slot, commit, (wait_group 0,) release
                         // empty; the producer refills the slot by a bulk copy once empty completes
      g.p.barriers = 2;  // full (0) and empty (1), one arrival each
      g.p.counts = {1, 1};
      const std::int32_t bytes = static_cast<std::int32_t>(16 * g.p.copy_pieces);
      s[b].push_back({Stmt::arrive_expect_tx, 0, bytes});
      s[b].push_back({Stmt::copy, 0, 0});
      s[b].push_back({Stmt::wait, 1, 0});
      s[b].push_back({Stmt::arrive_expect_tx, 0, bytes});
      s[b].push_back({Stmt::copy, 0, 0});
      s[a].push_back({Stmt::wait, 0, 0});
      s[a].push_back({Stmt::wg_mma, 0, 0});
      s[a].push_back({Stmt::wg_commit, 0, 0});
      if (g.chance(60)) s[a].push_back({Stmt::wg_wait, 0, 0});
      s[a].push_back({Stmt::arrive, 1, 0});
      break;
    }
    case 16: {  // landings from several threads before or after the arming (CUTLASS's tests without
                // TMA multicast this way): one arrive.expect_tx of their sum per round; the
                // landers of a later round wait for the round before (or not: they may land in
                // it); sometimes the sum is off by one landing
      const std::uint32_t total = g.p.total_threads();
      if (total < 2) break;
      g.p.counts[0] = 1;
      const std::uint32_t landers = std::min<std::uint32_t>(total - 1, 2 + g.pick(2));
      const std::int32_t rounds = g.chance(50) ? 2 : 1;
      const std::int32_t off = g.chance(15) ? (g.chance(50) ? 16 : -16) : 0;
      for (std::int32_t r = 0; r < rounds; ++r) {
        const std::int32_t sum = static_cast<std::int32_t>(16 * landers) + (r == rounds - 1 ? off : 0);
        s[a].push_back({Stmt::arrive_expect_tx, 0, sum});
        s[a].push_back({Stmt::wait, 0, r});
        for (std::uint32_t l = 0; l < landers; ++l) {
          auto& script = s[1 + l % (total - 1)];
          if (r > 0 && g.chance(80)) script.push_back({Stmt::wait, 0, r - 1});
          script.push_back({Stmt::complete_tx, 0, 16});
        }
      }
      break;
    }
    case 17: {  // a barrier re-initialised: one thread stores and arrives on phase 0 of barrier
                // 0's first incarnation (count 2: it may never complete) and tells the other
                // through barrier 1 (relaxed: ordering nothing, or a release), who invalidates
                // barrier 0, inits it again and completes, waits and reads in its new phase 0
      g.p.barriers = 2;
      g.p.counts = {1 + g.pick(2), 1};
      s[b].push_back({Stmt::store, 0, 0});
      s[b].push_back({Stmt::arrive, 0, 0});
      s[b].push_back({g.chance(50) ? Stmt::arrive_relaxed : Stmt::arrive, 1, 0});
      const std::uint32_t first = g.pick(100);  // the hand-off, or the old phase 0 itself
      if (first < 55) s[a].push_back({first < 40 ? Stmt::wait : Stmt::spin_try_wait, 1, 0});
      if (first >= 55 && first < 85) s[a].push_back({Stmt::wait, 0, 0});
      s[a].push_back({Stmt::inval, 0, 0});
      s[a].push_back({Stmt::reinit, 0, g.chance(75) ? 1 : 2});
      s[a].push_back({Stmt::arrive, 0, 0});
      const std::uint32_t last = g.pick(100);  // parity: read against the new incarnation only
      if (last < 35)
        s[a].push_back({Stmt::wait, 0, 0});
      else if (last < 60)
        s[a].push_back({Stmt::spin_try_wait, 0, 0});
      else
        s[a].push_back({Stmt::parity_wait, 0, static_cast<std::int32_t>(g.pick(2))});
      s[a].push_back({Stmt::load, 0, 0});
      break;
    }
    case 11:  // rounds of bar.sync over the CTA with data between
      for (std::uint32_t t = 0; t < g.p.threads; ++t) {
        s[t].push_back({Stmt::store, 0, static_cast<std::int32_t>(t % kDataWords)});
        s[t].push_back({Stmt::bar_sync, 1, static_cast<std::int32_t>(g.p.threads)});
        s[t].push_back({Stmt::load, 0, static_cast<std::int32_t>((t + 1) % kDataWords)});
        s[t].push_back({Stmt::bar_sync, 1, static_cast<std::int32_t>(g.p.threads)});
      }
      break;
    default: break;
  }
}

// A protocol that is often correct: every barrier gets exactly its count of arrivals per
// phase for one or two phases (some by arrive.expect_tx with the copy that pays for it), and
// threads wait (by any of the wait forms) only for phases whose arrivals they do not hold
// up. Extra random statements are mixed in later, which may break it again.
void plant_protocol(Gen& g) {
  DiffProgram& p = g.p;
  const std::uint32_t n = p.total_threads();
  for (std::uint32_t b = 0; b < p.barriers; ++b) {
    const std::uint32_t count = p.counts[b];
    const std::int32_t phases = g.chance(40) ? 2 : 1;
    for (std::int32_t phase = 0; phase < phases; ++phase) {
      // Arrivals of this phase, by threads of CTA 0 (barriers are per CTA: each CTA runs the same).
      for (std::uint32_t k = 0; k < count; ++k) {
        const std::uint32_t t = g.pick(p.threads);
        auto& s = p.scripts[t];
        if (phase > 0)
          s.push_back({g.chance(50) ? Stmt::wait : Stmt::spin_try_wait, static_cast<std::uint8_t>(b), phase - 1});
        if (g.chance(25)) {
          const auto bytes = static_cast<std::int32_t>(16 * p.copy_pieces);
          s.push_back({Stmt::arrive_expect_tx, static_cast<std::uint8_t>(b), bytes});
          s.push_back({Stmt::copy, static_cast<std::uint8_t>(b), static_cast<std::int32_t>(g.pick(kSlots))});
        } else {
          s.push_back({g.chance(80) ? Stmt::arrive : Stmt::arrive_token, static_cast<std::uint8_t>(b), 0});
        }
      }
      // A waiter of this phase.
      const std::uint32_t w = g.pick(p.threads);
      static constexpr Stmt kWaits[] = {Stmt::wait,          Stmt::spin_try_wait,    Stmt::spin_backoff,
                                        Stmt::try_then_wait, Stmt::try_wait,         Stmt::test_wait,
                                        Stmt::spin_flag,     Stmt::spin_backoff_grow};
      if (g.chance(15)) {  // the try-status pair, as CUTLASS's consumers wait
        p.scripts[w].push_back({Stmt::status_try, static_cast<std::uint8_t>(b), phase});
        p.scripts[w].push_back({Stmt::status_wait, static_cast<std::uint8_t>(b), 0});
      } else {
        const Stmt kind = kWaits[g.pick(8)];
        p.scripts[w].push_back({kind, static_cast<std::uint8_t>(b), phase});
        // A flag another thread may raise (before or instead of its part of the phase).
        if (kind == Stmt::spin_flag && g.chance(60)) p.scripts[g.pick(p.threads)].push_back({Stmt::atomic_store, 0, 0});
      }
      if (g.chance(40)) p.scripts[w].push_back({g.chance(50) ? Stmt::load_slot : Stmt::load, 0, 0});
    }
  }
  // With two CTAs, the second runs only the random statements added later: two copies of a
  // protocol multiply its classes without adding a shape.
  (void)n;
}

// A program that re-initialises a barrier has no statement whose meaning across incarnations
// the reference leaves undefined (diff_program.hpp, reinit): each becomes a plain arrive.
// (Phase-bit waits stay: blocked across another thread's re-init, both read the bit again.)
void keep_reinit_defined(DiffProgram& p) {
  const bool reinit = std::any_of(p.scripts.begin(), p.scripts.end(), [](const std::vector<Instr>& script) {
    return std::any_of(script.begin(), script.end(), [](const Instr& i) { return i.op == Stmt::reinit; });
  });
  if (!reinit) return;
  for (auto& script : p.scripts)
    for (Instr& i : script) switch (i.op) {
        case Stmt::arrive_token:
        case Stmt::token_test_wait:
        case Stmt::token_wait:
        case Stmt::status_try:
        case Stmt::status_wait:
        case Stmt::cpa_arrive: i = Instr{Stmt::arrive, i.bar, 0}; break;
        default: break;
      }
}

}  // namespace

DiffProgram generate(std::uint64_t seed) {
  Gen g{sim::SplitMix64(seed * 0x9e3779b97f4a7c15ull + 17), {}};
  DiffProgram& p = g.p;
  // A third of the programs are cluster programs (generator_cluster.cpp); of the others, one
  // in five runs with warps of two lanes and gets warp collectives.
  const std::uint32_t kind = g.pick(100);
  if (kind < 34) return generate_cluster(g.rng);
  const bool warps = kind < 48;
  p.ctas = !warps && g.chance(15) ? 2 : 1;
  p.threads = warps ? (g.chance(25) ? 4 : 2) : p.ctas == 2 ? 2 : 2 + g.pick(2);
  p.warp_size = warps ? 2 : 1;
  p.barriers = 1 + (g.chance(35) ? 1 : 0);
  for (std::uint32_t b = 0; b < p.barriers; ++b) p.counts.push_back(1 + g.pick(p.threads));
  p.copy_pieces = g.chance(30) ? 2 : 1;
  p.scripts.resize(p.total_threads());
  const std::uint32_t mode = g.pick(100);
  std::uint32_t open_scripts = static_cast<std::uint32_t>(p.scripts.size());  // may take random statements
  if (mode < 45) {
    plant_protocol(g);
  } else if (mode < 75) {
    // (patterns 16, 17, 18, 19 and 20 take half of pattern 5's, 2's, 13's, 0's and 15's draws, and CUTLASS's
    // shapes (generator_cutlass.cpp) half of pattern 3's and 8's, so that older seeds keep
    // their programs)
    const std::uint32_t which = g.pick(16);
    if (which == 3 && p.ctas == 1 && !warps && g.chance(50))
      open_scripts = plant_epilogue_load(p, g.rng);
    else if (which == 8 && g.chance(50))
      plant_bool_try_consumer(p, g.rng);
    else
      plant_pattern(g, which == 5 && g.chance(50)    ? 16
                       : which == 2 && g.chance(50)  ? 17
                       : which == 13 && g.chance(50) ? 18
                       : which == 0 && g.chance(50)  ? 19
                       : which == 15 && g.chance(50) ? 20
                                                     : which);
  }
  const bool pattern6 = !p.scripts[0].empty() && p.scripts[0].size() == 4 && p.scripts[0][1].op == Stmt::wait &&
                        p.scripts[0][3].op == Stmt::wait;
  if (pattern6) p.counts[0] = p.threads;
  const bool planted = mode < 75;
  for (auto& script : p.scripts)
    if (script.size() > 6) script.resize(6);
  for (auto& script : p.scripts) {
    if (&script - p.scripts.data() >= static_cast<std::ptrdiff_t>(open_scripts)) break;
    const std::uint32_t extra = planted ? (g.chance(60) ? 0 : 1) : 1 + g.pick(3);
    for (std::uint32_t i = 0; i < extra && script.size() < 6; ++i) {
      Instr in = g.random_instr();
      const auto at = script.empty() ? 0 : g.pick(static_cast<std::uint32_t>(script.size() + 1));
      script.insert(script.begin() + at, in);
    }
  }
  if (warps) plant_collectives(p, g.rng);
  // Rarely, a re-init anywhere (drawn last, so that the rest of the program is the one older
  // seeds gave): an inval and an init of one barrier at a random point of a random thread,
  // amid whatever that program does with it (copies in flight, spins, waiters, named barriers).
  if (g.chance(4)) {
    auto& script = p.scripts[g.pick(p.total_threads())];
    const auto at = g.pick(static_cast<std::uint32_t>(script.size() + 1));
    const auto b = static_cast<std::uint8_t>(g.pick(p.barriers));
    const auto count = static_cast<std::int32_t>(1 + g.pick(p.threads));
    script.insert(script.begin() + at, {Instr{Stmt::inval, b, 0}, Instr{Stmt::reinit, b, count}});
  }
  // Sometimes a loop of atomic loads alone (drawn last too): a thread spins until A[w] is not
  // 0, and mostly another thread (or itself, later: a livelock) raises it at a random point.
  if (g.chance(8)) {
    const auto w = static_cast<std::int32_t>(g.pick(kAtomicWords));
    auto& script = p.scripts[g.pick(p.total_threads())];
    script.insert(script.begin() + g.pick(static_cast<std::uint32_t>(script.size() + 1)),
                  Instr{Stmt::spin_atomic, 0, w});
    if (g.chance(75)) {
      auto& raiser = p.scripts[g.pick(p.total_threads())];
      const Stmt raise = g.chance(50) ? Stmt::atomic_store : Stmt::atomic_add;
      raiser.insert(raiser.begin() + g.pick(static_cast<std::uint32_t>(raiser.size() + 1)), Instr{raise, 0, w});
    }
  }
  // Sometimes a loop of atomic loads over both words (drawn after the above, for the same
  // reason): each word raised by some thread, or not (both unraised: a livelock).
  if (g.chance(5)) {
    auto& script = p.scripts[g.pick(p.total_threads())];
    script.insert(script.begin() + g.pick(static_cast<std::uint32_t>(script.size() + 1)),
                  Instr{Stmt::spin_atomic_pair, 0, 0});
    for (std::int32_t w = 0; w < kAtomicWords; ++w) {
      if (!g.chance(60)) continue;
      auto& raiser = p.scripts[g.pick(p.total_threads())];
      const Stmt raise = g.chance(50) ? Stmt::atomic_store : Stmt::atomic_add;
      raiser.insert(raiser.begin() + g.pick(static_cast<std::uint32_t>(raiser.size() + 1)), Instr{raise, 0, w});
    }
  }
  keep_reinit_defined(p);
  return p;
}

void add_coverage(const DiffProgram& p, Coverage& c) {
  std::set<std::string> seen;
  for (const auto& script : p.scripts)
    for (std::size_t k = 0; k < script.size(); ++k) {
      const Instr& i = script[k];
      seen.insert(fmt::format("stmt:{}", to_string(i.op)));
      const bool poll = i.op == Stmt::test_wait || i.op == Stmt::try_wait;
      if ((poll || i.op == Stmt::wait) && i.arg == 1)
        for (std::size_t j = 0; j < k; ++j)
          if (script[j].op == Stmt::arrive && script[j].bar == i.bar)
            seen.insert("pattern:next-phase wait after own arrive");
      if (poll && k > 0 && (script[k - 1].op == Stmt::test_wait || script[k - 1].op == Stmt::try_wait))
        seen.insert("pattern:straight-line repeated polls");
      if (i.op == Stmt::sync_threads) seen.insert("pattern:sync_threads in a script");
      if (i.op == Stmt::status_wait)
        for (std::size_t j = k; j-- > 0;)
          if (script[j].op == Stmt::status_try && script[j].bar == i.bar) {
            seen.insert(j + 1 == k ? "pattern:try status then its wait"
                                   : "pattern:events between a try status and its wait");
            break;
          }
      if (i.op == Stmt::wait && i.arg == -1) seen.insert("pattern:wait for phase -1");
      if ((i.op == Stmt::parity_wait || i.op == Stmt::parity_try_wait) && k > 0)
        for (std::size_t j = 0; j < k; ++j)
          if ((script[j].op == Stmt::parity_wait || script[j].op == Stmt::wait) && script[j].bar == i.bar)
            seen.insert("pattern:a parity wait after an earlier wait on the barrier");
      if (i.op == Stmt::bar_sync)
        for (std::size_t j = 0; j < k; ++j)
          if (script[j].op == Stmt::bar_sync && script[j].bar == i.bar) seen.insert("pattern:rounds of bar.sync");
      if (i.op == Stmt::arrive && &script == &p.scripts[0])  // a release after a wgmma: before or after its wait
        for (std::size_t j = 0; j < k; ++j)
          if (script[j].op == Stmt::wg_mma) {
            bool waited = false;
            for (std::size_t m = j; m < k; ++m) waited |= script[m].op == Stmt::wg_wait;
            seen.insert(waited ? "pattern:wgmma, wait_group, then a release"
                               : "pattern:wgmma, then a release before its wait_group");
            break;
          }
    }
  std::uint32_t paid = 0;  // threads whose cp.async increment an arrival of theirs follows on the barrier
  for (const auto& script : p.scripts)
    for (std::size_t k = 0; k < script.size(); ++k)
      if (script[k].op == Stmt::cpa_arrive && script[k].arg == 0 &&
          std::any_of(script.begin() + static_cast<std::ptrdiff_t>(k), script.end(),
                      [&](const Instr& i) { return i.op == Stmt::arrive && i.bar == script[k].bar; })) {
        ++paid;
        break;
      }
  if (paid >= 2) seen.insert("pattern:cp.async increments followed by arrivals in two threads or more");
  bool tx_inc = false, tx_dec = false, arrivals = false;
  for (const auto& script : p.scripts)
    for (const Instr& i : script) {
      tx_inc |= i.op == Stmt::expect_tx || i.op == Stmt::arrive_expect_tx;
      tx_dec |= i.op == Stmt::complete_tx || i.op == Stmt::copy;
      arrivals |= i.op == Stmt::arrive || i.op == Stmt::arrive_drop || i.op == Stmt::arrive_token;
    }
  if (tx_inc && tx_dec && arrivals) seen.insert("pattern:tx ops beside plain arrivals");
  std::uint32_t landers = 0;  // threads whose complete_tx may land before another's arrive.expect_tx
  bool armed = false;
  for (const auto& script : p.scripts) {
    bool lands = false, arms = false;
    for (const Instr& i : script) {
      lands |= i.op == Stmt::complete_tx || i.op == Stmt::copy;
      arms |= i.op == Stmt::arrive_expect_tx;
    }
    landers += lands && !arms;
    armed |= arms;
  }
  if (armed && landers >= 2) seen.insert("pattern:landings of 2+ other threads racing an arrive.expect_tx");
  for (std::size_t g1 = 0; g1 < p.scripts.size(); ++g1)
    for (const Instr& i : p.scripts[g1])
      if (i.op == Stmt::bar_arrive)
        for (std::size_t g2 = 0; g2 < p.scripts.size(); ++g2)
          for (const Instr& j : p.scripts[g2])
            if (g2 != g1 && j.op == Stmt::bar_sync && j.bar == i.bar)
              seen.insert("pattern:bar.arrive -> bar.sync handoff");
  std::size_t shortest = ~std::size_t{0}, longest = 0;
  for (const auto& script : p.scripts) {
    shortest = std::min(shortest, script.size());
    longest = std::max(longest, script.size());
  }
  if (shortest < longest) seen.insert("pattern:threads exit at different times");
  seen.insert(fmt::format("shape:{} cta(s) x {} threads", p.ctas, p.threads));
  seen.insert(fmt::format("shape:{} barrier(s)", p.barriers));
  seen.insert(fmt::format("shape:copies in {} piece(s)", p.copy_pieces));
  add_cluster_coverage(p, seen);
  add_cutlass_coverage(p, seen);
  for (const auto& s : seen) ++c[s];
}

std::string format_coverage(const Coverage& c, std::uint64_t programs) {
  std::string out = fmt::format("coverage over {} programs (programs having each feature):\n", programs);
  for (const auto& [name, n] : c) out += fmt::format("  {:<50} {:>8}  {:5.1f}%\n", name, n, 100.0 * n / programs);
  return out;
}

}  // namespace mbcheck::diff
