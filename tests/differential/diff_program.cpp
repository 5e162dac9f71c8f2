#include "tests/differential/diff_program.hpp"

#include <fmt/format.h>

namespace mbcheck::diff {

const char* to_string(Stmt s) {
  switch (s) {
    case Stmt::arrive: return "arrive";
    case Stmt::arrive_drop: return "arrive_drop";
    case Stmt::arrive_no_complete: return "arrive_no_complete";
    case Stmt::arrive_expect_tx: return "arrive_expect_tx";
    case Stmt::expect_tx: return "expect_tx";
    case Stmt::complete_tx: return "complete_tx";
    case Stmt::arrive_token: return "arrive_token";
    case Stmt::wait: return "wait";
    case Stmt::wait_cluster: return "wait_cluster";
    case Stmt::test_wait: return "test_wait";
    case Stmt::try_wait: return "try_wait";
    case Stmt::token_test_wait: return "token_test_wait";
    case Stmt::token_wait: return "token_wait";
    case Stmt::spin_try_wait: return "spin_try_wait";
    case Stmt::spin_backoff: return "spin_backoff";
    case Stmt::try_then_wait: return "try_then_wait";
    case Stmt::try_guard_wait: return "try_guard_wait";
    case Stmt::status_try: return "status_try";
    case Stmt::status_wait: return "status_wait";
    case Stmt::copy: return "copy";
    case Stmt::load_slot: return "load_slot";
    case Stmt::store: return "store";
    case Stmt::load: return "load";
    case Stmt::atomic_store: return "atomic_store";
    case Stmt::atomic_load: return "atomic_load";
    case Stmt::atomic_add: return "atomic_add";
    case Stmt::sync_threads: return "sync_threads";
    case Stmt::bar_arrive: return "bar_arrive";
    case Stmt::bar_sync: return "bar_sync";
    case Stmt::parity_wait: return "parity_wait";
    case Stmt::parity_try_wait: return "parity_try_wait";
    case Stmt::cpa_copy: return "cpa_copy";
    case Stmt::cpa_commit: return "cpa_commit";
    case Stmt::cpa_wait: return "cpa_wait";
    case Stmt::cpa_arrive: return "cpa_arrive";
    case Stmt::wg_mma: return "wg_mma";
    case Stmt::wg_commit: return "wg_commit";
    case Stmt::wg_wait: return "wg_wait";
    case Stmt::remote_arrive: return "remote_arrive";
    case Stmt::remote_complete_tx: return "remote_complete_tx";
    case Stmt::remote_arrive_expect_tx: return "remote_arrive_expect_tx";
    case Stmt::multicast: return "multicast";
    case Stmt::cluster_arrive: return "cluster_arrive";
    case Stmt::cluster_arrive_relaxed: return "cluster_arrive_relaxed";
    case Stmt::cluster_wait: return "cluster_wait";
    case Stmt::fence_init: return "fence_init";
    case Stmt::dsmem_store: return "dsmem_store";
    case Stmt::dsmem_load: return "dsmem_load";
    case Stmt::syncwarp: return "syncwarp";
    case Stmt::elect_sync: return "elect_sync";
    case Stmt::shfl_idx: return "shfl_idx";
    case Stmt::arrive_relaxed: return "arrive_relaxed";
    case Stmt::spin_flag: return "spin_flag";
    case Stmt::spin_backoff_grow: return "spin_backoff_grow";
    case Stmt::spin_two_sites: return "spin_two_sites";
    case Stmt::spin_counter_mem: return "spin_counter_mem";
    case Stmt::fence_proxy: return "fence_proxy";
    case Stmt::spin_atomic: return "spin_atomic";
    case Stmt::spin_atomic_pair: return "spin_atomic_pair";
    case Stmt::inval: return "inval";
    case Stmt::reinit: return "reinit";
    case Stmt::count_: break;
  }
  return "?";
}

std::string format_observed(const Observed& o) {
  std::string out;
  for (const auto& regs : o.registers) {
    out += '[';
    for (auto v : regs) out += fmt::format("{},", v);
    out += ']';
  }
  out += " D";
  for (auto v : o.data) out += fmt::format(" {}", v);
  out += " S";
  for (auto v : o.slots) out += fmt::format(" {}", v);
  out += " A";
  for (auto v : o.atomics) out += fmt::format(" {}", v);
  return out;
}

std::string describe(const DiffProgram& p) {
  std::string out = fmt::format("{} cta x {} threads (clusters {}x{}, warps of {}), barriers", p.ctas, p.threads,
                                p.cluster_x, p.cluster_y, p.warp_size);
  for (auto c : p.counts) out += fmt::format(" count {}", c);
  out += fmt::format(", copies in {} piece(s)\n", p.copy_pieces);
  for (std::size_t g = 0; g < p.scripts.size(); ++g) {
    out += fmt::format("  T{}:", g);
    for (const Instr& i : p.scripts[g]) out += fmt::format(" {}(b{},{})", to_string(i.op), i.bar, i.arg);
    out += '\n';
  }
  return out;
}

}  // namespace mbcheck::diff
