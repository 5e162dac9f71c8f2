// Between the watchdog's thread (watchdog.cpp) and the hang signal's handler (crash.cpp): the
// watchdog names the runtime it saw stuck, with its progress count, and signals its OS thread;
// the handler lands that thread (a hang verdict) only if it is still stuck there.
#pragma once

#include <cstdint>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim::watchdog {

int hang_signal();                         // the signal the watchdog sends (a real-time one)
inline constexpr int kHangLanding = 4096;  // sigsetjmp's value for a hang: no signal number
bool hang_requested(const Runtime& rt);    // async-signal-safe
void clear_hang_request();                 // async-signal-safe

// A fork's child inherits neither the watchdog's lock held nor its thread.
void register_fork_hooks();

}  // namespace mbcheck::sim::watchdog
