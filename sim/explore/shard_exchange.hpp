// Sharded exhaustive search: shard processes (a batch scheduler's array job) share the
// subtrees of each wave through result files in one directory.
//
// No locks: the first n items of a wave have fixed owners, and a shard claims each later item
// when it is free (a claim file naming it, made whole by link()); the owner computes the item
// and publishes the result atomically (temporary file, fsync, rename). A shard that needs an
// item waits for its file while the owner is alive, and computes it itself once the owner is
// gone: every shard touches a heartbeat file twice a second, and an owner whose heartbeat has not changed for `stale_s`
// seconds (of the waiter's clock, so clocks of different hosts need not agree), or that never showed one, is gone. The
// search is deterministic, so an item computed twice gives the same file; a shard that is killed and rerun finds what
// is done, and its own old claims. Every file carries the search's identity (protocol, shape, options, mbcheck
// version): a directory holding another search's results is refused, never mixed in.
#pragma once

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sim/explore/waves.hpp"

namespace mbcheck::sim::dpor {

using sim::ShardError;

class ShardExchange {
 public:
  // Claims `dir` for the search named `identity` (creating search.txt, or checking it).
  ShardExchange(std::string dir, unsigned index, unsigned count, std::string identity, double stale_s = 5.0);
  ~ShardExchange();
  ShardExchange(const ShardExchange&) = delete;
  ShardExchange& operator=(const ShardExchange&) = delete;

  // Fills `results` with the n items of the next wave, computing this shard's own and any a
  // gone shard left. False when `stop()` said to stop first (results then incomplete).
  bool run(std::size_t n, const std::function<WaveResult(std::size_t)>& compute, const std::function<bool()>& stop,
           std::vector<WaveResult>& results, std::uint64_t* own_executions);

 private:
  std::string path(std::uint64_t wave, std::size_t i) const;
  bool owner_alive(unsigned shard);
  void store(std::uint64_t wave, std::size_t i, const WaveResult& r) const;
  bool load(std::uint64_t wave, std::size_t i, WaveResult& out) const;
  std::string claim_path(std::uint64_t wave, std::size_t i) const;
  bool claim(std::uint64_t wave, std::size_t i) const;  // false: another shard has it
  unsigned claimant(std::uint64_t wave, std::size_t i) const;
  void beat() const;

  std::string dir_;
  unsigned index_, count_;
  std::string identity_;
  double stale_s_;
  std::uint64_t waves_ = 0;
  // What this shard last saw of every shard's heartbeat, and when (steady clock, seconds).
  std::vector<std::int64_t> seen_mtime_;
  std::vector<double> seen_at_;
  std::atomic<bool> quit_{false};
  std::thread heartbeat_;
};

nlohmann::json to_json(const WaveResult& w);
WaveResult wave_result_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace mbcheck::sim::dpor
