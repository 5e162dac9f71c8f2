// The schedule of the DPOR's first execution (its sleep sets are empty then, see
// DporSearch::choose), also what a search's first run and shrinking use: the
// agent that just ran goes on while it is enabled, else the lowest enabled id.
#pragma once

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

class FirstScheduleStrategy final : public Strategy {
 public:
  AgentId choose(const Runtime& rt) override {
    const AgentId last = rt.last_agent();
    if (last != kNoAgent && rt.agent(last).enabled_pos != ~0u) return last;
    AgentId pick = kNoAgent;
    for (AgentId id : rt.enabled())
      if (pick == kNoAgent || id < pick) pick = id;
    return pick;
  }
};

}  // namespace mbcheck::sim
