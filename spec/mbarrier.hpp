// A small typed handle over one mbarrier, as CUTLASS's ClusterBarrier: protocol code reads
// `bar.arrive()`, `bar.wait(phase)`; each member is one Platform instruction.
#pragma once

#include "spec/platform.hpp"

namespace mbcheck {

template <class P>
class Mbarrier {
 public:
  using Token = typename P::Token;

  MBCHECK_HD explicit Mbarrier(typename P::Barrier& raw) : raw_(&raw) {}

  MBCHECK_HD void init(std::uint32_t count) const { P::mbarrier_init(*raw_, count); }
  MBCHECK_HD void inval() const { P::mbarrier_inval(*raw_); }
  MBCHECK_HD Token arrive(std::uint32_t count = 1) const { return P::mbarrier_arrive(*raw_, count); }
  MBCHECK_HD Token arrive_no_complete(std::uint32_t count) const {
    return P::mbarrier_arrive_no_complete(*raw_, count);
  }
  MBCHECK_HD Token arrive_expect_tx(std::uint32_t bytes) const {
    return P::mbarrier_arrive_expect_tx(*raw_, bytes);
  }
  MBCHECK_HD Token arrive_drop(std::uint32_t count = 1) const {
    return P::mbarrier_arrive_drop(*raw_, count);
  }
  MBCHECK_HD void expect_tx(std::uint32_t bytes) const { P::mbarrier_expect_tx(*raw_, bytes); }
  MBCHECK_HD void complete_tx(std::uint32_t bytes) const { P::mbarrier_complete_tx(*raw_, bytes); }
  // Blocks until phase `phase` has completed (full phase number; -1 = before init).
  MBCHECK_HD void wait(std::int64_t phase) const { P::mbarrier_wait_parity(*raw_, phase); }
  MBCHECK_HD bool test_wait(std::int64_t phase) const { return P::mbarrier_test_wait_parity(*raw_, phase); }
  MBCHECK_HD bool try_wait(std::int64_t phase) const { return P::mbarrier_try_wait_parity(*raw_, phase); }
  MBCHECK_HD bool test_wait(Token token) const { return P::mbarrier_test_wait(*raw_, token); }
  MBCHECK_HD bool try_wait(Token token) const { return P::mbarrier_try_wait(*raw_, token); }
  MBCHECK_HD typename P::Barrier& raw() const { return *raw_; }

 private:
  typename P::Barrier* raw_;
};

}  // namespace mbcheck
