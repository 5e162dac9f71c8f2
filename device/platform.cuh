// The Platform contract (spec/platform.hpp) on the GPU, sm_90a: every function is the one
// PTX instruction it is named after, through CCCL's cuda::ptx where CCCL has it and through
// the inline PTX in mbcheck::dev::ptx below where it does not. Barriers use the CTA-local
// (.shared::cta) forms with the default orderings made explicit: arrives .release.cta,
// waits .acquire.cta, expect_tx/complete_tx .relaxed.cta (docs/mbarrier-semantics.md); the
// .shared::cluster arrives on a peer's barrier are .release.cluster, and the _cluster waits
// that pair with them .acquire.cluster. Each function's PTX form is the row of
// spec/contract.def it implements (tests/contract_check.py keeps the two equal).
#pragma once

#include <cuda/atomic>
#include <cuda/ptx>

#include <cstdint>
#include <cstdio>

#include "device/watchdog.cuh"
#include "spec/platform.hpp"

namespace mbcheck::dev {

// Instructions the CCCL of CUDA 13.0 does not wrap; same operand conventions as cuda::ptx
// (a generic pointer to the barrier word, converted to a .shared address).
namespace ptx {

__device__ inline std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// mbarrier.inval.shared::cta.b64 [addr];  (PTX ISA 7.0, sm_80)
__device__ inline void mbarrier_inval(std::uint64_t* addr) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" : : "r"(smem_addr(addr)) : "memory");
}

// mbarrier.arrive_drop.release.cta.shared::cta.b64 state, [addr], count;  (PTX ISA 8.0, sm_90)
__device__ inline std::uint64_t mbarrier_arrive_drop(std::uint64_t* addr, std::uint32_t count) {
  std::uint64_t state;
  asm volatile("mbarrier.arrive_drop.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(smem_addr(addr)), "r"(count)
               : "memory");
  return state;
}

// mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [addr], txCount;  (PTX ISA 8.0, sm_90)
__device__ inline void mbarrier_complete_tx(std::uint64_t* addr, std::uint32_t tx_count) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;"
               :
               : "r"(smem_addr(addr)), "r"(tx_count)
               : "memory");
}

// mbarrier.pending_count.b64 count, state;  (PTX ISA 7.0, sm_80). Pure: reads no memory.
__device__ inline std::uint32_t mbarrier_pending_count(std::uint64_t state) {
  std::uint32_t count;
  asm("mbarrier.pending_count.b64 %0, %1;" : "=r"(count) : "l"(state));
  return count;
}

// elect.sync _|p, membermask;  (PTX ISA 8.0, sm_90). True in exactly one lane of membermask;
// every lane of membermask must execute it.
__device__ inline bool elect_sync(std::uint32_t membermask) {
  std::uint32_t elected;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "elect.sync _|p, %1;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(elected)
      : "r"(membermask));
  return elected != 0;
}

// mapa.shared::cluster.u32 d, a, rank: the .shared::cluster address of `p`'s offset in CTA
// `rank` of the cluster.  (PTX ISA 7.8, sm_90)
__device__ inline std::uint32_t mapa_shared_cluster(const void* p, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(p)), "r"(rank));
  return remote;
}

// mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [addr], txCount;  (PTX ISA 8.0, sm_90)
__device__ inline void mbarrier_complete_tx_cluster(std::uint32_t remote_addr, std::uint32_t tx_count) {
  asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;"
               :
               : "r"(remote_addr), "r"(tx_count)
               : "memory");
}

// PTX ISA 8.6 .relaxed arrive-on forms (sm_90): the same arrive-on, ordering no memory operation.
__device__ inline std::uint64_t mbarrier_arrive_relaxed(std::uint64_t* addr, std::uint32_t count) {
  std::uint64_t state;
  asm volatile("mbarrier.arrive.relaxed.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(smem_addr(addr)), "r"(count)
               : "memory");
  return state;
}
__device__ inline std::uint64_t mbarrier_arrive_expect_tx_relaxed(std::uint64_t* addr, std::uint32_t bytes) {
  std::uint64_t state;
  asm volatile("mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(smem_addr(addr)), "r"(bytes)
               : "memory");
  return state;
}
__device__ inline std::uint64_t mbarrier_arrive_drop_relaxed(std::uint64_t* addr, std::uint32_t count) {
  std::uint64_t state;
  asm volatile("mbarrier.arrive_drop.relaxed.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(smem_addr(addr)), "r"(count)
               : "memory");
  return state;
}

// mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [addr], txCount; (PTX ISA 8.0,
// sm_90): CUTLASS's ClusterTransactionBarrier::arrive_and_expect_tx(bytes, cta_id, pred).
__device__ inline void mbarrier_arrive_expect_tx_cluster(std::uint32_t remote_addr, std::uint32_t tx_count) {
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;"
               :
               : "r"(remote_addr), "r"(tx_count)
               : "memory");
}

// The wgmma descriptor of an operand in shared memory, described without swizzle: core
// matrices of 8 rows x 16 B, the next along K 128 B on, the next 8 rows 256 B on.
__device__ inline std::uint64_t wgmma_descriptor(const void* smem) {
  std::uint64_t desc = (smem_addr(smem) & 0x3FFFFu) >> 4;
  desc |= std::uint64_t{128 >> 4} << 16;  // leading byte offset: the next core matrix along K
  desc |= std::uint64_t{256 >> 4} << 32;  // stride byte offset: the next 8 rows
  return desc;                            // base offset 0, no swizzle
}

// A wait_group N with N outside the contract's 0..7 (N is an immediate in PTX, so the device
// dispatches on it): trap, naming the function and N, rather than wait for another N.
__device__ inline void wait_group_out_of_range(const char* function, std::uint32_t n) {
  printf("mbcheck: %s(%u) in block %u thread %u: N must be 0..7 (the Platform contract's range)\n", function, n,
         blockIdx.x, threadIdx.x);
  cuda::ptx::trap();
}

// mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 waitComplete, [addr], phaseParity;
// (PTX ISA 8.0, sm_90): an acquire at cluster scope, which synchronizes with a peer CTA's
// .release.cluster arrive (a .cta acquire need not).
__device__ inline bool mbarrier_try_wait_parity_cluster(std::uint64_t* addr, std::uint32_t parity) {
  return cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster, addr, parity);
}

}  // namespace ptx

// Every public function is one row of spec/contract.def and carries that row's PTX form on a
// `// PTX:` line of the comment above it (tests/contract_check.py compares them).
struct DevicePlatform {
  // An mbarrier: one 8-byte word in shared memory.
  struct alignas(8) Barrier {
    std::uint64_t word;
  };
  // The 64-bit arrive state. A distinct type, not a bare uint64_t, so that Mbarrier's
  // test_wait(int64_t phase) / test_wait(Token) overloads cannot be confused by an integer
  // argument (as on the host, where the token is a struct too).
  enum class Token : std::uint64_t {};
  // A try_wait's answer, for a later mbarrier_wait_status (CUTLASS's BarrierStatus).
  struct WaitStatus {
    std::int64_t phase;
    bool done;
  };

  // --- mbarrier instructions ---------------------------------------------------------------
  // PTX: mbarrier.init.shared::cta.b64
  __device__ static void mbarrier_init(Barrier& b, std::uint32_t count) { cuda::ptx::mbarrier_init(&b.word, count); }
  // PTX: mbarrier.inval.shared::cta.b64
  __device__ static void mbarrier_inval(Barrier& b) { ptx::mbarrier_inval(&b.word); }
  // PTX: mbarrier.arrive.release.cta.shared::cta.b64
  __device__ static Token mbarrier_arrive(Barrier& b, std::uint32_t count = 1) {
    return Token{cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                            &b.word, count)};
  }
  // PTX: mbarrier.arrive.noComplete.release.cta.shared::cta.b64
  __device__ static Token mbarrier_arrive_no_complete(Barrier& b, std::uint32_t count) {
    return Token{cuda::ptx::mbarrier_arrive_no_complete(&b.word, count)};
  }
  // PTX: mbarrier.arrive.expect_tx.release.cta.shared::cta.b64
  __device__ static Token mbarrier_arrive_expect_tx(Barrier& b, std::uint32_t bytes) {
    return Token{cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                                      cuda::ptx::space_shared, &b.word, bytes)};
  }
  // PTX: mbarrier.arrive_drop.release.cta.shared::cta.b64
  __device__ static Token mbarrier_arrive_drop(Barrier& b, std::uint32_t count = 1) {
    return Token{ptx::mbarrier_arrive_drop(&b.word, count)};
  }
  // PTX: mbarrier.arrive.relaxed.cta.shared::cta.b64
  __device__ static Token mbarrier_arrive_relaxed(Barrier& b, std::uint32_t count = 1) {
    return Token{ptx::mbarrier_arrive_relaxed(&b.word, count)};
  }
  // PTX: mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64
  __device__ static Token mbarrier_arrive_expect_tx_relaxed(Barrier& b, std::uint32_t bytes) {
    return Token{ptx::mbarrier_arrive_expect_tx_relaxed(&b.word, bytes)};
  }
  // PTX: mbarrier.arrive_drop.relaxed.cta.shared::cta.b64
  __device__ static Token mbarrier_arrive_drop_relaxed(Barrier& b, std::uint32_t count = 1) {
    return Token{ptx::mbarrier_arrive_drop_relaxed(&b.word, count)};
  }
  // PTX: mbarrier.expect_tx.relaxed.cta.shared::cta.b64
  __device__ static void mbarrier_expect_tx(Barrier& b, std::uint32_t bytes) {
    cuda::ptx::mbarrier_expect_tx(cuda::ptx::sem_relaxed, cuda::ptx::scope_cta, cuda::ptx::space_shared, &b.word,
                                  bytes);
  }
  // PTX: mbarrier.complete_tx.relaxed.cta.shared::cta.b64
  __device__ static void mbarrier_complete_tx(Barrier& b, std::uint32_t bytes) {
    ptx::mbarrier_complete_tx(&b.word, bytes);
  }
  // Hardware sees only the parity of the FULL phase number (phase -1 has parity 1).
  // PTX: mbarrier.test_wait.parity.acquire.cta.shared::cta.b64
  __device__ static bool mbarrier_test_wait_parity(Barrier& b, std::int64_t phase) {
    return cuda::ptx::mbarrier_test_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cta, &b.word,
                                                static_cast<std::uint32_t>(phase & 1));
  }
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  __device__ static bool mbarrier_try_wait_parity(Barrier& b, std::int64_t phase) {
    return cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cta, &b.word,
                                               static_cast<std::uint32_t>(phase & 1));
  }
  // PTX: mbarrier.test_wait.acquire.cta.shared::cta.b64
  __device__ static bool mbarrier_test_wait(Barrier& b, Token t) {
    return cuda::ptx::mbarrier_test_wait(cuda::ptx::sem_acquire, cuda::ptx::scope_cta, &b.word,
                                         static_cast<std::uint64_t>(t));
  }
  // PTX: mbarrier.try_wait.acquire.cta.shared::cta.b64
  __device__ static bool mbarrier_try_wait(Barrier& b, Token t) {
    return cuda::ptx::mbarrier_try_wait(cuda::ptx::sem_acquire, cuda::ptx::scope_cta, &b.word,
                                        static_cast<std::uint64_t>(t));
  }
  // PTX: mbarrier.pending_count.b64
  __device__ static std::uint32_t mbarrier_pending_count(Token t) {
    return ptx::mbarrier_pending_count(static_cast<std::uint64_t>(t));
  }
  // The blocking wait: try_wait until the phase completes, bounded by the watchdog budget
  // (device/watchdog.cuh). On timeout the thread records it and leaves the kernel (exit), so
  // a deadlock ends the kernel instead of hanging the GPU.
  // PTX: loop of mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  __device__ static void mbarrier_wait_parity(Barrier& b, std::int64_t phase) {
    if (mbarrier_try_wait_parity(b, phase)) return;
    const std::uint64_t start = cuda::ptx::get_sreg_clock64();
    const std::uint64_t budget = watchdog_budget_cycles;
    while (!mbarrier_try_wait_parity(b, phase)) {
      const std::uint64_t waited = cuda::ptx::get_sreg_clock64() - start;
      if (waited > budget) {
        const int offset = static_cast<int>(ptx::smem_addr(&b) - ptx::smem_addr(shared_memory()));
        watchdog_record_timeout(offset, phase, waited);
        cuda::ptx::exit();
      }
    }
  }
  // Blocking wait on a state token, bounded as above.
  // PTX: loop of mbarrier.try_wait.acquire.cta.shared::cta.b64
  __device__ static void mbarrier_wait(Barrier& b, Token t) {
    if (mbarrier_try_wait(b, t)) return;
    const std::uint64_t start = cuda::ptx::get_sreg_clock64();
    while (!mbarrier_try_wait(b, t)) {
      const std::uint64_t waited = cuda::ptx::get_sreg_clock64() - start;
      if (waited > watchdog_budget_cycles) {
        const int offset = static_cast<int>(ptx::smem_addr(&b) - ptx::smem_addr(shared_memory()));
        watchdog_record_timeout(offset, -1, waited);
        cuda::ptx::exit();
      }
    }
  }
  // The parity-only forms: the bit is the PTX operand itself.
  // PTX: loop of mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  __device__ static void mbarrier_wait_parity_bit(Barrier& b, std::uint32_t parity) {
    mbarrier_wait_parity(b, static_cast<std::int64_t>(parity & 1));
  }
  // PTX: mbarrier.test_wait.parity.acquire.cta.shared::cta.b64
  __device__ static bool mbarrier_test_wait_parity_bit(Barrier& b, std::uint32_t parity) {
    return mbarrier_test_wait_parity(b, static_cast<std::int64_t>(parity & 1));
  }
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  __device__ static bool mbarrier_try_wait_parity_bit(Barrier& b, std::uint32_t parity) {
    return mbarrier_try_wait_parity(b, static_cast<std::int64_t>(parity & 1));
  }
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  __device__ static WaitStatus mbarrier_try_wait_parity_bit_status(Barrier& b, std::uint32_t parity) {
    return mbarrier_try_wait_parity_status(b, static_cast<std::int64_t>(parity & 1));
  }
  // PTX: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  __device__ static WaitStatus mbarrier_try_wait_parity_status(Barrier& b, std::int64_t phase) {
    return {phase, mbarrier_try_wait_parity(b, phase)};
  }
  // Returns at once if the try found the phase complete, else waits as mbarrier_wait_parity.
  // PTX: loop of mbarrier.try_wait.parity.acquire.cta.shared::cta.b64
  __device__ static void mbarrier_wait_status(Barrier& b, WaitStatus status) {
    if (!status.done) mbarrier_wait_parity(b, status.phase);
  }

  // --- named barriers (bar.sync / bar.arrive with an id and a thread count) -----------------
  // PTX: bar.sync a, b
  __device__ static void bar_sync(std::uint32_t id, std::uint32_t count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
  }
  // PTX: bar.arrive a, b
  __device__ static void bar_arrive(std::uint32_t id, std::uint32_t count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
  }
  // PTX: bar.red.popc.u32 d, a, b, c
  __device__ static std::uint32_t bar_red_popc(std::uint32_t id, std::uint32_t count, bool pred) {
    std::uint32_t n;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\tbar.red.popc.u32 %0, %1, %2, p;\n\t}"
                 : "=r"(n)
                 : "r"(id), "r"(count), "r"(static_cast<std::uint32_t>(pred))
                 : "memory");
    return n;
  }
  // PTX: bar.red.and.pred p, a, b, c
  __device__ static bool bar_red_and(std::uint32_t id, std::uint32_t count, bool pred) {
    std::uint32_t r;
    asm volatile(
        "{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %3, 0;\n\tbar.red.and.pred q, %1, %2, p;\n\t"
        "selp.u32 %0, 1, 0, q;\n\t}"
        : "=r"(r)
        : "r"(id), "r"(count), "r"(static_cast<std::uint32_t>(pred))
        : "memory");
    return r != 0;
  }
  // PTX: bar.red.or.pred p, a, b, c
  __device__ static bool bar_red_or(std::uint32_t id, std::uint32_t count, bool pred) {
    std::uint32_t r;
    asm volatile(
        "{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %3, 0;\n\tbar.red.or.pred q, %1, %2, p;\n\t"
        "selp.u32 %0, 1, 0, q;\n\t}"
        : "=r"(r)
        : "r"(id), "r"(count), "r"(static_cast<std::uint32_t>(pred))
        : "memory");
    return r != 0;
  }

  // --- clusters ----------------------------------------------------------------------------
  // PTX: mov.u32 %cluster_ctarank
  __device__ static std::uint32_t cluster_ctarank() { return cuda::ptx::get_sreg_cluster_ctarank(); }
  // PTX: mov.u32 %cluster_nctarank
  __device__ static std::uint32_t cluster_nctarank() { return cuda::ptx::get_sreg_cluster_nctarank(); }
  // PTX: mov.u32 %cluster_ctaid.x
  __device__ static std::uint32_t cluster_ctaid_x() { return cuda::ptx::get_sreg_cluster_ctaid_x(); }
  // PTX: mov.u32 %cluster_ctaid.y
  __device__ static std::uint32_t cluster_ctaid_y() { return cuda::ptx::get_sreg_cluster_ctaid_y(); }
  // PTX: mov.u32 %cluster_nctaid.x
  __device__ static std::uint32_t cluster_dim_x() { return cuda::ptx::get_sreg_cluster_nctaid_x(); }
  // PTX: mov.u32 %cluster_nctaid.y
  __device__ static std::uint32_t cluster_dim_y() { return cuda::ptx::get_sreg_cluster_nctaid_y(); }
  // The cluster's linear index: %clusterid.x + %clusterid.y * %nclusterid.x (every CTA is in a
  // cluster; without a cluster launch each is a 1x1 cluster of its own).
  // PTX: mov.u32 %clusterid.x, %clusterid.y, %nclusterid.x
  __device__ static std::uint32_t cluster_idx() {
    return cuda::ptx::get_sreg_clusterid_x() + cuda::ptx::get_sreg_clusterid_y() * cuda::ptx::get_sreg_nclusterid_x();
  }
  // mapa (generic form): the generic address of p's offset in CTA `rank`'s shared memory.
  // PTX: mapa.u64
  template <class T>
  __device__ static T* map_shared_rank(T* p, std::uint32_t rank) {
    return static_cast<T*>(__cluster_map_shared_rank(const_cast<void*>(static_cast<const void*>(p)), rank));
  }
  // PTX: mbarrier.arrive.release.cluster.shared::cluster.b64
  __device__ static void mbarrier_arrive_cluster(Barrier& b, std::uint32_t cta_rank) {
    cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cluster, cuda::ptx::space_cluster,
                               &map_shared_rank(&b, cta_rank)->word);
  }
  // PTX: @p mbarrier.arrive.release.cluster.shared::cluster.b64
  __device__ static void mbarrier_arrive_cluster_if(Barrier& b, std::uint32_t cta_rank, bool pred) {
    if (pred) mbarrier_arrive_cluster(b, cta_rank);
  }
  // PTX: mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64
  __device__ static void mbarrier_complete_tx_cluster(Barrier& b, std::uint32_t cta_rank, std::uint32_t bytes) {
    ptx::mbarrier_complete_tx_cluster(ptx::mapa_shared_cluster(&b, cta_rank), bytes);
  }
  // PTX: mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64
  __device__ static void mbarrier_arrive_expect_tx_cluster(Barrier& b, std::uint32_t bytes, std::uint32_t cta_rank) {
    ptx::mbarrier_arrive_expect_tx_cluster(ptx::mapa_shared_cluster(&b, cta_rank), bytes);
  }
  // The blocking wait of a barrier that peers arrive on: try_wait.parity with .acquire at
  // cluster scope, so that it synchronizes with their .release.cluster arrives; bounded by the
  // watchdog as mbarrier_wait_parity.
  // PTX: loop of mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
  __device__ static void mbarrier_wait_parity_cluster(Barrier& b, std::int64_t phase) {
    const auto parity = static_cast<std::uint32_t>(phase & 1);
    if (ptx::mbarrier_try_wait_parity_cluster(&b.word, parity)) return;
    const std::uint64_t start = cuda::ptx::get_sreg_clock64();
    const std::uint64_t budget = watchdog_budget_cycles;
    while (!ptx::mbarrier_try_wait_parity_cluster(&b.word, parity)) {
      const std::uint64_t waited = cuda::ptx::get_sreg_clock64() - start;
      if (waited > budget) {
        const int offset = static_cast<int>(ptx::smem_addr(&b) - ptx::smem_addr(shared_memory()));
        watchdog_record_timeout(offset, phase, waited);
        cuda::ptx::exit();
      }
    }
  }
  // The same given only the phase bit.
  // PTX: loop of mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64
  __device__ static void mbarrier_wait_parity_bit_cluster(Barrier& b, std::uint32_t parity) {
    mbarrier_wait_parity_cluster(b, static_cast<std::int64_t>(parity & 1));
  }
  // PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
  __device__ static void cp_async_bulk_global_to_shared_multicast(void* smem, const void* gmem, std::uint32_t bytes,
                                                                  Barrier& b, std::uint16_t cta_mask) {
    cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem, gmem, bytes, &b.word, cta_mask);
  }
  // PTX: barrier.cluster.arrive.release
  __device__ static void barrier_cluster_arrive() { cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release); }
  // PTX: barrier.cluster.arrive.relaxed
  __device__ static void barrier_cluster_arrive_relaxed() { cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed); }
  // PTX: barrier.cluster.wait.acquire
  __device__ static void barrier_cluster_wait() { cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire); }
  // PTX: barrier.cluster.arrive.release.aligned
  __device__ static void barrier_cluster_arrive_aligned() {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  }
  // PTX: barrier.cluster.arrive.relaxed.aligned
  __device__ static void barrier_cluster_arrive_relaxed_aligned() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  }
  // PTX: barrier.cluster.wait.acquire.aligned
  __device__ static void barrier_cluster_wait_aligned() {
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  }
  // PTX: fence.mbarrier_init.release.cluster
  __device__ static void fence_mbarrier_init_release_cluster() {
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }

  // --- warp and warp-group collectives --------------------------------------------------------
  // PTX: bar.warp.sync membermask
  __device__ static void syncwarp(std::uint32_t mask = 0xffffffffu) { __syncwarp(mask); }
  // True in exactly one lane of the mask; PTX names no lane ("the same leader thread is
  // elected for the same membermask every time").
  // PTX: elect.sync _|p, membermask
  __device__ static bool elect_sync(std::uint32_t mask = 0xffffffffu) { return ptx::elect_sync(mask); }
  // __shfl_sync(mask, v, src) is shfl.sync.idx.b32 with c = 0x1f (width 32: no segment mask,
  // clamp 31). PTX's .idx rule is j = minLane | (b[4:0] & ~segmask[4:0]) with minLane = 0 and
  // segmask = 0, and pval = (j <= maxLane = 31) always holds: the source lane is src_lane & 31
  // (src_lane 32 + k reads lane k). Undefined where lane j is inactive (exited, or not
  // executing the same shfl.sync) or not in the mask, or the caller is not in the mask.
  // PTX: shfl.sync.idx.b32 d, a, b, 0x1f, membermask
  __device__ static std::uint32_t shfl_sync_idx(std::uint32_t mask, std::uint32_t value, std::uint32_t src_lane) {
    return __shfl_sync(mask, value, static_cast<int>(src_lane));
  }
  // PTX: wgmma.fence.sync.aligned
  __device__ static void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
  // PTX: wgmma.commit_group.sync.aligned
  __device__ static void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
  // N is an immediate in PTX: the contract's 0..7, each its own instruction; another N traps.
  // PTX: wgmma.wait_group.sync.aligned N
  __device__ static void wgmma_wait_group(std::uint32_t pending) {
    switch (pending) {
      case 0: asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); break;
      case 1: asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); break;
      case 2: asm volatile("wgmma.wait_group.sync.aligned 2;" ::: "memory"); break;
      case 3: asm volatile("wgmma.wait_group.sync.aligned 3;" ::: "memory"); break;
      case 4: asm volatile("wgmma.wait_group.sync.aligned 4;" ::: "memory"); break;
      case 5: asm volatile("wgmma.wait_group.sync.aligned 5;" ::: "memory"); break;
      case 6: asm volatile("wgmma.wait_group.sync.aligned 6;" ::: "memory"); break;
      case 7: asm volatile("wgmma.wait_group.sync.aligned 7;" ::: "memory"); break;
      default: ptx::wait_group_out_of_range("wgmma_wait_group", pending); break;
    }
  }
  // wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16, D += A * B, with B (and A unless
  // `a` is nullptr: A in registers, zeros) in shared memory, described without swizzle
  // (ptx::wgmma_descriptor; A: 2 KiB, B: 256 B a step).
  struct WgmmaAccumulator {
    float d[4] = {};
  };
  // k = b_bytes / 256 steps of m64n8k16 (the contract's sizes: B 256 B a step, A 2 KiB a step
  // in shared memory; the host refuses others), step i reading the operands' i-th tiles.
  // PTX: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16
  __device__ static void wgmma_mma_async(WgmmaAccumulator& acc, const void* a, std::uint32_t /*a_bytes*/, const void* b,
                                         std::uint32_t b_bytes) {
    const auto* pa = static_cast<const unsigned char*>(a);
    const auto* pb = static_cast<const unsigned char*>(b);
    for (std::uint32_t k = 0; k < b_bytes / 256; ++k) {
      const std::uint64_t db = ptx::wgmma_descriptor(pb + 256 * k);
      if (a) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
            : "+f"(acc.d[0]), "+f"(acc.d[1]), "+f"(acc.d[2]), "+f"(acc.d[3])
            : "l"(ptx::wgmma_descriptor(pa + 2048 * k)), "l"(db)
            : "memory");
      } else {
        const std::uint32_t zero = 0;
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, {%4, %4, %4, %4}, %5, p, 1, 1, "
            "0;\n}\n"
            : "+f"(acc.d[0]), "+f"(acc.d[1]), "+f"(acc.d[2]), "+f"(acc.d[3])
            : "r"(zero), "l"(db)
            : "memory");
      }
    }
  }
  // Keeps the compiler from moving the accumulator's registers across the wait.
  // PTX: none (a compiler fence on the accumulator registers)
  __device__ static void wgmma_fence_operand(WgmmaAccumulator& acc) {
    asm volatile("" : "+f"(acc.d[0]), "+f"(acc.d[1]), "+f"(acc.d[2]), "+f"(acc.d[3])::"memory");
  }
  // PTX: nanosleep.u32
  __device__ static void nanosleep(std::uint32_t ns) { __nanosleep(ns); }

  // --- async copies, fences, block sync -----------------------------------------------------
  // A CTA-local address is a valid .shared::cluster address of this CTA.
  // PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
  __device__ static void cp_async_bulk_global_to_shared(void* smem, const void* gmem, std::uint32_t bytes, Barrier& b) {
    cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem, gmem, bytes, &b.word);
  }
  // --- plain atomics (relaxed, device scope: the words may be global) --------------------------
  using AtomicRef = cuda::atomic_ref<std::int64_t, cuda::thread_scope_device>;
  // PTX: ld.relaxed.gpu.b64
  __device__ static std::int64_t atomic_load(std::int64_t* p) { return AtomicRef(*p).load(cuda::memory_order_relaxed); }
  // PTX: st.relaxed.gpu.b64
  __device__ static void atomic_store(std::int64_t* p, std::int64_t v) {
    AtomicRef(*p).store(v, cuda::memory_order_relaxed);
  }
  // PTX: atom.add.relaxed.gpu.u64
  __device__ static std::int64_t atomic_fetch_add(std::int64_t* p, std::int64_t v) {
    return AtomicRef(*p).fetch_add(v, cuda::memory_order_relaxed);
  }
  // PTX: atom.cas.relaxed.gpu.b64
  __device__ static std::int64_t atomic_cas(std::int64_t* p, std::int64_t expected, std::int64_t desired) {
    AtomicRef(*p).compare_exchange_strong(expected, desired, cuda::memory_order_relaxed);
    return expected;  // the old value, whether or not it stored
  }

  // A TMA store of shared memory to global.
  // PTX: cp.async.bulk.global.shared::cta.bulk_group
  __device__ static void cp_async_bulk_shared_to_global(void* gmem, const void* smem, std::uint32_t bytes) {
    cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, gmem, smem, bytes);
  }
  // PTX: cp.async.bulk.commit_group
  __device__ static void cp_async_bulk_commit_group() { cuda::ptx::cp_async_bulk_commit_group(); }
  // The committed stores of this thread have read their source.
  // PTX: cp.async.bulk.wait_group.read 0
  __device__ static void cp_async_bulk_wait_group_read0() {
    cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  }
  // N is an immediate in PTX: the contract's 0..7, each its own instruction; another N traps.
  // PTX: cp.async.bulk.wait_group.read N
  __device__ static void cp_async_bulk_wait_group_read(std::uint32_t pending) {
    switch (pending) {
      case 0: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{}); break;
      case 1: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<1>{}); break;
      case 2: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<2>{}); break;
      case 3: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<3>{}); break;
      case 4: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<4>{}); break;
      case 5: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<5>{}); break;
      case 6: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<6>{}); break;
      case 7: cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<7>{}); break;
      default: ptx::wait_group_out_of_range("cp_async_bulk_wait_group_read", pending); break;
    }
  }
  // PTX: cp.async.bulk.wait_group N
  __device__ static void cp_async_bulk_wait_group(std::uint32_t pending) {
    switch (pending) {
      case 0: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{}); break;
      case 1: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<1>{}); break;
      case 2: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<2>{}); break;
      case 3: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<3>{}); break;
      case 4: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<4>{}); break;
      case 5: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<5>{}); break;
      case 6: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<6>{}); break;
      case 7: cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<7>{}); break;
      default: ptx::wait_group_out_of_range("cp_async_bulk_wait_group", pending); break;
    }
  }
  // --- cp.async (non-bulk) --------------------------------------------------------------------
  // The size is an immediate: 4, 8, or 16 (any other size runs as 16).
  // PTX: cp.async.ca.shared::cta.global
  __device__ static void cp_async(void* smem, const void* gmem, std::uint32_t bytes) {
    switch (bytes) {
      case 4:
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(ptx::smem_addr(smem)), "l"(gmem) : "memory");
        break;
      case 8:
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(ptx::smem_addr(smem)), "l"(gmem) : "memory");
        break;
      default:
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(ptx::smem_addr(smem)), "l"(gmem) : "memory");
        break;
    }
  }
  // PTX: cp.async.commit_group
  __device__ static void cp_async_commit_group() { asm volatile("cp.async.commit_group;" ::: "memory"); }
  // N is an immediate in PTX: the contract's 0..7, each its own instruction; another N traps.
  // PTX: cp.async.wait_group N
  __device__ static void cp_async_wait_group(std::uint32_t pending) {
    switch (pending) {
      case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
      case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
      case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
      case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
      case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
      case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
      case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
      case 7: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
      default: ptx::wait_group_out_of_range("cp_async_wait_group", pending); break;
    }
  }
  // PTX: cp.async.wait_all
  __device__ static void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
  // PTX: cp.async.mbarrier.arrive.shared::cta.b64
  __device__ static void cp_async_mbarrier_arrive(Barrier& b) {
    asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" ::"r"(ptx::smem_addr(&b)) : "memory");
  }
  // PTX: cp.async.mbarrier.arrive.noinc.shared::cta.b64
  __device__ static void cp_async_mbarrier_arrive_noinc(Barrier& b) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ptx::smem_addr(&b)) : "memory");
  }
  // Orders this thread's generic-proxy accesses to this CTA's shared memory with its later
  // async-proxy ones (a TMA store reading them), and the reverse.
  // PTX: fence.proxy.async.shared::cta
  __device__ static void fence_proxy_async_shared_cta() { cuda::ptx::fence_proxy_async(cuda::ptx::space_shared); }
  // The same for every state space (global, and shared memory of the cluster).
  // PTX: fence.proxy.async
  __device__ static void fence_proxy_async() { cuda::ptx::fence_proxy_async(); }
  // The same for global memory only (a TMA load of bytes this thread stored to global).
  // PTX: fence.proxy.async.global
  __device__ static void fence_proxy_async_global() { cuda::ptx::fence_proxy_async(cuda::ptx::space_global); }
  // The same for the shared memory of the cluster (this CTA's and its peers').
  // PTX: fence.proxy.async.shared::cluster
  __device__ static void fence_proxy_async_shared_cluster() { cuda::ptx::fence_proxy_async(cuda::ptx::space_cluster); }
  // PTX: bar.sync 0
  __device__ static void sync_threads() { __syncthreads(); }

  // --- thread identity (1-D blocks and grids, as on the host) --------------------------------
  // PTX: mov.u32 %tid.x
  __device__ static std::uint32_t thread_idx() { return threadIdx.x; }
  // PTX: mov.u32 %ntid.x
  __device__ static std::uint32_t block_dim() { return blockDim.x; }
  // Linear over clusters, as on the host: cluster_idx() * cluster size + rank (blockIdx.x for a
  // 1-D grid without clusters). A 2-D cluster is launched on a grid of cluster_x*n by cluster_y.
  // PTX: mov.u32 %clusterid, %nclusterid.x, %cluster_nctarank, %cluster_ctarank
  __device__ static std::uint32_t block_idx() { return cluster_idx() * cluster_nctarank() + cluster_ctarank(); }
  // PTX: mov.u32 %nctaid.x, %nctaid.y
  __device__ static std::uint32_t grid_dim() { return gridDim.x * gridDim.y; }
  // PTX: WARP_SZ
  __device__ static constexpr std::uint32_t warp_size() { return 32; }
  // PTX: mov.u32 %tid.x (divided by 32)
  __device__ static std::uint32_t warp_idx() { return threadIdx.x / warp_size(); }
  // PTX: mov.u32 %tid.x (modulo 32)
  __device__ static std::uint32_t lane_idx() { return threadIdx.x % warp_size(); }
  // All 32 lanes must call it (elect.sync over the full warp), as CUTLASS's elect_one_sync.
  // PTX: elect.sync _|p, 0xffffffff
  __device__ static bool elect_one() { return ptx::elect_sync(0xffffffffu); }
  // PTX: none (the CTA's dynamic .shared window)
  __device__ static unsigned char* shared_memory() {
    extern __shared__ __align__(128) unsigned char mbcheck_dynamic_smem[];
    return mbcheck_dynamic_smem;
  }

  // --- data and checks ------------------------------------------------------------------------
  // PTX: ld (weak)
  template <class T>
  __device__ static T load(const T* p) {
    return *p;
  }
  // PTX: st (weak)
  template <class T>
  __device__ static void store(T* p, T v) {
    *p = v;
  }
  // PTX: none (a name for reports)
  __device__ static void label(Barrier&, const char*, int) {}
  // PTX: trap (after a printf)
  __device__ static void check(bool ok, const char* what) {
    if (!ok) {
      printf("mbcheck: check failed in block %u thread %u: %s\n", blockIdx.x, threadIdx.x, what);
      cuda::ptx::trap();
    }
  }
};

static_assert(Platform<DevicePlatform>, "the device backend must model the Platform contract (spec/platform.hpp)");

}  // namespace mbcheck::dev
