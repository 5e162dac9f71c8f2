// The generator's cluster and warp-collective programs (generator.cpp calls these).
#pragma once

#include <set>
#include <string>

#include "sim/explore/strategy.hpp"
#include "tests/differential/diff_program.hpp"

namespace mbcheck::diff {

// A cluster program (2x1 or 2x2) shaped like what users write: init, fence.mbarrier_init and a
// cluster sync before remote use; a producer CTA multicasting to the cluster while the
// consumers release its empty barrier remotely; remote expect_tx/complete_tx; DSMEM handoffs
// through remote arrives or barrier.cluster; a cluster sync before exit. Mutations drop the
// fence, a sync or a wait, or weaken a release, and random cluster statements are mixed in.
DiffProgram generate_cluster(sim::SplitMix64& rng);

// Turns p (one CTA, warps of 2 lanes: p.warp_size == 2) into a collective program: every
// lane of a warp gets the same one or two collectives (syncwarp, elect_sync, shfl_idx), in
// order, between its statements, sometimes with a store before and a load after them in
// different lanes. Named-barrier statements (not modelled with warps of 2) become stores.
void plant_collectives(DiffProgram& p, sim::SplitMix64& rng);

// Coverage features of the cluster and collective programs (shape and patterns).
void add_cluster_coverage(const DiffProgram& p, std::set<std::string>& seen);

}  // namespace mbcheck::diff
