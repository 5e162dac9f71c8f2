// The generator's CUTLASS shapes that the search's reductions serve (generator.cpp calls
// these): the epilogue load pipeline's producer lanes, and a consumer that branches on a bool
// try_wait around the wait it guards.
#pragma once

#include <set>
#include <string>

#include "sim/explore/strategy.hpp"
#include "tests/differential/diff_program.hpp"

namespace mbcheck::diff {

// 8 lanes of one CTA (warps of one thread) arrive on barrier 0; lane 0 arms it by a separate
// expect_tx and issues the copy before its own arrive; the last lane waits and reads the
// slot. Sometimes one thing is off: another lane issues the copy (it may land before the
// arming), lane 0's arrival is missing (the count met without it, or not), lane 0 arrives only
// after waiting for phase 0 (its arrival in phase 1), or it arrives before its expect_tx.
// Returns how many leading scripts may take random statements (the others keep their shape,
// so that the reference's state space stays small).
std::uint32_t plant_epilogue_load(DiffProgram& p, sim::SplitMix64& rng);

// A producer arms and fills one or two stages (barriers 0, 1: arrive.expect_tx and a copy
// each); the consumer polls each by a bool try_wait and waits only when it failed, then reads
// the slot. Its branches meet (try_guard_wait) or differ (try_then_wait records the answer).
void plant_bool_try_consumer(DiffProgram& p, sim::SplitMix64& rng);

// Coverage features of those shapes.
void add_cutlass_coverage(const DiffProgram& p, std::set<std::string>& seen);

}  // namespace mbcheck::diff
