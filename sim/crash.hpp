// When protocol code crashes the process (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), print
// the schedule of the execution in progress as a replay token before dying, so the crash can
// be reproduced step by step. Best effort: the process is already broken when it runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/runtime.hpp"

namespace mbcheck::sim {

// `token_of` turns the schedule so far into a replay token. Installs an alternate signal
// stack for the calling thread, so a fiber's stack overflow is reported too.
void install_crash_reporter(std::function<std::string(const std::vector<AgentId>&)> token_of);

}  // namespace mbcheck::sim
