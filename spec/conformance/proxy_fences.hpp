// fence.proxy.async for global memory: generic stores to global, then a TMA load of them.
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

}  // namespace mbcheck::conformance
