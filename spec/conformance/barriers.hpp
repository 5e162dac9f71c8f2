// Block barriers and mbarrier tokens: bar.red on barrier 0 beside __syncthreads, and a
// blocking wait on the state token of an arrive.
#pragma once

#include "spec/conformance/conformance.hpp"

namespace mbcheck::conformance {

// __syncthreads_count / _and / _or, then __syncthreads: bar.red.popc, .and, .or on barrier 0
// over all threads of the CTA, then bar.sync 0. PTX ISA "bar": "bar.red should not be
// intermixed with bar.sync or bar.arrive using the same active barrier": each reduction
// completes (every thread arrived) before any thread's next instruction on barrier 0, so no
// two kinds are ever active on it together: legal, and "the final value is written to the
// destination register in all threads waiting at the barrier". 128 threads, thread t's
// predicate for popc is t % 3 == 0 (43 of them), for and t < 200 (all), for or t == 77.
//   out[t] = 43, out[128 + t] = 1, out[256 + t] = 1
struct BarRedThenSync {
  static constexpr const char* kName = "bar-red-then-syncthreads";
  static constexpr std::uint32_t kThreads = 128, kCtas = 1, kClusterX = 1, kSmemBytes = 128, kResults = 384;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t t = P::thread_idx(), n = P::block_dim();
    const std::uint32_t popc = P::bar_red_popc(0, n, t % 3 == 0);
    const bool all = P::bar_red_and(0, n, t < 200);
    const bool any = P::bar_red_or(0, n, t == 77);
    P::sync_threads();
    e.result(t, static_cast<std::int32_t>(popc));
    e.result(128 + t, all ? 1 : 0);
    e.result(256 + t, any ? 1 : 0);
  }
  static bool expected(const std::int32_t* out, char* why) {
    return expect_each(
               out, 0, 128, [](std::uint32_t) { return 43; }, "bar.red.popc 0 (t % 3 == 0 of 128)", why) &&
           expect_each(
               out, 128, 128, [](std::uint32_t) { return 1; }, "bar.red.and 0 (every thread true)", why) &&
           expect_each(
               out, 256, 128, [](std::uint32_t) { return 1; }, "bar.red.or 0 (thread 77 true)", why);
  }
};

// mbarrier wait on a state token: thread 0 initialises a barrier for the CTA's 32 threads and
// the CTA syncs; each thread stores 500 + t to its shared word, arrives (.release.cta) keeping
// the token, and waits on it (mbarrier.try_wait with the state: "the phase indicated by the
// state ... completed"; .acquire.cta), then reads its neighbour's word (the arrive-release of
// every thread of the phase happens before the acquire that observed its completion) and
// tests the token once more.
//   out[t] = 500 + (t + 1) % 32, out[32 + t] = 1
struct WaitOnToken {
  static constexpr const char* kName = "mbarrier-wait-on-token";
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 256, kResults = 64;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t t = P::thread_idx(), n = P::block_dim();
    auto* words = e.template smem_at<std::int32_t>(128);
    if (t == 0) e.bar(0).init(n);
    P::sync_threads();
    P::store(words + t, static_cast<std::int32_t>(500 + t));
    const auto token = e.bar(0).arrive();
    e.bar(0).wait(token);
    e.result(t, P::load(words + (t + 1) % n));
    e.result(32 + t, e.bar(0).test_wait(token) ? 1 : 0);
  }
  static bool expected(const std::int32_t* out, char* why) {
    return expect_each(
               out, 0, 32, [](std::uint32_t t) { return static_cast<std::int32_t>(500 + (t + 1) % 32); },
               "the neighbour's word after the wait on the token", why) &&
           expect_each(
               out, 32, 32, [](std::uint32_t) { return 1; }, "test_wait(token) after the wait", why);
  }
};

}  // namespace mbcheck::conformance
