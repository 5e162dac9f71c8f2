// The shared-memory window (every kernel's extern __shared__ array) as the running CTA's
// shared memory: while a launch runs, the window's pages are the running CTA's own (a second
// mapping of them), so that a plain load or store of shared memory reads and writes that CTA's
// bytes, the bytes the runtime's instructions (bulk copies, barriers) use. Outside a launch
// the window admits no access.
#pragma once

#include <cstdint>

#include "mbcheck/cutlass_host/thread_identity.hpp"

namespace mbcheck::cutlass_host {

// From a launch program's construction to its end: the runtime's CTA buffers aliasable, the
// window following the running CTA (the runtime's cta_entered_hook).
void open_shared_window(const LaunchGeometry& launch);
void close_shared_window();

// The window's live bytes while a launch runs, else 0 (the compiler callbacks' range check).
struct WindowRange {
  std::uintptr_t begin = 0;
  std::uintptr_t bytes = 0;
  bool cluster = false;  // the launch has clusters: peers' shared memory is reachable (mapa)
};
extern WindowRange g_window_range;

}  // namespace mbcheck::cutlass_host
