#include "tests/differential/runtime_program.hpp"

#include <stdexcept>

namespace mbcheck::diff {

namespace {
using P = sim::HostPlatform;
// Shared memory of a CTA: the barriers, then D (at kDataOffset from the end of the barrier
// block), then the copy slots, 16-byte aligned as bulk copies need.
constexpr std::size_t kDataBytes = kDataWords * 8, kSlotsOffset = 128, kSlotBytes = kSlotWords * 8;
}  // namespace

RuntimeProgram::RuntimeProgram(DiffProgram program) : program_(std::move(program)) {
  if (program_.barriers > 4 || program_.counts.size() != program_.barriers)
    throw std::invalid_argument("a differential program has 1..4 barriers, each with a count");
  shape_.ctas = program_.ctas;
  shape_.threads_per_cta = program_.threads;
  shape_.warp_size = program_.warp_size;  // 1: named-barrier counts are thread counts (diff_program.hpp)
  shape_.cluster_x = program_.cluster_x;
  shape_.cluster_y = program_.cluster_y;
  shape_.copy_pieces = program_.copy_pieces;
  shape_.smem_bytes = barrier_bytes<P>(program_.barriers) + kSlotsOffset + kSlots * kSlotBytes;
  registers_.resize(program_.total_threads());
  counters_.resize(program_.total_threads());
  smem_.assign(program_.ctas, nullptr);
  sources_.resize(static_cast<std::size_t>(program_.ctas) * kSlots * kSlotWords);
  for (std::uint32_t c = 0; c < program_.ctas; ++c)
    for (int s = 0; s < kSlots; ++s)
      for (int j = 0; j < kSlotWords; ++j) sources_[(c * kSlots + s) * kSlotWords + j] = copy_source_value(c, s, j);
}

void RuntimeProgram::reset() {
  for (auto& r : registers_) r.clear();
  atomics_.fill(0);
  smem_.assign(program_.ctas, nullptr);
}

void RuntimeProgram::thread_main() {
  const std::uint32_t cta = P::block_idx(), t = P::thread_idx();
  const std::uint32_t g = cta * program_.threads + t;
  unsigned char* smem = P::shared_memory();
  smem_[cta] = smem;
  auto* bars = reinterpret_cast<P::Barrier*>(smem);
  auto* data = reinterpret_cast<std::int64_t*>(smem + barrier_bytes<P>(program_.barriers));
  auto* slots = reinterpret_cast<std::int64_t*>(smem + barrier_bytes<P>(program_.barriers) + kSlotsOffset);
  static_assert(kDataBytes <= kSlotsOffset);
  if (t == 0)
    for (std::uint32_t b = 0; b < program_.barriers; ++b) Mbarrier<P>(bars[b]).init(program_.counts[b]);
  P::sync_threads();
  // Thread-local state lives here, on the thread's stack (registers, on a GPU).
  std::array<std::int64_t, 64> regs{};
  std::size_t n = 0;
  std::array<P::Token, 4> tokens{};
  std::array<bool, 4> have_token{};
  std::array<P::WaitStatus, 4> statuses{};
  std::array<bool, 4> have_status{};
  const std::uint32_t warp_mask = (1u << program_.warp_size) - 1;  // every lane of the warp
  for (const Instr& i : program_.scripts[g]) {
    const Mbarrier<P> bar(bars[i.bar]);
    const std::int64_t q = i.arg;
    switch (i.op) {
      case Stmt::arrive: bar.arrive(); break;
      case Stmt::arrive_drop: bar.arrive_drop(1); break;
      case Stmt::arrive_no_complete: regs[n++] = P::mbarrier_pending_count(bar.arrive_no_complete(1)); break;
      case Stmt::arrive_expect_tx: bar.arrive_expect_tx(static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::expect_tx: bar.expect_tx(static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::complete_tx: bar.complete_tx(static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::arrive_token:
        tokens[i.bar] = bar.arrive();
        have_token[i.bar] = true;
        break;
      case Stmt::wait: bar.wait(q); break;
      case Stmt::wait_cluster: P::mbarrier_wait_parity_cluster(bars[i.bar], q); break;
      case Stmt::test_wait: regs[n++] = bar.test_wait(q); break;
      case Stmt::try_wait: regs[n++] = bar.try_wait(q); break;
      case Stmt::token_test_wait:
        if (have_token[i.bar]) regs[n++] = bar.test_wait(tokens[i.bar]);
        break;
      case Stmt::token_wait:
        if (have_token[i.bar]) bar.wait(tokens[i.bar].phase);
        break;
      case Stmt::spin_try_wait:
        while (!bar.try_wait(q)) {}
        break;
      case Stmt::spin_backoff: {
        std::int64_t backoff = 0;
        while (!bar.test_wait(q))
          if (backoff < 2) ++backoff;
        regs[n++] = backoff;
        break;
      }
      case Stmt::spin_flag: {
        bool by_flag = false;
        while (!bar.try_wait(q)) {
          if (P::atomic_load(&atomics_[0]) != 0) {
            by_flag = true;
            break;
          }
        }
        regs[n++] = by_flag;
        break;
      }
      case Stmt::spin_atomic: {
        std::int64_t v;
        while ((v = P::atomic_load(&atomics_[i.arg])) == 0) {}
        regs[n++] = v;
        break;
      }
      case Stmt::spin_atomic_pair: {
        std::int64_t v = 0, word = 0;
        for (;;) {
          if ((v = P::atomic_load(&atomics_[0])) != 0) break;
          if ((v = P::atomic_load(&atomics_[1])) != 0) {
            word = 1;
            break;
          }
        }
        regs[n++] = word;
        regs[n++] = v;
        break;
      }
      case Stmt::spin_backoff_grow: {
        std::uint32_t grow = 0;
        while (!bar.test_wait(q)) {
          P::nanosleep(++grow);
          asm volatile("" : : "r"(grow));  // live in the loop (the host's nanosleep is empty), dead after it
        }
        break;
      }
      case Stmt::spin_two_sites: {
        std::int64_t by_test = 0;
        std::uint32_t rounds = 0;
        for (;;) {
          if (bar.try_wait(q)) break;
          if (rounds < 2) {
            ++rounds;
            continue;
          }
          if (bar.test_wait(q)) {
            by_test = 1;
            break;
          }
        }
        regs[n++] = by_test;
        break;
      }
      case Stmt::spin_counter_mem: {
        std::int64_t* count = &counters_[g];
        P::store(count, std::int64_t{0});
        while (P::load(count) < 2) {
          if (bar.try_wait(q)) break;
          P::store(count, P::load(count) + 1);
        }
        regs[n++] = P::load(count);
        break;
      }
      case Stmt::fence_proxy: P::fence_proxy_async_shared_cta(); break;
      case Stmt::try_then_wait: {
        const bool ready = bar.try_wait(q);
        if (!ready) bar.wait(q);
        regs[n++] = ready;
        break;
      }
      case Stmt::try_guard_wait:
        if (!bar.try_wait(q)) bar.wait(q);
        break;
      case Stmt::status_try:
        statuses[i.bar] = bar.try_wait_status(q);
        have_status[i.bar] = true;
        break;
      case Stmt::status_wait:
        if (have_status[i.bar]) bar.wait(statuses[i.bar]);
        break;
      case Stmt::copy:
        P::cp_async_bulk_global_to_shared(slots + i.arg * kSlotWords,
                                          sources_.data() + (cta * kSlots + i.arg) * kSlotWords,
                                          16 * program_.copy_pieces, bar.raw());
        break;
      case Stmt::load_slot: regs[n++] = P::load(slots + i.arg * kSlotWords); break;
      case Stmt::store: P::store(data + i.arg, static_cast<std::int64_t>(g + 1)); break;
      case Stmt::load: regs[n++] = P::load(data + i.arg); break;
      case Stmt::atomic_store: P::atomic_store(&atomics_[i.arg], g + 1); break;
      case Stmt::atomic_load: regs[n++] = P::atomic_load(&atomics_[i.arg]); break;
      case Stmt::atomic_add: regs[n++] = P::atomic_fetch_add(&atomics_[i.arg], 1); break;
      case Stmt::sync_threads: P::sync_threads(); break;
      case Stmt::bar_arrive: P::bar_arrive(1u + i.bar, static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::bar_sync: P::bar_sync(1u + i.bar, static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::parity_wait: P::mbarrier_wait_parity_bit(bars[i.bar], static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::parity_try_wait:
        regs[n++] = P::mbarrier_try_wait_parity_bit(bars[i.bar], static_cast<std::uint32_t>(i.arg));
        break;
      case Stmt::cpa_copy:
        P::cp_async(slots + i.arg * kSlotWords, sources_.data() + (cta * kSlots + i.arg) * kSlotWords, 16);
        break;
      case Stmt::cpa_commit: P::cp_async_commit_group(); break;
      case Stmt::cpa_wait: P::cp_async_wait_group(static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::cpa_arrive:
        if (i.arg)
          P::cp_async_mbarrier_arrive_noinc(bars[i.bar]);
        else
          P::cp_async_mbarrier_arrive(bars[i.bar]);
        break;
      case Stmt::wg_mma:  // issued by the warp group's first thread (diff_program.hpp)
        if (P::thread_idx() % 128 == 0) sim::Runtime::current().wgmma_issue(nullptr, 0, slots + i.arg * kSlotWords, 16);
        break;
      case Stmt::wg_commit: sim::Runtime::current().commit_group(sim::GroupKind::wgmma); break;
      case Stmt::wg_wait:
        if (t == 0) sim::Runtime::current().wait_group(sim::OpKind::wgmma_wait, static_cast<std::uint32_t>(i.arg));
        break;
      case Stmt::remote_arrive: P::mbarrier_arrive_cluster(bars[i.bar], static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::remote_complete_tx:
        P::mbarrier_complete_tx_cluster(bars[i.bar], static_cast<std::uint32_t>(i.arg), 16);
        break;
      case Stmt::remote_arrive_expect_tx:
        P::mbarrier_arrive_expect_tx_cluster(bars[i.bar], 16 * program_.copy_pieces, static_cast<std::uint32_t>(i.arg));
        break;
      case Stmt::multicast: {
        const int slot = i.arg >> 4;
        P::cp_async_bulk_global_to_shared_multicast(
            slots + slot * kSlotWords, sources_.data() + (cta * kSlots + slot) * kSlotWords, 16 * program_.copy_pieces,
            bars[i.bar], static_cast<std::uint16_t>(i.arg & 15));
        break;
      }
      case Stmt::cluster_arrive: P::barrier_cluster_arrive(); break;
      case Stmt::cluster_arrive_relaxed: P::barrier_cluster_arrive_relaxed(); break;
      case Stmt::cluster_wait: P::barrier_cluster_wait(); break;
      case Stmt::fence_init: P::fence_mbarrier_init_release_cluster(); break;
      case Stmt::dsmem_store:
        P::store(P::map_shared_rank(data + i.arg, i.bar), static_cast<std::int64_t>(g + 1));
        break;
      case Stmt::dsmem_load: regs[n++] = P::load(P::map_shared_rank(data + i.arg, i.bar)); break;
      case Stmt::syncwarp: P::syncwarp(warp_mask); break;
      case Stmt::elect_sync: regs[n++] = P::elect_sync(warp_mask); break;
      case Stmt::shfl_idx: regs[n++] = P::shfl_sync_idx(warp_mask, g + 1, static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::arrive_relaxed: P::mbarrier_arrive_relaxed(bars[i.bar]); break;
      case Stmt::inval: P::mbarrier_inval(bars[i.bar]); break;
      case Stmt::reinit: P::mbarrier_init(bars[i.bar], static_cast<std::uint32_t>(i.arg)); break;
      case Stmt::count_: break;
    }
  }
  registers_[g].assign(regs.begin(), regs.begin() + static_cast<std::ptrdiff_t>(n));
}

Observed RuntimeProgram::observed() const {
  // The runtime keeps each CTA's shared memory until its next execution.
  Observed o;
  o.registers = registers_;
  for (std::uint32_t c = 0; c < program_.ctas; ++c) {
    const unsigned char* smem = smem_[c];
    const auto* data = reinterpret_cast<const std::int64_t*>(smem + barrier_bytes<P>(program_.barriers));
    const auto* slots =
        reinterpret_cast<const std::int64_t*>(smem + barrier_bytes<P>(program_.barriers) + kSlotsOffset);
    for (int w = 0; w < kDataWords; ++w) o.data.push_back(smem ? data[w] : 0);
    for (int j = 0; j < kSlots * kSlotWords; ++j) o.slots.push_back(smem ? slots[j] : 0);
  }
  o.atomics.assign(atomics_.begin(), atomics_.end());
  return o;
}

}  // namespace mbcheck::diff
