// Random DiffPrograms shaped like what users write (spin loops, polls with branches, token
// waits, next-phase polls after one's own arrive, expect_tx/complete_tx racing arrivals,
// negative tx, arrive_drop, several barriers, copies landing in pieces, atomics, guarded and
// unguarded data, late sync_threads, several CTAs), with a histogram of what was produced so
// the coverage is visible.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tests/differential/diff_program.hpp"

namespace mbcheck::diff {

// Counts per shape feature ("stmt:spin_try_wait", "shape:2 ctas", "pattern:next-phase poll
// after own arrive", ...): how many generated programs have it.
using Coverage = std::map<std::string, std::uint64_t>;

DiffProgram generate(std::uint64_t seed);
void add_coverage(const DiffProgram& p, Coverage& coverage);
std::string format_coverage(const Coverage& coverage, std::uint64_t programs);

}  // namespace mbcheck::diff
