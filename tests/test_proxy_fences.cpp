// --proxy-fences strict, the default (docs/semantics.md, "A generic read followed by an async write"): a
// consumer reads a stage with an ordinary load and releases it; the producer waits for the
// release and refills the stage by a bulk copy (the async proxy). PTX's memory model orders the
// pair only with a proxy fence: the reader's, after its read and before its release, or the
// issuer's, after its wait and before the copy. Without one it is a race; `--proxy-fences
// writes` (fences from writes only, mbcheck's rule before 0.3) accepts it.
#include <catch2/catch.hpp>

#include "sim/check.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;
using P = HostPlatform;

namespace {
enum class Fence { none, reader_before_release, reader_after_release, issuer_after_wait, issuer_before_wait };

ExploreResult refill(Fence fence, ProxyFences mode) {
  LaunchShape shape = threads(2);
  shape.proxy_fences = mode;
  FunctionProgram prog(shape, [fence] {
    alignas(16) static std::int64_t src[2][2] = {{1, 2}, {3, 4}};
    auto* stage = smem_word(0);  // 16 bytes: words 0 and 1
    Bar full = smem_bar(0), empty = smem_bar(1);
    if (P::thread_idx() == 0) {
      full.init(1);
      empty.init(1);
    }
    P::sync_threads();
    if (P::thread_idx() == 0) {  // producer: fill, wait for the release, refill
      full.arrive_expect_tx(16);
      P::cp_async_bulk_global_to_shared(stage, src[0], 16, full.raw());
      if (fence == Fence::issuer_before_wait) P::fence_proxy_async_shared_cta();
      empty.wait(0);
      if (fence == Fence::issuer_after_wait) P::fence_proxy_async_shared_cta();
      full.arrive_expect_tx(16);
      P::cp_async_bulk_global_to_shared(stage, src[1], 16, full.raw());
      full.wait(1);
    } else {  // consumer: read the stage, release it
      full.wait(0);
      (void)P::load(stage);
      if (fence == Fence::reader_before_release) P::fence_proxy_async_shared_cta();
      empty.arrive();
      if (fence == Fence::reader_after_release) P::fence_proxy_async_shared_cta();
    }
  });
  return explore_all(prog);
}
}  // namespace

TEST_CASE("strict: a stage read, released and refilled by the async proxy without a fence is a race",
          "[proxy][strict]") {
  const ExploreResult r = refill(Fence::none, ProxyFences::strict);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
  CHECK_THAT(r.bug->message, Catch::Contains("overwrites") && Catch::Contains("fence.proxy.async.shared::cta") &&
                                 Catch::Contains("read it with an ordinary load"));
}

TEST_CASE("strict: the reader's fence after its read and before its release orders the refill", "[proxy][strict]") {
  const ExploreResult r = refill(Fence::reader_before_release, ProxyFences::strict);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("strict: the issuer's fence after its wait orders the refill", "[proxy][strict]") {
  const ExploreResult r = refill(Fence::issuer_after_wait, ProxyFences::strict);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}

TEST_CASE("strict: another thread's fence after it learnt of the read orders the refill", "[proxy][strict]") {
  // Thread 1 reads and hands over to thread 2 (barrier 2), which fences and releases the stage.
  for (const bool after : {true, false}) {
    LaunchShape shape = threads(3);
    FunctionProgram prog(shape, [after] {
      alignas(16) static std::int64_t src[2] = {3, 4};
      auto* stage = smem_word(0);
      Bar full = smem_bar(0), empty = smem_bar(1), handed = smem_bar(2);
      if (P::thread_idx() == 0) {
        full.init(1);
        empty.init(1);
        handed.init(1);
      }
      P::sync_threads();
      if (P::thread_idx() == 0) {
        full.arrive();
        empty.wait(0);
        full.arrive_expect_tx(16);
        P::cp_async_bulk_global_to_shared(stage, src, 16, full.raw());
        full.wait(1);
      } else if (P::thread_idx() == 1) {
        full.wait(0);
        (void)P::load(stage);
        handed.arrive();
      } else {
        if (!after) P::fence_proxy_async_shared_cta();
        handed.wait(0);
        if (after) P::fence_proxy_async_shared_cta();
        empty.arrive();
      }
    });
    const ExploreResult r = explore_all(prog);
    INFO("thread 2 fences " << (after ? "after" : "before") << " it learns of the read");
    CHECK(r.bug.has_value() == !after);
  }
}

TEST_CASE("strict: a fence on the wrong side of the synchronisation orders nothing", "[proxy][strict]") {
  // The reader's after its release, or the issuer's before its wait: the read is not before it.
  const Fence fence = GENERATE(Fence::reader_after_release, Fence::issuer_before_wait);
  const ExploreResult r = refill(fence, ProxyFences::strict);
  REQUIRE(r.bug);
  CHECK(r.bug->verdict == Verdict::race);
}

TEST_CASE("the default is strict; writes (the rule before 0.3) lets a read go unfenced", "[proxy]") {
  CHECK(LaunchShape{}.proxy_fences == ProxyFences::strict);
  const Fence fence = GENERATE(Fence::none, Fence::reader_after_release, Fence::issuer_before_wait);
  const ExploreResult r = refill(fence, ProxyFences::writes);
  CHECK_FALSE(r.bug);
  CHECK(r.stats.complete);
}
