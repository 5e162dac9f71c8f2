// Sharded exhaustive search: shard processes (a batch scheduler's array job) share the
// subtrees of each wave through result files in one directory.
//
// No locks: the first n items of a wave have fixed owners, and a shard claims each later item
// when it is free (a claim file naming it, made whole by link()); the owner computes the item
// and appends the result to its log (sim/explore/shard_log.hpp). A shard with nothing
// of its own left computes the items still missing as well, and drops each as soon as its
// owner's record appears: so no shard ever waits for another (slow, killed, or not started
// yet). The search is deterministic, so an item computed twice gives the same result; a shard
// that is killed and rerun finds what is done, and its own old claims. search.txt and every
// log carry the search's identity (protocol, shape, options, mbcheck version): a directory
// holding another search's results is refused, never mixed in.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/explore/shard_log.hpp"
#include "sim/explore/waves.hpp"

namespace mbcheck::sim::dpor {

using sim::ShardError;

class ShardExchange {
 public:
  // Claims `dir` for the search named `identity` (creating search.txt, or checking it).
  ShardExchange(std::string dir, unsigned index, unsigned count, std::string identity);
  ShardExchange(const ShardExchange&) = delete;
  ShardExchange& operator=(const ShardExchange&) = delete;

  // Computes item i of the wave, asking `until` after every execution whether to give up
  // (WaveResult::interrupted).
  using Compute = std::function<WaveResult(std::size_t i, const std::function<bool()>& until)>;
  // Fills `results` with the n items of the next wave, computing this shard's own and, once
  // they are done, any still missing. False when `stop()` said to stop first (results then
  // incomplete).
  bool run(std::size_t n, const Compute& compute, const std::function<bool()>& stop, std::vector<WaveResult>& results,
           std::uint64_t* own_executions);

 private:
  void store(std::uint64_t wave, std::size_t i, const WaveResult& r);
  bool load(std::uint64_t wave, std::size_t i, WaveResult& out);
  bool published(std::uint64_t wave, std::size_t i);
  std::string claim_path(std::uint64_t wave, std::size_t i) const;
  bool claim(std::uint64_t wave, std::size_t i) const;  // false: another shard has it
  unsigned claimant(std::uint64_t wave, std::size_t i) const;

  std::string dir_;
  unsigned index_, count_;
  ShardLogs logs_;
  std::uint64_t waves_ = 0;
  std::chrono::steady_clock::time_point next_look_{};  // published(): when to look again
};

nlohmann::json to_json(const WaveResult& w);
WaveResult wave_result_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace mbcheck::sim::dpor
