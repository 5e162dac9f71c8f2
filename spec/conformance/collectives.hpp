// Warp collectives: shfl.sync.idx, elect.sync, and __syncwarp / shfl.sync with exited lanes.
#pragma once

#include "spec/conformance/conformance.hpp"

namespace mbcheck::conformance {

// shfl.sync.idx.b32 with c = 0x1f (__shfl_sync at width 32), PTX ISA "shfl.sync": the source
// lane is j = minLane | (b[4:0] & ~segmask[4:0]) = b & 31 (segmask 0, minLane 0), and
// pval = (j <= maxLane = 31) always holds, so every lane reads lane b & 31's operand. Two warps,
// each lane contributing 1000 + its thread index: lane l reads lane (l + 1) & 31 of its own
// warp, then with b = 32 + k (k = (l + 5) & 31) lane k.
//   out[t] = 1000 + 32 w + ((l + 1) & 31), out[64 + t] = 1000 + 32 w + ((l + 5) & 31)
struct ShflIdx {
  static constexpr const char* kName = "shfl-sync-idx";
  static constexpr std::uint32_t kThreads = 64, kCtas = 1, kClusterX = 1, kSmemBytes = 128, kResults = 128;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t t = P::thread_idx(), lane = P::lane_idx();
    const std::uint32_t mine = 1000 + t;
    const std::uint32_t next = P::shfl_sync_idx(0xffffffffu, mine, (lane + 1) & 31u);
    const std::uint32_t wrapped = P::shfl_sync_idx(0xffffffffu, mine, 32u + ((lane + 5) & 31u));
    e.result(t, static_cast<std::int32_t>(next));
    e.result(64 + t, static_cast<std::int32_t>(wrapped));
  }
  static bool expected(const std::int32_t* out, char* why) {
    const auto from = [](std::uint32_t t, std::uint32_t k) {
      return static_cast<std::int32_t>(1000 + (t / 32) * 32 + ((t % 32 + k) & 31u));
    };
    return expect_each(
               out, 0, 64, [&](std::uint32_t t) { return from(t, 1); }, "src_lane (lane + 1) & 31", why) &&
           expect_each(
               out, 64, 64, [&](std::uint32_t t) { return from(t, 5); }, "src_lane 32 + k reads lane k", why);
  }
};

// elect.sync, PTX ISA "elect.sync": "elects one predicated active leader thread from among a set
// of threads specified by membermask ... The predicate destination p is set to True for the
// leader thread, and False for all other threads ... Election of a leader thread happens
// deterministically, i.e. the same leader thread is elected for the same membermask every time."
// PTX does NOT say which lane leads (the lowest of the mask is what hardware does, not what the
// text promises), so the outcome checked is: exactly one lane of the mask, the same one in two
// elections with that mask; and for elect_one (the full warp) exactly one lane. The lanes
// elected are results (the device's line shows them). Lanes outside the mask do not execute
// the masked election (undefined for them) and write 2.
//   out[l], out[32 + l]: the two elections over 0xF0F0F0F0 (1 elected, 0 not, 2 not in mask)
//   out[64 + l]: elect_one()
struct ElectSync {
  static constexpr const char* kName = "elect-sync";
  static constexpr std::uint32_t kMask = 0xF0F0F0F0u;
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 128, kResults = 96;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t lane = P::lane_idx();
    if ((kMask >> lane) & 1u) {
      const bool first = P::elect_sync(kMask);
      const bool second = P::elect_sync(kMask);
      e.result(lane, first ? 1 : 0);
      e.result(32 + lane, second ? 1 : 0);
    } else {
      e.result(lane, 2);
      e.result(32 + lane, 2);
    }
    e.result(64 + lane, P::elect_one() ? 1 : 0);
  }
  // The one lane of out[first..first+32) holding 1, where lanes outside `mask` hold 2; else -1
  // with the reason in `why`.
  static int elected(const std::int32_t* out, std::uint32_t first, std::uint32_t mask, const char* what, char* why) {
    int lane = -1;
    for (std::uint32_t l = 0; l < 32; ++l) {
      const std::int32_t v = out[first + l];
      if (!((mask >> l) & 1u)) {
        if (v == 2) continue;
        fail(why, "%s: lane %u is outside the mask but wrote %d", what, l, static_cast<int>(v));
        return -1;
      }
      if (v == 0) continue;
      if (v != 1) {
        fail(why, "%s: lane %u wrote %d", what, l, static_cast<int>(v));
        return -1;
      }
      if (lane >= 0) {
        fail(why, "%s: lanes %d and %u both elected", what, lane, l);
        return -1;
      }
      lane = static_cast<int>(l);
    }
    if (lane < 0) fail(why, "%s: no lane elected", what);
    return lane;
  }
  static bool expected(const std::int32_t* out, char* why) {
    const int first = elected(out, 0, kMask, "elect.sync 0xF0F0F0F0 (first)", why);
    if (first < 0) return false;
    const int second = elected(out, 32, kMask, "elect.sync 0xF0F0F0F0 (second)", why);
    if (second < 0) return false;
    if (first != second)
      return fail(why, "elect.sync 0xF0F0F0F0 elected lane %d, then lane %d (PTX: the same leader every time)", first,
                  second);
    return elected(out, 64, 0xffffffffu, "elect_one (elect.sync 0xffffffff)", why) >= 0;
  }
};

// Lanes 16..31 mark their result and return (exit); lanes 0..15 then run __syncwarp and
// shfl.sync with the FULL mask. CUDA Programming Guide, __syncwarp: "all non-exited threads
// named in mask must execute a corresponding __syncwarp() with the same mask, or the result is
// undefined" (and it "guarantees memory ordering among threads participating in the barrier");
// PTX ISA "shfl.sync": it "will cause executing thread to wait until all non-exited threads
// corresponding to membermask have executed shfl.sync with the same qualifiers and same
// membermask value". So both complete; each source lane is a live one. Lane l < 16 stores
// 300 + l to shared memory, syncs, reads lane (l + 1) & 15's word, then shuffles 200 + l from
// lane (l + 1) & 15.
//   out[l] = 200 + ((l + 1) & 15), out[16 + l] = 1 (lane 16 + l ran), out[32 + l] = 300 + ((l + 1) & 15)
struct ExitedLanes {
  static constexpr const char* kName = "exited-lanes-syncwarp-shfl";
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 128, kResults = 48;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t lane = P::lane_idx();
    if (lane >= 16) {
      e.result(lane, 1);
      return;
    }
    auto* words = e.template smem_at<std::int32_t>(0);
    P::store(words + lane, static_cast<std::int32_t>(300 + lane));
    P::syncwarp(0xffffffffu);
    e.result(32 + lane, P::load(words + ((lane + 1) & 15u)));
    const std::uint32_t got = P::shfl_sync_idx(0xffffffffu, 200 + lane, (lane + 1) & 15u);
    e.result(lane, static_cast<std::int32_t>(got));
  }
  static bool expected(const std::int32_t* out, char* why) {
    return expect_each(
               out, 0, 16, [](std::uint32_t l) { return static_cast<std::int32_t>(200 + ((l + 1) & 15u)); },
               "shfl.sync (full mask, lanes 16..31 exited)", why) &&
           expect_each(
               out, 16, 16, [](std::uint32_t) { return 1; }, "lanes 16..31 ran before exiting", why) &&
           expect_each(
               out, 32, 16, [](std::uint32_t l) { return static_cast<std::int32_t>(300 + ((l + 1) & 15u)); },
               "__syncwarp (full mask, lanes 16..31 exited) orders the stores", why);
  }
};

// RECORDED, not a conformance test: elect.sync with the full mask after lanes 16..31 exited.
// Unlike shfl.sync, vote.sync, match.sync and redux.sync ("all non-exited threads"), PTX's
// elect.sync text says the executing thread waits "until all threads in the membermask execute
// the elect instruction", naming no exception for exited threads, so the outcome is not defined
// by the text (bar.warp.sync's PTX text reads the same way; the CUDA Programming Guide's
// __syncwarp is what defines ExitedLanes' sync). The device runner prints what the GPU does;
// the host should report a misuse rather than pick an answer.
//   out[l] (l < 16): elected; out[16 + l] = 1 (lane 16 + l ran)
struct ExitedLanesElect {
  static constexpr const char* kName = "exited-lanes-elect-sync (recorded)";
  static constexpr std::uint32_t kThreads = 32, kCtas = 1, kClusterX = 1, kSmemBytes = 128, kResults = 32;
  template <class E>
  MBCHECK_HD static void run(const E& e) {
    using P = typename E::Platform;
    const std::uint32_t lane = P::lane_idx();
    if (lane >= 16) {
      e.result(lane, 1);
      return;
    }
    e.result(lane, P::elect_sync(0xffffffffu) ? 1 : 0);
  }
  // What a reading with exited lanes excused would give: exactly one of lanes 0..15.
  static bool expected(const std::int32_t* out, char* why) {
    int lane = -1;
    for (std::uint32_t l = 0; l < 16; ++l) {
      if (out[l] == 1 && lane >= 0) return fail(why, "lanes %d and %u both elected", lane, l);
      if (out[l] == 1) lane = static_cast<int>(l);
    }
    if (lane < 0) return fail(why, "no lane elected");
    return expect_each(
        out, 16, 16, [](std::uint32_t) { return 1; }, "lanes 16..31 ran before exiting", why);
  }
};

}  // namespace mbcheck::conformance
