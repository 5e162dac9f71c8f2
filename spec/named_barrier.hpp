// A named barrier (bar.sync / bar.arrive with an id and a thread count), as CUTLASS's
// cutlass::arch::NamedBarrier: `count` threads (a multiple of the warp size) meet at barrier
// `id` (0..15) of their CTA. sync() arrives and waits for the generation to complete;
// arrive() only arrives (a producer letting others go, as FlashAttention-3's warp-group
// scheduler does). Every use of one id must give the same count.
#pragma once

#include "spec/platform.hpp"

namespace mbcheck {

template <class P>
class NamedBarrier {
 public:
  MBCHECK_HD constexpr NamedBarrier(std::uint32_t count, std::uint32_t id) : count_(count), id_(id) {}

  MBCHECK_HD void sync(CallSite site = CallSite::current()) const {
    if constexpr (requires { P::bar_sync(id_, count_, site); })
      P::bar_sync(id_, count_, site);
    else
      P::bar_sync(id_, count_);
  }
  MBCHECK_HD void arrive(CallSite site = CallSite::current()) const {
    if constexpr (requires { P::bar_arrive(id_, count_, site); })
      P::bar_arrive(id_, count_, site);
    else
      P::bar_arrive(id_, count_);
  }
  MBCHECK_HD std::uint32_t count() const { return count_; }
  MBCHECK_HD std::uint32_t id() const { return id_; }

 private:
  std::uint32_t count_, id_;
};

}  // namespace mbcheck
