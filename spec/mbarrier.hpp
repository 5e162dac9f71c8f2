// A small typed handle over one mbarrier, as CUTLASS's ClusterBarrier: protocol code reads
// `bar.arrive()`, `bar.wait(phase)`; each member is one Platform instruction.
#pragma once

#include "spec/platform.hpp"

namespace mbcheck {

template <class P>
class Mbarrier {
 public:
  using Token = typename P::Token;
  using WaitStatus = typename P::WaitStatus;

  MBCHECK_HD explicit Mbarrier(typename P::Barrier& raw) : raw_(&raw) {}

// Calls P's instruction with the caller's site where P takes one (the host), without it
// otherwise (the device).
#define MBCHECK_CALL_P(fn, ...)                         \
  if constexpr (requires { P::fn(__VA_ARGS__, site); }) \
    return P::fn(__VA_ARGS__, site);                    \
  else                                                  \
    return P::fn(__VA_ARGS__)

  MBCHECK_HD void init(std::uint32_t count, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_init, *raw_, count);
  }
  MBCHECK_HD void inval(CallSite site = CallSite::current()) const { MBCHECK_CALL_P(mbarrier_inval, *raw_); }
  MBCHECK_HD Token arrive(std::uint32_t count = 1, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_arrive, *raw_, count);
  }
  MBCHECK_HD Token arrive_no_complete(std::uint32_t count, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_arrive_no_complete, *raw_, count);
  }
  MBCHECK_HD Token arrive_expect_tx(std::uint32_t bytes, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_arrive_expect_tx, *raw_, bytes);
  }
  MBCHECK_HD Token arrive_drop(std::uint32_t count = 1, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_arrive_drop, *raw_, count);
  }
  MBCHECK_HD void expect_tx(std::uint32_t bytes, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_expect_tx, *raw_, bytes);
  }
  MBCHECK_HD void complete_tx(std::uint32_t bytes, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_complete_tx, *raw_, bytes);
  }
  // Blocks until phase `phase` has completed (full phase number; -1 = before init).
  MBCHECK_HD void wait(std::int64_t phase, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_wait_parity, *raw_, phase);
  }
  MBCHECK_HD bool test_wait(std::int64_t phase, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_test_wait_parity, *raw_, phase);
  }
  MBCHECK_HD bool try_wait(std::int64_t phase, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_try_wait_parity, *raw_, phase);
  }
  MBCHECK_HD bool test_wait(Token token, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_test_wait, *raw_, token);
  }
  MBCHECK_HD bool try_wait(Token token, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_try_wait, *raw_, token);
  }
  // Blocks until the phase of `token` (an arrive's state token) has completed.
  MBCHECK_HD void wait(Token token, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_wait, *raw_, token);
  }
  // try_wait now, wait(status) later: the pair CUTLASS's consumer_try_wait/consumer_wait make.
  MBCHECK_HD WaitStatus try_wait_status(std::int64_t phase, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_try_wait_parity_status, *raw_, phase);
  }
  MBCHECK_HD void wait(WaitStatus status, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_wait_status, *raw_, status);
  }
  // Parity-only waits: `parity` is the phase bit (CUTLASS's PipelineState::phase()).
  MBCHECK_HD void wait_parity(std::uint32_t parity, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_wait_parity_bit, *raw_, parity);
  }
  // The same at .cluster scope (mbarrier.try_wait.parity.acquire.cluster): what a barrier that
  // peer CTAs arrive on needs for their .release.cluster arrives to order anything before it.
  MBCHECK_HD void wait_parity_cluster(std::uint32_t parity, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_wait_parity_bit_cluster, *raw_, parity);
  }
  MBCHECK_HD bool test_wait_parity(std::uint32_t parity, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_test_wait_parity_bit, *raw_, parity);
  }
  MBCHECK_HD bool try_wait_parity(std::uint32_t parity, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_try_wait_parity_bit, *raw_, parity);
  }
  MBCHECK_HD WaitStatus try_wait_parity_status(std::uint32_t parity, CallSite site = CallSite::current()) const {
    MBCHECK_CALL_P(mbarrier_try_wait_parity_bit_status, *raw_, parity);
  }
#undef MBCHECK_CALL_P
  MBCHECK_HD typename P::Barrier& raw() const { return *raw_; }

 private:
  typename P::Barrier* raw_;
};

}  // namespace mbcheck
