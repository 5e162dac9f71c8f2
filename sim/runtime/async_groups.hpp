// An async-group family of one owner: the members (agents) issued since its last
// commit_group, and per committed group the members still outstanding. Bulk stores
// (cp.async.bulk.commit_group / wait_group.read) and cp.async (cp.async.commit_group /
// wait_group) are owned by their issuing thread; wgmma groups (wgmma.commit_group /
// wait_group) by their warp group, kept at its first thread. ops.def's `group` column says
// which family an operation belongs to; sim/runtime/async_groups.cpp holds the one
// commit / wait / member-done path all three use.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/runtime/ops.hpp"

namespace mbcheck::sim {

inline constexpr std::uint32_t kMaxWaitGroupN = 7;  // wait_group N: 0..7 on both backends

struct AsyncGroups {
  std::vector<AgentId> uncommitted;        // issued since the last commit_group
  std::vector<std::uint32_t> outstanding;  // per committed group: members not yet done

  // Members still outstanding in the groups a wait_group `pending` waits for: every committed
  // group but the newest `pending`.
  std::uint32_t waited_for(std::uint32_t pending) const {
    std::uint32_t n = 0;
    const std::size_t waited = outstanding.size() > pending ? outstanding.size() - pending : 0;
    for (std::size_t g = 0; g < waited; ++g) n += outstanding[g];
    return n;
  }
  // How many groups such a wait covers.
  std::uint32_t covered(std::uint32_t pending) const {
    return outstanding.size() > pending ? static_cast<std::uint32_t>(outstanding.size() - pending) : 0;
  }
};

using AsyncGroupSet = std::array<AsyncGroups, kGroupKinds>;

}  // namespace mbcheck::sim
