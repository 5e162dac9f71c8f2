// Whether the runtime merges a bool try_wait and the wait it guards where their paths meet
// (sim/runtime/guarded_tries.cpp; docs/model.md "A bool try_wait guarding a wait"). Off by
// default: what a runtime learnt is its own, so a search in parallel waves (each worker a
// runtime) learns in another order than one job and its executions differ from one job's,
// which the search promises they do not (sim/explore/explore.hpp, ExploreOptions::jobs).
#pragma once

namespace mbcheck::sim {

bool merge_guarded_tries();
void set_merge_guarded_tries(bool on);

}  // namespace mbcheck::sim
