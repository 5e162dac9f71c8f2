// The race detector over chunks shared copy-on-write (its definitions:
// race_detector_impl.hpp; why two representations: race_clocks.hpp).
#include "sim/runtime/race_detector_impl.hpp"

namespace mbcheck::sim {

template class RaceDetectorCore<SharedClock>;

}  // namespace mbcheck::sim
