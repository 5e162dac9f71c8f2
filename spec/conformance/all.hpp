// Every conformance test (spec/conformance/conformance.hpp says what one is): both runners,
// tests/test_conformance.cpp on the host and device/test_conformance.cu on the GPU, run
// AllTests; RecordedTests are programs whose outcome the PTX text leaves undefined, which the
// GPU runner runs and prints without judging. A recorded test may also give kAsExpected (what
// its expected() returning true means, for the printed line) and kSumLaunches (print out[]
// summed over the launches, for counts, instead of the last launch's).
#pragma once

#include "spec/conformance/async_groups.hpp"
#include "spec/conformance/barriers.hpp"
#include "spec/conformance/cluster_scope.hpp"
#include "spec/conformance/collectives.hpp"
#include "spec/conformance/proxy_fences.hpp"

namespace mbcheck::conformance {

using AllTests = TestList<ShflIdx, ElectSync, ExitedLanes, BulkStoreWaitGroup, CpAsyncWaitGroup, BarRedThenSync,
                          WaitOnToken, ProxyFenceGlobal, ProxyFenceAll, ProxyFenceReaderBeforeRelease,
                          ProxyFenceIssuerAfterAcquire, ClusterPublication>;
using RecordedTests =
    TestList<ExitedLanesElect, ProxyFenceSharedOnlyThenTmaGlobal, ProxyFenceReadUnfenced, CtaAcquireOfPeerRelease>;

}  // namespace mbcheck::conformance
