// CUTLASS's unit-test header (test/unit/common/cutlass_unit_test.h, which includes GoogleTest)
// as the host runner needs it: TEST registers a case with the runner (runner.cpp), the EXPECT
// and ASSERT macros record failures there, and the SM90 feature gate is open (the host models
// SM90). A case fails when an expectation fails or when a kernel it launched is not verified.
#pragma once

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#define CUDA_12_0_SM90_FEATURES_SUPPORTED 1
#define CUTLASS_ARCH_MMA_SM90_SUPPORTED 1

namespace mbcheck::cutlass_unit {

using CaseBody = void (*)();
int register_case(const char* suite, const char* name, CaseBody body);
void record_failure(const char* file, int line, const std::string& what);
// The harness's iteration counts (testbed.h draws them from rand()): the runner's list.
int next_random();

}  // namespace mbcheck::cutlass_unit

// testbed.h draws each launch's iteration count from rand(): the runner answers with the
// counts it was given (--iterations), so that a run is reproducible and sized for the host.
#define rand() ::mbcheck::cutlass_unit::next_random()

#define MBCHECK_UNIT_CASE_NAME(suite, name) mbcheck_unit_case_##suite##_##name
#define TEST(suite, name)                                                                                 \
  static void MBCHECK_UNIT_CASE_NAME(suite, name)();                                                      \
  [[maybe_unused]] static const int mbcheck_unit_registered_##suite##_##name =                            \
      ::mbcheck::cutlass_unit::register_case(#suite, #name, &MBCHECK_UNIT_CASE_NAME(suite, name));        \
  static void MBCHECK_UNIT_CASE_NAME(suite, name)()

#define MBCHECK_UNIT_CHECK(cond, text, fatal)                                                        \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      ::mbcheck::cutlass_unit::record_failure(__FILE__, __LINE__, text);                             \
      if (fatal) return;                                                                             \
    }                                                                                                \
  } while (0)
#define EXPECT_TRUE(c) MBCHECK_UNIT_CHECK(static_cast<bool>(c), "EXPECT_TRUE(" #c ")", false)
#define EXPECT_FALSE(c) MBCHECK_UNIT_CHECK(!static_cast<bool>(c), "EXPECT_FALSE(" #c ")", false)
#define EXPECT_EQ(a, b) MBCHECK_UNIT_CHECK((a) == (b), "EXPECT_EQ(" #a ", " #b ")", false)
#define EXPECT_NE(a, b) MBCHECK_UNIT_CHECK((a) != (b), "EXPECT_NE(" #a ", " #b ")", false)
#define ASSERT_TRUE(c) MBCHECK_UNIT_CHECK(static_cast<bool>(c), "ASSERT_TRUE(" #c ")", true)
#define ASSERT_FALSE(c) MBCHECK_UNIT_CHECK(!static_cast<bool>(c), "ASSERT_FALSE(" #c ")", true)
#define ASSERT_EQ(a, b) MBCHECK_UNIT_CHECK((a) == (b), "ASSERT_EQ(" #a ", " #b ")", true)
#define ASSERT_NE(a, b) MBCHECK_UNIT_CHECK((a) != (b), "ASSERT_NE(" #a ", " #b ")", true)
