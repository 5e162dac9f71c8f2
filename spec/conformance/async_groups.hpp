// wait_group N for every N of the contract's range 0..7: bulk (TMA) stores and cp.async.
#pragma once

#include "spec/conformance/conformance.hpp"

namespace mbcheck::conformance {

// The value of word w (0..3) of group g (0..7)'s 16 bytes.
MBCHECK_HD constexpr std::uint32_t group_word(std::uint32_t base, std::uint32_t g, std::uint32_t w) {
  return base + 0x100u * (g + 1) + w;
}

// Eight bulk async-groups, each one 16-byte TMA store (cp.async.bulk.global.shared::cta
// .bulk_group) of shared slot g to global slot g, after fence.proxy.async.shared::cta (the
// stores that filled the slots, to the async proxy that reads them). Then for N = 7 down to 0:
// cp.async.bulk.wait_group.read N, after which (PTX ISA "cp.async.bulk.wait_group": "wait until
// only N or fewer of the most recent bulk async-groups are pending"; .read: until their reads of
// the source are done) group 7 - N has read its slot, which is overwritten; then
// cp.async.bulk.wait_group N, after which group 7 - N is complete, its writes "made visible to
// the executing thread", and its global slot is read. Finally, after wait_group 0, all of global.
// One thread (thread 0) does it all.
//   out[4 g + w] = out[32 + 4 g + w] = group_word(0, g, w)
struct BulkStoreWaitGroup {
  static constexpr const char* kName = "bulk-store-wait-group-0-7";
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 256, kResults = 64;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    if (P::thread_idx() != 0) return;
    auto* slots = e.template smem_at<std::uint32_t>(0);
    auto* global = e.template gmem_at<std::uint32_t>(0);
    for (std::uint32_t g = 0; g < 8; ++g)
      for (std::uint32_t w = 0; w < 4; ++w) P::store(slots + 4 * g + w, group_word(0, g, w));
    P::fence_proxy_async_shared_cta();
    for (std::uint32_t g = 0; g < 8; ++g) {
      P::cp_async_bulk_shared_to_global(global + 4 * g, slots + 4 * g, 16);
      P::cp_async_bulk_commit_group();
    }
    for (std::uint32_t n = 8; n-- > 0;) {
      const std::uint32_t g = 7 - n;  // the oldest group still pending
      P::cp_async_bulk_wait_group_read(n);
      for (std::uint32_t w = 0; w < 4; ++w) P::store(slots + 4 * g + w, 0xdeadu);
      P::cp_async_bulk_wait_group(n);
      for (std::uint32_t w = 0; w < 4; ++w) e.result(4 * g + w, static_cast<std::int32_t>(P::load(global + 4 * g + w)));
    }
    for (std::uint32_t i = 0; i < 32; ++i) e.result(32 + i, static_cast<std::int32_t>(P::load(global + i)));
  }
  static bool expected(const std::int32_t* out, char* why) {
    const auto want = [](std::uint32_t i) { return static_cast<std::int32_t>(group_word(0, i / 4, i % 4)); };
    return expect_each(out, 0, 32, want, "global slot 7 - N after wait_group.read N + overwrite + wait_group N", why) &&
           expect_each(out, 32, 32, want, "global after wait_group 0", why);
  }
};

// The same for cp.async (non-bulk, the generic proxy): thread 0 stores eight 16-byte slots of
// global memory, then copies slot g to shared slot g with cp.async (16 B) and commits a group
// for each (PTX ISA 8.9.1.1: the copies are "ordered after prior instructions in the same
// thread", so they read the stores). For N = 7 down to 0: cp.async.wait_group N ("wait till only
// N or fewer of the most recent cp.async-groups are pending and all the prior cp.async-groups
// committed by the executing threads are complete"), then shared slot 7 - N is read; finally,
// after wait_group 0, all of shared.
//   out[4 g + w] = out[32 + 4 g + w] = group_word(0x10000, g, w)
struct CpAsyncWaitGroup {
  static constexpr const char* kName = "cp-async-wait-group-0-7";
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 256, kResults = 64;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    if (P::thread_idx() != 0) return;
    auto* slots = e.template smem_at<std::uint32_t>(0);
    auto* global = e.template gmem_at<std::uint32_t>(0);
    for (std::uint32_t g = 0; g < 8; ++g)
      for (std::uint32_t w = 0; w < 4; ++w) P::store(global + 4 * g + w, group_word(0x10000u, g, w));
    for (std::uint32_t g = 0; g < 8; ++g) {
      P::cp_async(slots + 4 * g, global + 4 * g, 16);
      P::cp_async_commit_group();
    }
    for (std::uint32_t n = 8; n-- > 0;) {
      const std::uint32_t g = 7 - n;
      P::cp_async_wait_group(n);
      for (std::uint32_t w = 0; w < 4; ++w) e.result(4 * g + w, static_cast<std::int32_t>(P::load(slots + 4 * g + w)));
    }
    for (std::uint32_t i = 0; i < 32; ++i) e.result(32 + i, static_cast<std::int32_t>(P::load(slots + i)));
  }
  static bool expected(const std::int32_t* out, char* why) {
    const auto want = [](std::uint32_t i) { return static_cast<std::int32_t>(group_word(0x10000u, i / 4, i % 4)); };
    return expect_each(out, 0, 32, want, "shared slot 7 - N after cp.async.wait_group N", why) &&
           expect_each(out, 32, 32, want, "shared after cp.async.wait_group 0", why);
  }
};

}  // namespace mbcheck::conformance
