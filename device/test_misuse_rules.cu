// The emulator's misuse rules (docs/semantics.md, "Misuse kinds") on the GPU: one small kernel
// per rule, recording what the hardware does with the same code. `--misuse NAME` runs one alone
// (a fault must not take the others down: one per process, under an outer timeout), `--list`
// names them, no argument runs every kernel with its misuse removed (the baseline) and exits 0
// when each gave its defined result. A misuse prints `misuse NAME (emulator: KIND): WHAT:
// RESULT` twice: RESULT `launched; ...` before the launch (the line a hang leaves), then what came
// back (label=value words, waits that returned or hit the watchdog, or the fault): a measurement.
// Covered elsewhere: cluster and unfenced-init (test_clusters --misuse), collective and
// named-barrier (test_sync_ops --misuse), lifetime (test_clusters --lifetime).
// PTX sections are PTX ISA 9.x's numbering (docs/semantics.md cites the same release); 9.7.13.15.x
// is the mbarrier chapter. Barrier words are read with ld.shared: the layout is undocumented, the
// words are printed for the record only. Forms ptxas rejects have no kernel: kNotExpressible.
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "device/cuda_check.cuh"
#include "device/platform.cuh"
#include "device/watchdog.cuh"

using namespace mbcheck;
using P = dev::DevicePlatform;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using ull = unsigned long long;

namespace {

// Each checked with nvcc 13.0 -gencode=arch=compute_90a,code=sm_90a on a one-instruction kernel.
struct NotExpressible {
  const char *form, *kind, *ptxas;
};
constexpr NotExpressible kNotExpressible[] = {
    {"mbarrier.arrive.release.cta.shared::cta.b64 s, [b], 0 (immediate count 0)", "count-out-of-range",
     "Argument 2 of instruction 'mbarrier.arrive' : value '0' expected to be a non-zero positive"},
    {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [s], 24, [b] (immediate size)",
     "tma-misaligned",
     "Argument 2 of instruction 'cp.async.bulk': unexpected value '24', expected to be multiple of 16"},
    {"cp.async.bulk.global.shared::cluster.bulk_group (a store from a peer's smem)", "state-space",
     "State space incorrect for instruction 'cp.async.bulk'"},
    {"cp.async.bulk.shared::cta.shared::cta.bulk_group (a store into smem)", "state-space",
     "State space incorrect for instruction 'cp.async.bulk'"},
    {"mbarrier.try_wait.parity.shared::cluster.b64 (a wait on a peer's barrier)", "cluster",
     "Illegal modifier '::cluster' for instruction 'mbarrier.try_wait.parity'"},
    {"cp.async.bulk.wait_group.read %r (N in a register)", "operand-range",
     "Arguments mismatch for instruction 'cp.async.bulk.wait_group'"},
    {"wgmma.mma_async.sync.aligned.m64n12k16 (a shape PTX has not)", "operand-range", "Unknown modifier '.m64n12k16'"},
    {"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.f16 (a type pair PTX has not)", "operand-range",
     "Unexpected instruction types specified for 'wgmma.mma_async'"},
    {"bar.sync 16, 64 (immediate id past 15)", "named-barrier",
     "Barrier number '16' out of range, expected to be in range [0..15]"},
    {"bar.sync 1, 65 (immediate count not a multiple of 32)", "named-barrier",
     "Number of threads participating in barrier must be in multiple of warp size"},
};
// Accepted by ptxas, hence measured or noted: cp.async.bulk.wait_group{.read} 8, 64, 1000000;
// mbarrier.init with immediate 0 or 2^20; expect_tx/complete_tx of immediate 2^20; mbarrier.arrive
// of immediate count 2^20; any count or size in a register.

__device__ u32 sa(const void* p) { return dev::ptx::smem_addr(p); }
__device__ P::Barrier& bar(int i) { return reinterpret_cast<P::Barrier*>(P::shared_memory())[i]; }
__device__ volatile u32& flag() { return *reinterpret_cast<volatile u32*>(P::shared_memory() + 64); }
__device__ ull raw(P::Barrier& b) {  // the barrier word as memory holds it
  ull v;
  asm volatile("ld.volatile.shared.u64 %0, [%1];" : "=l"(v) : "r"(sa(&b)) : "memory");
  return v;
}
__device__ void spin(ull cycles) {
  const ull start = clock64();
  while (clock64() - start < cycles) {}
}
// mbarrier.arrive with a register count (ptxas checks only an immediate one).
__device__ u64 arrive_n(P::Barrier& b, u32 n) {
  u64 state;
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(sa(&b)), "r"(n)
               : "memory");
  return state;
}
__device__ ull tw(P::Barrier& b, u32 parity) { return P::mbarrier_test_wait_parity_bit(b, parity) ? 1 : 0; }
// The watchdog pattern (device/watchdog.cuh), returning instead of exiting: a try_wait.parity
// loop bounded by the budget; false (and the record) on a timeout, so the kernel goes on.
__device__ ull wait_bounded(P::Barrier& b, u32 parity, bool cluster_scope = false) {
  const ull start = clock64();
  for (;;) {
    if (cluster_scope ? dev::ptx::mbarrier_try_wait_parity_cluster(&b.word, parity & 1)
                      : P::mbarrier_try_wait_parity_bit(b, parity))
      return 1;
    const ull waited = clock64() - start;
    if (waited > dev::watchdog_budget_cycles) {
      dev::watchdog_record_timeout(static_cast<int>(sa(&b) - sa(P::shared_memory())), parity, waited);
      return 0;
    }
  }
}

// Emulator: misuse uninitialized. PTX 9.7.13.15.3 (lifecycle), 9.7.13.15.9 (init): any op but init on memory holding
// no initialised barrier is undefined. Thread 0 arrives on a word filled with `pattern`
// (baseline: init(1)); warp 1 waits parity 0.
__global__ void k_uninit(bool misuse, ull pattern, ull* o) {
  const u32 t = threadIdx.x;
  if (t == 0) misuse ? void(*reinterpret_cast<volatile ull*>(&bar(0)) = pattern) : P::mbarrier_init(bar(0), 1);
  __syncthreads();
  if (t == 0) o[0] = raw(bar(0)), o[1] = arrive_n(bar(0), 1), o[2] = raw(bar(0)), o[3] = tw(bar(0), 0);
  if (t == 0) o[4] = tw(bar(0), 1);
  if (t == 32) o[5] = wait_bounded(bar(0), 0);
}
// Emulator: misuse invalidated. PTX 9.7.13.15.10 (inval): any op but init after inval is undefined.
__global__ void k_inval(bool misuse, ull* o) {
  P::mbarrier_init(bar(0), 1);
  if (misuse) P::mbarrier_inval(bar(0));
  o[0] = raw(bar(0)), o[1] = arrive_n(bar(0), 1), o[2] = raw(bar(0)), o[3] = tw(bar(0), 0), o[4] = tw(bar(0), 1);
  o[5] = wait_bounded(bar(0), 0);
}
// Emulator: misuse reinit-live. PTX 9.7.13.15.9 (init): init of a location holding a valid barrier is undefined.
// init(2), one arrival, warp 1 inside its try_wait.parity(0) loop; then init(1) again (baseline:
// none) and one more arrival. Does the waiter return, and after the re-init?
__global__ void k_reinit(bool misuse, ull* o) {
  const u32 t = threadIdx.x;
  if (t == 0) P::mbarrier_init(bar(0), 2), flag() = 0;
  __syncthreads();
  if (t == 32) o[4] = wait_bounded(bar(0), 0), o[5] = flag();
  if (t == 0) {
    arrive_n(bar(0), 1);
    spin(2'000'000);
    flag() = 1;
    if (misuse) P::mbarrier_init(bar(0), 1);
    o[0] = raw(bar(0));
    arrive_n(bar(0), 1);
    o[1] = raw(bar(0)), o[2] = tw(bar(0), 0), o[3] = tw(bar(0), 1);
  }
}
// Emulator: misuse count-out-of-range. PTX 9.7.13.15.2 (contents: counts in [1, 2^20-1]), 9.7.13.15.14 (arrive_drop).
// variant 0: init(3), arrive_drop(4) takes expected below 0 (baseline: arrive_drop(2)); 1: init(2),
// arrive of register count 0 (baseline 1); 2: init of register count 0 (baseline 1). Then
// arrivals of 1, and what test_wait.parity answers.
__global__ void k_count(bool misuse, int variant, ull* o) {
  P::Barrier& b = bar(0);
  P::mbarrier_init(b, variant == 2 ? (misuse ? 0u : 1u) : variant == 0 ? 3u : 2u);
  if (variant == 0) (void)P::mbarrier_arrive_drop(b, misuse ? 4u : 2u);
  if (variant == 1) arrive_n(b, misuse ? 0u : 1u);
  o[0] = raw(b), o[1] = tw(b, 0), o[2] = tw(b, 1);
  arrive_n(b, 1);
  o[3] = tw(b, 0), o[4] = raw(b);
  if (variant == 0) arrive_n(b, 1), o[5] = tw(b, 1), o[6] = raw(b);
}
// Emulator: misuse over-arrival (--on-misuse continue: a trap). PTX 9.7.13.15.7 (arrive-on), 9.7.13.15.13 (arrive's
// count operand): pending must not go below 0. init(2), one arrive of count 3 (baseline 2).
__global__ void k_over(bool misuse, ull* o) {
  P::mbarrier_init(bar(0), 2);
  arrive_n(bar(0), misuse ? 3u : 2u);
  o[0] = raw(bar(0)), o[1] = tw(bar(0), 0), o[2] = tw(bar(0), 1);
}
// Emulator: misuse tx-out-of-range. PTX 9.7.13.15.2 (tx-count in +-(2^20-1)), 9.7.13.15.11 (expect_tx).
// expect_tx(2^20-1) + expect_tx(16) (baseline: (2^20-17) + 16), the same bytes completed, then
// the arrival: does the phase complete, and only then?
__global__ void k_tx(bool misuse, ull* o) {
  P::Barrier& b = bar(0);
  const u32 big = misuse ? 0xFFFFFu : 0xFFFEFu;
  P::mbarrier_init(b, 1);
  P::mbarrier_expect_tx(b, big);
  o[0] = raw(b);
  P::mbarrier_expect_tx(b, 16);
  o[1] = raw(b);
  P::mbarrier_complete_tx(b, big);
  P::mbarrier_complete_tx(b, 16);
  o[2] = raw(b), o[3] = tw(b, 0);
  arrive_n(b, 1);
  o[4] = tw(b, 0), o[5] = raw(b);
}
// Emulator: misuse nocomplete-completes. PTX 9.7.13.15.13: ".noComplete ... must not cause the mbarrier to complete
// its current phase, otherwise the behavior is undefined". init(1) (baseline 2), noComplete(1)
// while warp 1 waits parity 0; the baseline then arrives.
__global__ void k_nocomplete(bool misuse, ull* o) {
  const u32 t = threadIdx.x;
  if (t == 0) P::mbarrier_init(bar(0), misuse ? 1 : 2);
  __syncthreads();
  if (t == 32) o[4] = wait_bounded(bar(0), 0);
  if (t == 0) {
    spin(1'000'000);
    const P::Token tok = P::mbarrier_arrive_no_complete(bar(0), 1);
    o[0] = tw(bar(0), 0), o[1] = P::mbarrier_pending_count(tok), o[2] = raw(bar(0));
    if (!misuse) arrive_n(bar(0), 1);
    o[3] = tw(bar(0), 0);
  }
}
// Emulator: aliasing (a verdict of its own; --on-misuse continue answers by parity). PTX 9.7.13.15.16: phaseParity
// names "the current phase or the immediately preceding phase". Warp 1 starts late and try_waits parity 0 after thread
// 0 completed phases 0 and 1 (baseline: phase 0 only); 2e7 cycles later thread 0 completes phase 2.
__global__ void k_alias(bool misuse, ull* o) {
  const u32 t = threadIdx.x;
  if (t == 0) P::mbarrier_init(bar(0), 1), flag() = 0;
  __syncthreads();
  if (t == 32) {
    spin(2'000'000);
    const ull c0 = clock64();
    o[1] = wait_bounded(bar(0), 0), o[2] = flag(), o[3] = clock64() - c0;
  }
  if (t == 0) {
    arrive_n(bar(0), 1);
    if (misuse) {
      (void)wait_bounded(bar(0), 0);
      arrive_n(bar(0), 1);
      (void)wait_bounded(bar(0), 1);
    }
    o[0] = tw(bar(0), 0);
    if (misuse) spin(20'000'000), flag() = 1, arrive_n(bar(0), 1);  // phase 2, released to the waiter
  }
}
// Emulator: misuse missing-wait (--on-misuse continue: the arrive counts; A then deadlocks). PTX 9.7.13.15.4 (phase):
// "In each phase {0, 1, 2, ...}, threads perform in program order: arrive-on operations to complete the current phase
// and test_wait / try_wait operations to check for the completion of the current phase"; synccheck's "Missing wait". A:
// the producer arrives twice on full (count 1) with no wait between (baseline: it waits for the consumer's release on
// empty first); the consumer comes late, waits parity 0 then 1, reading data each time.
__global__ void k_missing_wait(bool misuse, ull* o) {
  const u32 t = threadIdx.x;
  if (t == 0) P::mbarrier_init(bar(0), 1), P::mbarrier_init(bar(1), 1), flag() = 0;
  __syncthreads();
  if (t == 0) {
    flag() = 1;
    arrive_n(bar(0), 1);
    if (!misuse) (void)wait_bounded(bar(1), 0);
    flag() = 2;
    arrive_n(bar(0), 1);
  }
  if (t == 32) {
    spin(2'000'000);
    o[0] = wait_bounded(bar(0), 0), o[1] = flag();
    arrive_n(bar(1), 1);
    o[2] = wait_bounded(bar(0), 1), o[3] = flag();
  }
}
// Emulator: misuse missing-wait (B). DeepGEMM's release in a 2-CTA cluster. Warp 0 lane 0 produces: waits its empty[s]
// (acquire .cluster), arms its full[s] with 2 KiB, loads its B half (1 KiB); rank 0 also multicasts the A half to both
// CTAs. Two consumer warps per CTA wait full[s], check every word, then lanes 0-1 arrive (mapa +
// mbarrier.arrive.release.cluster.shared::cluster) on rank 0's and rank 1's empty[s] (baseline: only on the CTAs that
// write the stage, rank 0 and their own). So rank 0 may arrive on rank 1's empty[s] for phase k+1 before rank 1's
// producer waited phase k: the emulator's missing-wait in a correct protocol. Rank 1's producer is slowed so rank 0
// runs ahead; before each wait it reads a DSMEM count of peer arrivals (bumped after each): early if more than k
// phases' worth.
constexpr u32 kStages = 4, kConsumerWarps = 2, kHalfWords = 256;
__device__ void remote_arrive(P::Barrier& b, u32 rank) {
  asm volatile(
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(dev::ptx::mapa_shared_cluster(&b, rank))
      : "memory");
}
__global__ void __launch_bounds__(96)
    k_cluster_release(bool misuse, const u32* a_src, const u32* b_src, u32 rounds, ull* o) {
  unsigned char* smem = P::shared_memory();
  P::Barrier* full = reinterpret_cast<P::Barrier*>(smem);
  P::Barrier* empty = full + kStages;
  u32* peer = reinterpret_cast<u32*>(smem + 96);
  const u32 rank = P::cluster_ctarank(), t = threadIdx.x, warp = t / 32, lane = t % 32;
  if (t == 0) {
    for (u32 s = 0; s < kStages; ++s) {
      P::mbarrier_init(full[s], 1);
      P::mbarrier_init(empty[s], misuse || rank == 0 ? 2 * kConsumerWarps : kConsumerWarps);
      peer[s] = 0;
    }
    P::fence_mbarrier_init_release_cluster();
  }
  P::barrier_cluster_arrive();
  P::barrier_cluster_wait();
  if (t == 0) {
    ull early = 0, checked = 0;
    for (u32 r = 0; r < rounds; ++r) {
      const u32 s = r % kStages, k = r / kStages;
      u32* stage = reinterpret_cast<u32*>(smem + 128 + s * 8 * kHalfWords);
      if (k > 0) {  // the release of round r - kStages: phase k-1 of empty[s]
        if (rank == 1) spin((r * 2654435761u >> 20) % 3000 + (r % 16 == 0 ? 20000 : 0));
        early += *reinterpret_cast<volatile u32*>(peer + s) > k * kConsumerWarps, ++checked;
        if (!wait_bounded(empty[s], k - 1, true)) break;
      }
      P::mbarrier_arrive_expect_tx(full[s], 8 * kHalfWords);
      P::cp_async_bulk_global_to_shared(stage + kHalfWords, b_src + (std::size_t{rank} * rounds + r) * kHalfWords,
                                        4 * kHalfWords, full[s]);
      if (rank == 0)
        P::cp_async_bulk_global_to_shared_multicast(stage, a_src + std::size_t{r} * kHalfWords, 4 * kHalfWords, full[s],
                                                    3);
    }
    atomicAdd(&o[2], early), atomicAdd(&o[3], checked);
    if (blockIdx.x == 0) o[4] = gridDim.x / 2, o[5] = rounds;
  } else if (warp > 0) {
    ull wrong = 0, done = 0;
    for (u32 r = 0; r < rounds; ++r, ++done) {
      const u32 s = r % kStages;
      const u32* stage = reinterpret_cast<const u32*>(smem + 128 + s * 8 * kHalfWords);
      if (!wait_bounded(full[s], r / kStages)) break;
      for (u32 i = lane * 8; i < lane * 8 + 8; ++i) {
        wrong += stage[i] != ((r << 12) | i);
        wrong += stage[kHalfWords + i] != (0x80000000u | (rank << 30) | (r << 12) | i);
      }
      __syncwarp();
      if (lane < 2 && (misuse || lane == 0 || lane == rank)) {
        remote_arrive(empty[s], lane);
        if (lane != rank) atomicAdd(P::map_shared_rank(peer + s, lane), 1u);
      }
    }
    atomicAdd(&o[0], wrong);
    if (lane == 0) atomicAdd(&o[1], rounds - done);
  }
  P::barrier_cluster_arrive();  // no CTA leaves while its peer may still arrive on its barriers
  P::barrier_cluster_wait();
}
// Emulator: misuse expect-tx-completes (PTX: unspecified). PTX 9.7.13.15.11 (expect_tx has no completion step),
// 9.7.13.15.6 (phase completion). init(1), complete_tx(16), arrive (pending 0, tx -16), then
// expect_tx(16) (baseline: expect_tx before the arrive).
__global__ void k_expect_tx(bool misuse, ull* o) {
  P::Barrier& b = bar(0);
  P::mbarrier_init(b, 1);
  P::mbarrier_complete_tx(b, 16);
  if (misuse)
    arrive_n(b, 1), o[0] = tw(b, 0), P::mbarrier_expect_tx(b, 16);
  else
    P::mbarrier_expect_tx(b, 16), o[0] = tw(b, 0), arrive_n(b, 1);
  o[1] = tw(b, 0), o[2] = raw(b);
}
// Emulator: misuse bad-token. PTX 9.7.13.15.16 (state comes from an arrive on the same barrier), 9.7.13.15.17
// (pending_count is for .noComplete tokens). A: init(1) taken through phases 0 and 1 (token tA1);
// B: init(3), noComplete(1) (token tB0 of phase 0). Waits and pending_count on B with tA1
// (baseline tB0); then B's phase 0 completes and test_wait again.
__global__ void k_token(bool misuse, ull* o) {
  P::Barrier &a = bar(0), &b = bar(1);
  P::mbarrier_init(a, 1), P::mbarrier_init(b, 3);
  arrive_n(a, 1);
  (void)wait_bounded(a, 0);
  const P::Token ta1 = P::mbarrier_arrive(a), tb0 = P::mbarrier_arrive_no_complete(b, 1);
  const P::Token tok = misuse ? ta1 : tb0;
  o[0] = P::mbarrier_test_wait(b, tok), o[1] = P::mbarrier_try_wait(b, tok), o[2] = P::mbarrier_pending_count(tok);
  arrive_n(b, 2);
  o[3] = P::mbarrier_test_wait(b, tok), o[4] = static_cast<u64>(ta1), o[5] = static_cast<u64>(tb0);
}
// Emulator: misuse tma-misaligned. PTX cp.async.bulk (9.7.9.25.4.1): size and addresses multiples of 16. A copy of
// `bytes` (a register: 24 for the misuse, else 32) from src + src_off (8 for the address misuse)
// into 64 bytes of 0xEE, armed with expect_tx(bytes).
__global__ void k_tma(u32 bytes, u32 src_off, const unsigned char* src, ull* o) {
  unsigned char* dst = P::shared_memory() + 128;
  P::mbarrier_init(bar(0), 1);
  for (int i = 0; i < 64; ++i) dst[i] = 0xEE;
  P::fence_proxy_async_shared_cta();  // the fill, before the copy's async writes
  P::mbarrier_arrive_expect_tx(bar(0), bytes);
  P::cp_async_bulk_global_to_shared(dst, src + src_off, bytes, bar(0));
  o[0] = wait_bounded(bar(0), 0);
  for (int i = 0; i < 64; ++i) o[1] += dst[i] == src[src_off + i], o[2] += dst[i] != 0xEE && dst[i] != src[src_off + i];
  o[3] = raw(bar(0));
}
// Emulator: misuse divergent. PTX bar/barrier (9.7.13.1): bar.sync is barrier.sync.aligned, for which all threads
// must "evaluate the condition identically, otherwise behavior is undefined". Warp 0's lanes 0-15
// at `bar.sync 1, 64`, lanes 16-31 at `barrier.sync.aligned 1, 64` (another instruction), warp
// 1 at the first. Lest a half stuck at a warp-counted barrier hang the run, warp 1 then sleeps 1e7
// cycles, sets a flag and does one `bar.arrive 1, 64` (misuse only); passing lanes read the flag.
__global__ void k_divergent(bool misuse, ull* o) {
  const u32 t = threadIdx.x;
  if (t == 0) flag() = 0;
  __syncthreads();
  if (misuse && t >= 16 && t < 32)
    asm volatile("barrier.sync.aligned 1, 64;" ::: "memory");
  else
    asm volatile("bar.sync 1, 64;" ::: "memory");
  atomicAdd(&o[t < 16 ? 0 : t < 32 ? 1 : 2], 1ull);
  if (t < 32 && flag()) atomicAdd(&o[t < 16 ? 3 : 4], 1ull);
  if (misuse && t >= 32) {
    spin(10'000'000);
    if (t == 32) flag() = 1;
    __syncwarp();
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  }
}
// Emulator: misuse state-space. PTX cp.async.bulk (bulk store, 9.7.9.25.4.1): the source operand is .shared::cta.
// The store as code writes it, P::cp_async_bulk_shared_to_global (CCCL: __cvta_generic_to_shared
// of the source), given a generic pointer to global memory of 0x3C (baseline: a smem tile of 0x5A).
__global__ void k_state_space(bool misuse, const unsigned char* gsrc, unsigned char* dst, ull* o) {
  unsigned char* tile = P::shared_memory() + 128;
  for (int i = 0; i < 64; ++i) tile[i] = 0x5A;
  P::fence_proxy_async_shared_cta();
  P::cp_async_bulk_shared_to_global(dst, misuse ? gsrc : tile, 64);
  P::cp_async_bulk_commit_group();
  P::cp_async_bulk_wait_group(0);
  for (int i = 0; i < 64; ++i) o[0] += dst[i] == 0x3C, o[1] += dst[i] == 0x5A, o[2] += dst[i] == 0;
  o[3] = *reinterpret_cast<const ull*>(dst);
}
// Emulator: misuse operand-range. PTX cp.async.bulk.wait_group (9.7.9.27.2.2): N is "an integer constant", no bound
// in the text; the contract allows 0..7. 10 stores of 8 KiB, a group each, wait_group.read 8
// (baseline: 9 stores, .read 7: the same two oldest groups), then the two oldest tiles are
// overwritten: the wait's cycles against the full wait_group 0, and overwritten words stored.
constexpr u32 kTileWords = 2048;
__global__ void k_wait_group(bool misuse, u32* dst, ull* o) {
  u32* tiles = reinterpret_cast<u32*>(P::shared_memory());
  const u32 groups = misuse ? 10 : 9;
  for (u32 i = 0; i < groups * kTileWords; ++i) tiles[i] = i;
  P::fence_proxy_async_shared_cta();
  for (u32 g = 0; g < groups; ++g) {
    P::cp_async_bulk_shared_to_global(dst + g * kTileWords, tiles + g * kTileWords, 4 * kTileWords);
    P::cp_async_bulk_commit_group();
  }
  const ull c0 = clock64();
  if (misuse)
    asm volatile("cp.async.bulk.wait_group.read 8;" ::: "memory");
  else
    asm volatile("cp.async.bulk.wait_group.read 7;" ::: "memory");
  o[0] = clock64() - c0;
  for (u32 i = 0; i < 2 * kTileWords; ++i) tiles[i] = 0xFFFFFFFFu;
  P::cp_async_bulk_wait_group(0);
  o[1] = clock64() - c0;
  for (u32 i = 0; i < 2 * kTileWords; ++i) o[2] += dst[i] != i;
}
// Emulator: misuse operand-range. PTX ldmatrix (warp-level matrix load, 9.7.14.5.15): every row address inside the
// CTA's shared memory. ldmatrix.x1 of 8 rows of 16 B; row 7 (lane 7's address) just past the 1 KiB of dynamic shared
// memory (baseline: inside). Lane l reads word l of the rows.
__global__ void k_ldmatrix(bool misuse, ull* o) {
  u32* m = reinterpret_cast<u32*>(P::shared_memory());
  const u32 lane = threadIdx.x;
  for (u32 i = lane; i < 256; i += 32) m[i] = 0x1000 + i;
  __syncwarp();
  const u32 row = lane % 8, addr = sa(m) + (misuse && row == 7 ? 1024 : row * 16);
  u32 v;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(v) : "r"(addr) : "memory");
  if (lane < 28) atomicAdd(&o[0], v == 0x1000u + lane ? 1ull : 0ull);
  if (lane == 28) o[1] = v;
}

// --- host ---------------------------------------------------------------------------------------
template <class T>
T* upload(const std::vector<T>& h) {  // freed at exit: one rule per process
  T* d = nullptr;
  MBCHECK_CUDA(cudaMalloc(&d, h.size() * sizeof(T)));
  MBCHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
void launch_cluster_release(bool m, ull* o) {
  cudaDeviceProp prop{};
  MBCHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const u32 rounds = 2000;
  std::vector<u32> a(std::size_t{rounds} * kHalfWords), b(2 * a.size());
  for (u32 r = 0; r < rounds; ++r)
    for (u32 i = 0; i < kHalfWords; ++i) {
      a[r * kHalfWords + i] = (r << 12) | i;
      for (u32 k = 0; k < 2; ++k) b[(k * rounds + r) * kHalfWords + i] = 0x80000000u | (k << 30) | (r << 12) | i;
    }
  const u32 *da = upload(a), *db = upload(b);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(prop.multiProcessorCount / 2 * 2);
  config.blockDim = dim3(32 * (1 + kConsumerWarps));
  config.dynamicSmemBytes = 128 + kStages * 8 * kHalfWords;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  config.attrs = attr, config.numAttrs = 1;
  MBCHECK_CUDA(cudaLaunchKernelEx(&config, k_cluster_release, m, da, db, rounds, o));
}
void launch_tma(u32 bytes, u32 off, ull* o) {
  std::vector<unsigned char> h(128);
  for (int i = 0; i < 128; ++i) h[i] = static_cast<unsigned char>(i + 1);
  k_tma<<<1, 1, 1024>>>(bytes, off, upload(h), o);
}

// A rule: its kernel's launch, the labels of its output words (label:type, type x hex, b
// boolean, w a bounded wait, d decimal; '-' skips a word) and the baseline's values
// ('*' any). A baseline is right when the values match and no wait timed out.
struct Rule {
  const char *name, *kind, *what, *labels, *expect;
  void (*launch)(bool misuse, ull* o);
};
const Rule kRules[] = {
    {"uninitialized", "uninitialized", "arrive on a word of 0xA5 bytes, never initialised",
     "word:x state:x word-after:x phase0-complete:b parity1-complete:b waiter-parity0:w", "* * * 1 0 1",
     [](bool m, ull* o) { k_uninit<<<1, 64, 1024>>>(m, 0xA5A5A5A5A5A5A5A5ull, o); }},
    {"uninitialized-zero", "uninitialized", "arrive on a zero word, never initialised",
     "word:x state:x word-after:x phase0-complete:b parity1-complete:b waiter-parity0:w", "* * * 1 0 1",
     [](bool m, ull* o) { k_uninit<<<1, 64, 1024>>>(m, 0ull, o); }},
    {"invalidated", "invalidated", "init(1), inval, arrive",
     "word-after-inval:x state:x word-after-arrive:x phase0-complete:b parity1-complete:b wait-parity0:w",
     "* * * 1 0 1", [](bool m, ull* o) { k_inval<<<1, 1, 1024>>>(m, o); }},
    {"reinit-live", "reinit-live", "init(2), arrive, a waiter blocked on parity 0, init(1), arrive",
     "word-after-reinit:x word-after-arrive:x phase0-complete:b parity1-complete:b waiter:w waiter-after-reinit:b",
     "* * 1 0 1 1", [](bool m, ull* o) { k_reinit<<<1, 64, 1024>>>(m, o); }},
    {"count-out-of-range", "count-out-of-range", "init(3), arrive_drop(4) (expected count -1)",
     "word:x phase0-complete:b parity1-complete:b +arrive:phase0-complete:b word:x +arrive:phase1-complete:b word:x",
     "* 0 * 1 * 1 *", [](bool m, ull* o) { k_count<<<1, 1, 1024>>>(m, 0, o); }},
    {"count-out-of-range-zero", "count-out-of-range", "init(2), arrive(count 0 in a register)",
     "word:x phase0-complete:b parity1-complete:b +arrive:phase0-complete:b word:x", "* 0 * 1 *",
     [](bool m, ull* o) { k_count<<<1, 1, 1024>>>(m, 1, o); }},
    {"count-out-of-range-init0", "count-out-of-range", "init(count 0 in a register)",
     "word:x phase0-complete:b parity1-complete:b +arrive:phase0-complete:b word:x", "* 0 1 1 *",
     [](bool m, ull* o) { k_count<<<1, 1, 1024>>>(m, 2, o); }},
    {"over-arrival", "over-arrival", "init(2), arrive(count 3)", "word:x phase0-complete:b parity1-complete:b", "* 1 0",
     [](bool m, ull* o) { k_over<<<1, 1, 1024>>>(m, o); }},
    {"tx-out-of-range", "tx-out-of-range", "init(1), expect_tx(2^20-1), expect_tx(16), complete_tx of both, arrive",
     "word:x word+16:x word-completed:x phase0-complete-before-arrive:b after-arrive:b word:x", "* * * 0 1 *",
     [](bool m, ull* o) { k_tx<<<1, 1, 1024>>>(m, o); }},
    {"nocomplete-completes", "nocomplete-completes", "init(1), arrive.noComplete(1), a waiter on parity 0",
     "phase0-complete:b pending_count:d word:x complete-at-end:b waiter:w", "0 2 * 1 1",
     [](bool m, ull* o) { k_nocomplete<<<1, 64, 1024>>>(m, o); }},
    {"phase-aliasing", "aliasing",
     "phases 0 and 1 complete, then a late try_wait.parity(0); phase 2 completes 2e7 cycles later",
     "parity0-complete:b late-waiter-parity0:w returned-after-phase2-arrive:b waiter-cycles:d", "1 1 0 *",
     [](bool m, ull* o) { k_alias<<<1, 64, 1024>>>(m, o); }},
    {"missing-wait", "missing-wait",
     "two arrivals on full (count 1) with no wait between; the consumer waits parity 0 later, then 1",
     "wait-phase0:w data:d wait-phase1:w data:d", "1 1 1 2",
     [](bool m, ull* o) { k_missing_wait<<<1, 64, 1024>>>(m, o); }},
    {"missing-wait-cluster-release", "missing-wait",
     "DeepGEMM's release, every consumer warp arriving on both CTAs' empty barriers",
     "wrong-words:d consumer-rounds-missed:d waits-with-next-phase-peer-arrival-made:d waits-checked:d clusters:d "
     "rounds:d",
     "0 0 * * * *", launch_cluster_release},
    {"expect-tx-completes", "expect-tx-completes", "init(1), complete_tx(16), arrive, expect_tx(16)",
     "phase0-complete-before-last-op:b after:b word:x", "0 1 *",
     [](bool m, ull* o) { k_expect_tx<<<1, 1, 1024>>>(m, o); }},
    {"bad-token", "bad-token", "B in phase 0 waited with A's phase-1 token; pending_count of A's arrive token",
     "test_wait:b try_wait:b pending_count:d test_wait-after-B-phase0:b token-A:x token-B:x", "0 0 3 1 * *",
     [](bool m, ull* o) { k_token<<<1, 1, 1024>>>(m, o); }},
    {"tma-misaligned", "tma-misaligned", "cp.async.bulk of 24 B, expect_tx(24)",
     "wait:w bytes-right:d other-bytes-changed:d word:x", "1 32 0 *",
     [](bool m, ull* o) { launch_tma(m ? 24 : 32, 0, o); }},
    {"tma-misaligned-address", "tma-misaligned", "cp.async.bulk of 32 B from a source 8 B off 16",
     "wait:w bytes-right:d other-bytes-changed:d word:x", "1 32 0 *",
     [](bool m, ull* o) { launch_tma(32, m ? 8 : 0, o); }},
    {"divergent", "divergent", "lanes 0-15 at bar.sync 1,64, lanes 16-31 at barrier.sync.aligned 1,64",
     "passed-lanes0-15:d passed-lanes16-31:d passed-warp1:d lanes0-15-after-rescue:d lanes16-31-after-rescue:d",
     "16 16 32 0 0", [](bool m, ull* o) { k_divergent<<<1, 64, 1024>>>(m, o); }},
    {"state-space", "state-space", "bulk store of 64 B whose source is a generic global address",
     "bytes-from-global-source:d bytes-from-smem-tile:d bytes-untouched:d first-word:x", "0 64 0 *",
     [](bool m, ull* o) {
       std::vector<unsigned char> src(64, 0x3C), dst(64, 0);
       k_state_space<<<1, 1, 1024>>>(m, upload(src), upload(dst), o);
     }},
    {"operand-range", "operand-range", "10 bulk store groups, cp.async.bulk.wait_group.read 8",
     "wait-cycles:d to-end-of-wait_group-0-cycles:d overwritten-words-stored:d", "* * 0",
     [](bool m, ull* o) {
       const u32 smem = 10 * kTileWords * 4;
       MBCHECK_CUDA(cudaFuncSetAttribute(k_wait_group, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
       k_wait_group<<<1, 1, smem>>>(m, upload(std::vector<u32>(10 * kTileWords)), o);
     }},
    {"operand-range-ldmatrix", "operand-range", "ldmatrix.x1 with row 7 just past the CTA's 1 KiB",
     "rows-0-6-right-lanes:d row7-word:x", "28 0x101c", [](bool m, ull* o) { k_ldmatrix<<<1, 32, 1024>>>(m, o); }},
};

std::string next_token(const char*& p) {
  while (*p == ' ') ++p;
  const char* start = p;
  while (*p && *p != ' ') ++p;
  return std::string(start, p);
}
// Launches the rule's kernel; returns its line (after the name) and whether it matched `expect`.
std::string run(const Rule& rule, bool misuse, bool& ok) {
  static ull* d_out = nullptr;
  if (!d_out) MBCHECK_CUDA(cudaMalloc(&d_out, 16 * sizeof(ull)));
  MBCHECK_CUDA(cudaMemset(d_out, 0, 16 * sizeof(ull)));
  MBCHECK_CUDA(dev::watchdog_clear());
  rule.launch(misuse, d_out);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  ok = false;
  if (err != cudaSuccess)
    return std::string("kernel FAULT: ") + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")";
  ull o[16];
  dev::WatchdogRecord wd{};
  MBCHECK_CUDA(cudaMemcpy(o, d_out, sizeof o, cudaMemcpyDeviceToHost));
  MBCHECK_CUDA(dev::watchdog_read(&wd));
  ok = wd.timeouts == 0;
  std::string line = "completed;";
  const char *lp = rule.labels, *ep = rule.expect;
  for (int i = 0; i < 16 && *lp; ++i) {
    const std::string label = next_token(lp), want = next_token(ep);
    if (label == "-") continue;
    const char type = label.back();
    char buf[96];
    if (type == 'x') std::snprintf(buf, sizeof buf, "0x%llx", o[i]);
    if (type == 'b') std::snprintf(buf, sizeof buf, "%s", o[i] ? "true" : "false");
    if (type == 'w') std::snprintf(buf, sizeof buf, "%s", o[i] ? "returned" : "TIMED-OUT(watchdog)");
    if (type == 'd') std::snprintf(buf, sizeof buf, "%llu", o[i]);
    line += " " + label.substr(0, label.size() - 2) + "=" + buf;
    if (want != "*" && std::strtoull(want.c_str(), nullptr, 0) != o[i]) ok = false;
  }
  char tail[64];
  std::snprintf(tail, sizeof tail, "; watchdog timeouts %u", wd.timeouts);
  return line + tail;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1 && std::strcmp(argv[1], "--list") == 0) {
    for (const Rule& r : kRules) std::printf("%s (emulator: %s): %s\n", r.name, r.kind, r.what);
    for (const NotExpressible& n : kNotExpressible)
      std::printf("not expressible: %s (emulator: %s): ptxas: %s\n", n.form, n.kind, n.ptxas);
    return 0;
  }
  MBCHECK_CUDA(dev::watchdog_set_budget(200'000'000ull));  // ~0.1 s: far above any wait here
  if (argc > 2 && std::strcmp(argv[1], "--misuse") == 0) {
    for (const Rule& r : kRules) {
      if (std::strcmp(argv[2], r.name) != 0) continue;
      // Printed first: if the kernel hangs, this is the line the outer timeout leaves.
      std::printf("misuse %s (emulator: %s): %s: launched; no later line means it hung or died\n", r.name, r.kind,
                  r.what);
      bool ok = false;
      const std::string line = run(r, true, ok);
      std::printf("misuse %s (emulator: %s): %s: %s\n", r.name, r.kind, r.what, line.c_str());
      return 0;
    }
    std::fprintf(stderr, "unknown misuse %s (--list names them)\n", argv[2]);
    return 2;
  }
  int failures = 0;
  for (const Rule& r : kRules) {
    bool ok = false;
    const std::string line = run(r, false, ok);
    std::printf("baseline %s: %s: %s\n", r.name, ok ? "ok" : "WRONG", line.c_str());
    failures += !ok;
  }
  std::printf("%s: %d of %zu baselines wrong\n", failures ? "FAIL" : "PASS", failures, std::size(kRules));
  return failures ? 1 : 0;
}
