// CUTLASS's tools/util print_error.hpp for host-compiled tests: CUTE's checking macros
// (cute/util/debug.hpp) are what the pipeline tests use from it.
#pragma once

#include <cute/util/debug.hpp>
