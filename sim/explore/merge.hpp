// `mbcheck merge`: the --json results of the shards of one sharded check, validated and
// combined into the verdict of the whole search. Every shard ends with the whole result, so
// merging checks that the inputs are exactly the shards 1..n of one search, each once, that
// they agree, and adds up who ran what.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mbcheck::sim {

// An input that is not what merge needs: the message names the file and the field.
struct MergeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ShardInput {
  std::string file;     // for messages
  nlohmann::json json;  // its parsed content
};

struct MergedResult {
  std::string protocol;
  std::string verdict;  // verified, bug or incomplete
  std::string kind;     // the bug's kind ("" unless verdict is bug)
  std::string replay;   // the bug's replay token ("" unless verdict is bug)
  std::uint64_t executions = 0, transitions = 0, blocked = 0, redundant = 0;
  std::uint64_t own_total = 0;  // executions the shards ran themselves, summed
  std::string shares;           // "shard 1/3: 12, shard 2/3: 10, ..."
};

// Throws MergeError on a missing or mistyped field, values out of range, results of
// different searches, a shard given twice, or a shard missing.
MergedResult merge_shard_results(const std::vector<ShardInput>& inputs);

}  // namespace mbcheck::sim
