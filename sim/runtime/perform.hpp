// Runtime::perform, shared by the .cpp files that implement operations (internal to sim/).
#pragma once

#include <fmt/format.h>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

// Runs an operation's body; a misuse it finds ends the execution with that verdict, unless
// the launch proceeds past the misuses the hardware answers (OnMisuse::proceed): then the
// misuse is kept as the execution's root and the body runs again as the hardware runs it
// (its checks throw before they change anything, so the first attempt left no trace).
template <class F>
auto Runtime::perform(F&& f) {
  try {
    return f();
  } catch (const MisuseError& e) {
    if (!answer_as_hardware(e)) end_misuse(e);
  }
  MbarrierState& bar = *current_->op.bar;  // answer_as_hardware: an mbarrier operation's
  struct Excuse {
    MbarrierState& bar;
    ~Excuse() { bar.excused = false; }
  } excuse{bar};
  bar.excused = true;
  try {
    return f();
  } catch (const MisuseError& e) {
    end_misuse(e);  // one the hardware does not answer (an over-arrival: a trap)
  }
}

}  // namespace mbcheck::sim
