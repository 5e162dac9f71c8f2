// fence.proxy.async for global memory: generic stores to global, then a TMA load of them
// (and, recorded, the .shared::cta fence in its place); and for shared memory in the other
// direction: generic reads of a stage, then a TMA load that refills it.
#pragma once

#include "spec/conformance/conformance.hpp"

namespace mbcheck::conformance {

// Thread 0 stores 64 bytes to global memory (generic proxy), fences, and loads them into
// shared memory with cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes (async
// proxy), completing a barrier it waits on. PTX ISA "membar/fence": fence.proxy.async
// "establish[es] an ordering between memory accesses that may happen through different
// proxies ... The memory ordering is limited only to operations performed on objects in the
// state space specified. If no state space is specified, then the memory ordering applies on
// all state spaces": .global and the unqualified form both cover the global stores (the
// .shared::cta form would not). The wait's completion makes the copy's writes visible.
//   out[i] = 0x300 + i (i < 16)
template <int Kind>  // 0: fence.proxy.async.global, 1: fence.proxy.async
struct ProxyFenceGlobalThenTma {
  static constexpr const char* kName =
      Kind == 0 ? "fence-proxy-async-global-then-tma-load" : "fence-proxy-async-then-tma-load";
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 256, kResults = 16;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t t = P::thread_idx();
    auto* landed = e.template smem_at<std::uint32_t>(128);
    auto* global = e.template gmem_at<std::uint32_t>(0);
    if (t == 0) e.bar(0).init(1);
    P::sync_threads();
    if (t != 0) return;
    for (std::uint32_t i = 0; i < 16; ++i) P::store(global + i, 0x300u + i);
    if constexpr (Kind == 0)
      P::fence_proxy_async_global();
    else
      P::fence_proxy_async();
    e.bar(0).arrive_expect_tx(64);
    P::cp_async_bulk_global_to_shared(landed, global, 64, e.bar(0).raw());
    e.bar(0).wait(std::int64_t{0});
    for (std::uint32_t i = 0; i < 16; ++i) e.result(i, static_cast<std::int32_t>(P::load(landed + i)));
  }
  static bool expected(const std::int32_t* out, char* why) {
    return expect_each(
        out, 0, 16, [](std::uint32_t i) { return static_cast<std::int32_t>(0x300 + i); },
        Kind == 0 ? "TMA load after fence.proxy.async.global" : "TMA load after fence.proxy.async", why);
  }
};
using ProxyFenceGlobal = ProxyFenceGlobalThenTma<0>;
using ProxyFenceAll = ProxyFenceGlobalThenTma<1>;

// The other direction: generic reads of shared memory, then an async-proxy write of the same
// bytes. Thread 0 (the producer) loads 64 bytes A into a shared stage with a TMA copy
// (cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes) completing barrier 0;
// thread 32 (the consumer) waits for it, reads the stage with ordinary loads, and releases it
// by arriving on barrier 1; the producer waits on barrier 1 and refills the stage with 64
// bytes B, completing barrier 0's next phase, which the consumer waits for and reads. A
// proxy fence lies on the path from the first reads to the refill: the consumer's
// fence.proxy.async.shared::cta after its reads, before its arrive (Kind 0), or the
// producer's after its wait, before the copy (Kind 1). PTX ISA 8.9.5: the read precedes the
// async write in proxy-preserved base causality order when "there is an alias proxy fence
// along the base causality path" (read, fence, release, acquire, copy; or read, release,
// acquire, fence, copy), and then (8.10.6) "If a read R precedes an overlapping write W in
// causality order, then R cannot read from W": the first reads see A, never B. The second
// reads come after barrier 0's completion of the refill (the copy's writes made visible by
// the wait): B. Without either fence the reads and the copy's writes are in a data race
// (docs/semantics.md, "A generic read followed by an async write").
//   out[i] = 0x500 + i, out[16 + i] = 0x600 + i (i < 16)
// Kind 2, recorded (RecordedTests): no fence at all, a data race in PTX; the GPU runner prints
// whether the first reads still saw A (what a race allows but does not promise), the host
// reports the race.
template <int Kind>  // 0: the reader fences before its release, 1: the issuer after its wait, 2: none
struct ProxyFenceReadThenTmaWrite {
  static constexpr const char* kName = Kind == 0   ? "reads-fence-release-then-tma-refill"
                                       : Kind == 1 ? "reads-release-acquire-fence-then-tma-refill"
                                                   : "reads-release-then-tma-refill-unfenced (recorded)";
  static constexpr const char* kAsExpected = "the reads before the release saw the first load's bytes";
  static constexpr std::uint32_t kThreads = 64, kCtas = 1, kClusterX = 1, kSmemBytes = 256, kResults = 32;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t t = P::thread_idx();
    auto* stage = e.template smem_at<std::uint32_t>(128);
    auto* a = e.template gmem_at<std::uint32_t>(0);
    auto* b = e.template gmem_at<std::uint32_t>(64);
    if (t == 0) {
      e.bar(0).init(1);  // full: the producer's arrive.expect_tx and the copy's bytes
      e.bar(1).init(1);  // empty: the consumer's release
      for (std::uint32_t i = 0; i < 16; ++i) {
        P::store(a + i, 0x500u + i);
        P::store(b + i, 0x600u + i);
      }
      P::fence_proxy_async_global();  // the copies read what these stores wrote
    }
    P::sync_threads();
    if (t == 0) {
      e.bar(0).arrive_expect_tx(64);
      P::cp_async_bulk_global_to_shared(stage, a, 64, e.bar(0).raw());
      e.bar(1).wait(std::int64_t{0});
      if constexpr (Kind == 1) P::fence_proxy_async_shared_cta();
      e.bar(0).arrive_expect_tx(64);
      P::cp_async_bulk_global_to_shared(stage, b, 64, e.bar(0).raw());
    } else if (t == 32) {
      e.bar(0).wait(std::int64_t{0});
      for (std::uint32_t i = 0; i < 16; ++i) e.result(i, static_cast<std::int32_t>(P::load(stage + i)));
      if constexpr (Kind == 0) P::fence_proxy_async_shared_cta();
      e.bar(1).arrive();
      e.bar(0).wait(std::int64_t{1});
      for (std::uint32_t i = 0; i < 16; ++i) e.result(16 + i, static_cast<std::int32_t>(P::load(stage + i)));
    }
  }
  static bool expected(const std::int32_t* out, char* why) {
    return expect_each(
               out, 0, 16, [](std::uint32_t i) { return static_cast<std::int32_t>(0x500 + i); },
               "reads of the stage before its release (never the refill's bytes)", why) &&
           expect_each(
               out, 16, 16, [](std::uint32_t i) { return static_cast<std::int32_t>(0x600 + i); },
               "reads of the refilled stage", why);
  }
};
using ProxyFenceReaderBeforeRelease = ProxyFenceReadThenTmaWrite<0>;
using ProxyFenceIssuerAfterAcquire = ProxyFenceReadThenTmaWrite<1>;
using ProxyFenceReadUnfenced = ProxyFenceReadThenTmaWrite<2>;

// Recorded, not judged (RecordedTests): the WRONG fence for global memory. Thread 0, 1000
// times: stores 1024 words (4 KiB) of global memory with ordinary stores, values fresh each
// iteration ((iteration + 1) << 12 | i, and the buffer starts zeroed), issues only
// fence.proxy.async.shared::cta, then at once a TMA load of those 4 KiB into shared memory
// (arrive.expect_tx, cp.async.bulk, wait), and counts the words that landed different from
// what it stored. PTX ISA 9.1 9.7.13.4 (membar/fence): "The memory ordering is limited only to
// operations performed on objects in the state space specified": a .shared::cta fence does not
// order the global stores before the async proxy's reads of them, so each landed word may be
// the old value (a race the host reports). Then the same 1000 times with the right fence,
// fence.proxy.async.global, as a control (PTX defines that outcome: no stale word).
// After each iteration's reads of the landed words, fence.proxy.async.shared::cta orders them
// before the next TMA write of the same bytes (generic reads, then async-proxy writes), so the
// two halves differ only in the fence after the global stores. Too long for the host to
// explore (2000 iterations of 1024 words); the GPU runner prints the sums over launches.
//   out[0] stale words with .shared::cta only, out[1] words compared, out[2] iterations with a
//   stale word; out[3..5] the same with fence.proxy.async.global (the control)
struct ProxyFenceSharedOnlyThenTmaGlobal {
  static constexpr const char* kName = "proxy-fence-shared-only-then-tma-load-global (recorded)";
  static constexpr std::uint32_t kWords = kGmemBytes / 4, kBytes = kWords * 4, kIters = 1000;
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 128 + kBytes, kResults = 6;
  static constexpr bool kSumLaunches = true;  // the runner prints out[] summed over launches
  static constexpr const char* kAsExpected = "no stale word seen, with either fence";
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t t = P::thread_idx();
    auto* landed = e.template smem_at<std::uint32_t>(128);
    auto* global = e.template gmem_at<std::uint32_t>(0);
    if (t == 0) e.bar(0).init(1);
    P::sync_threads();
    if (t != 0) return;
    std::int64_t phase = 0;  // the barrier's phase: one per iteration, across both halves
    for (std::uint32_t variant = 0; variant < 2; ++variant) {
      std::int32_t stale = 0, stale_iterations = 0;
      for (std::uint32_t it = 0; it < kIters; ++it, ++phase) {
        const std::uint32_t base = static_cast<std::uint32_t>(phase + 1) << 12;
        for (std::uint32_t i = 0; i < kWords; ++i) P::store(global + i, base | i);
        if (variant == 0)
          P::fence_proxy_async_shared_cta();  // the wrong state space: orders no global access
        else
          P::fence_proxy_async_global();  // the control: the right one
        e.bar(0).arrive_expect_tx(kBytes);
        P::cp_async_bulk_global_to_shared(landed, global, kBytes, e.bar(0).raw());
        e.bar(0).wait(phase);
        std::int32_t here = 0;
        for (std::uint32_t i = 0; i < kWords; ++i) here += P::load(landed + i) != (base | i) ? 1 : 0;
        stale += here;
        stale_iterations += here != 0 ? 1 : 0;
        P::fence_proxy_async_shared_cta();  // these reads before the next copy's writes
      }
      e.result(3 * variant, stale);
      e.result(3 * variant + 1, static_cast<std::int32_t>(kIters * kWords));
      e.result(3 * variant + 2, stale_iterations);
    }
  }
  // True when no word was stale with either fence; the runner records, it does not judge.
  static bool expected(const std::int32_t* out, char* why) {
    if (out[0] != 0 || out[3] != 0)
      return fail(why, "stale words: %d of %d after .shared::cta only (in %d iterations), %d of %d after .global",
                  static_cast<int>(out[0]), static_cast<int>(out[1]), static_cast<int>(out[2]),
                  static_cast<int>(out[3]), static_cast<int>(out[4]));
    return true;
  }
};

}  // namespace mbcheck::conformance
