#include "sim/explore/merge.hpp"

#include <fmt/format.h>

#include <regex>

namespace mbcheck::sim {

namespace {

const nlohmann::json& field(const ShardInput& in, const char* key) {
  if (!in.json.contains(key))
    throw MergeError(fmt::format("{}: no \"{}\" (not a `check --shard ... --json` result)", in.file, key));
  return in.json.at(key);
}
std::uint64_t whole(const ShardInput& in, const char* key) {
  const auto& v = field(in, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw MergeError(fmt::format("{}: \"{}\" must be a whole number >= 0, not {}", in.file, key, v.dump()));
  return v.get<std::uint64_t>();
}
std::string text(const ShardInput& in, const char* key) {
  const auto& v = field(in, key);
  if (!v.is_string()) throw MergeError(fmt::format("{}: \"{}\" must be a string, not {}", in.file, key, v.dump()));
  return v.get<std::string>();
}

}  // namespace

namespace {

// Fuzzing shards ran disjoint run indices: the campaign found a bug if any did (the one of
// the lowest run index, as one process would report), and ran the sum of their runs.
MergedResult merge_fuzz(const std::vector<ShardInput>& inputs) {
  MergedResult m;
  const ShardInput& first = inputs.front();
  std::uint64_t best_run = ~std::uint64_t{0};
  for (const ShardInput& in : inputs) {
    for (const char* key : {"protocol", "options", "strategy", "seed", "runs_requested"})
      if (first.json.value(key, nlohmann::json()) != in.json.value(key, nlohmann::json()))
        throw MergeError(
            fmt::format("{} disagrees with {} on \"{}\": not shards of one campaign", in.file, first.file, key));
    const std::string verdict = text(in, "verdict");
    if (verdict != "bug" && verdict != "incomplete")
      throw MergeError(fmt::format("{}: \"verdict\" of a fuzzing shard must be bug or incomplete, not {}", in.file,
                                   nlohmann::json(verdict).dump()));
    m.executions += whole(in, "runs");
    m.transitions += whole(in, "transitions");
    m.own_total += whole(in, "runs");
    m.shares += fmt::format("{}shard {}: {}", m.shares.empty() ? "" : ", ", text(in, "shard"), whole(in, "runs"));
    if (verdict == "bug" && whole(in, "bug_run") < best_run) {
      best_run = whole(in, "bug_run");
      m.verdict = "bug";
      m.kind = text(in, "kind");
      m.replay = text(in, "replay");
    }
  }
  if (m.verdict.empty()) m.verdict = "incomplete";
  m.protocol = text(first, "protocol");
  return m;
}

}  // namespace

MergedResult merge_shard_results(const std::vector<ShardInput>& inputs) {
  if (inputs.empty()) throw MergeError("merge needs the result files of all shards");
  MergedResult m;
  std::vector<bool> seen;
  unsigned count = 0;
  const ShardInput* first = nullptr;
  static const std::regex kShard("([0-9]{1,6})/([0-9]{1,6})");
  for (const ShardInput& in : inputs) {
    if (!in.json.is_object()) throw MergeError(fmt::format("{}: not a JSON object", in.file));
    const std::string shard = text(in, "shard");
    std::smatch sm;
    if (!std::regex_match(shard, sm, kShard))
      throw MergeError(fmt::format("{}: \"shard\" {} is not i/n", in.file, nlohmann::json(shard).dump()));
    const unsigned i = std::stoul(sm[1]), n = std::stoul(sm[2]);
    if (n < 2 || i < 1 || i > n)
      throw MergeError(fmt::format("{}: \"shard\" {}: needs 1 <= i <= n, n >= 2", in.file, shard));
    if (count == 0) {
      count = n;
      seen.assign(n + 1, false);
    } else if (n != count) {
      throw MergeError(fmt::format("{} is shard {} but {} is of {} shards: not shards of one search", in.file, shard,
                                   first->file, count));
    }
    if (seen[i]) throw MergeError(fmt::format("{}: shard {} is given twice", in.file, shard));
    seen[i] = true;
    const std::string verdict = text(in, "verdict");
    if (verdict != "verified" && verdict != "bug" && verdict != "incomplete")
      throw MergeError(fmt::format("{}: \"verdict\" must be verified, bug or incomplete, not {}", in.file,
                                   nlohmann::json(verdict).dump()));
    if (verdict == "bug") {
      (void)text(in, "kind");
      (void)text(in, "replay");
    }
    const bool fuzz_input = in.json.contains("strategy") && in.json["strategy"].is_string() &&
                            (in.json["strategy"] == "random" || in.json["strategy"] == "pct");
    for (const char* key : {"executions", "transitions", "blocked", "redundant", "own_executions"})
      if (!fuzz_input ||
          (std::string(key) != "blocked" && std::string(key) != "redundant" && std::string(key) != "own_executions"))
        (void)whole(in, key);
    (void)text(in, "protocol");
    (void)text(in, "strategy");
    if (!field(in, "options").is_object()) throw MergeError(fmt::format("{}: \"options\" must be an object", in.file));
    const std::string strategy = text(in, "strategy");
    const bool fuzzing = strategy == "random" || strategy == "pct";
    if (fuzzing) {
      (void)whole(in, "runs");
      if (verdict == "bug") (void)whole(in, "bug_run");
      if (!first) first = &in;
      continue;
    }
    if (first) {
      for (const char* key : {"protocol", "options", "strategy", "verdict", "kind", "executions", "transitions",
                              "blocked", "redundant", "replay"})
        if (first->json.value(key, nlohmann::json()) != in.json.value(key, nlohmann::json()))
          throw MergeError(
              fmt::format("{} disagrees with {} on \"{}\": not shards of one search", in.file, first->file, key));
    } else {
      first = &in;
    }
    if (whole(in, "own_executions") > whole(in, "executions"))
      throw MergeError(fmt::format("{}: \"own_executions\" is more than \"executions\"", in.file));
    m.own_total += whole(in, "own_executions");
    m.shares += fmt::format("{}shard {}: {}", m.shares.empty() ? "" : ", ", shard, whole(in, "own_executions"));
  }
  std::string missing;
  for (unsigned i = 1; i <= count; ++i)
    if (!seen[i]) missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, count);
  if (!missing.empty()) throw MergeError(fmt::format("shard {} missing: merge needs all {} shards", missing, count));
  const std::string strategy = text(*first, "strategy");
  if (strategy == "random" || strategy == "pct") return merge_fuzz(inputs);
  m.protocol = text(*first, "protocol");
  m.verdict = text(*first, "verdict");
  if (m.verdict == "bug") {
    m.kind = text(*first, "kind");
    m.replay = text(*first, "replay");
  }
  m.executions = whole(*first, "executions");
  m.transitions = whole(*first, "transitions");
  m.blocked = whole(*first, "blocked");
  m.redundant = whole(*first, "redundant");
  return m;
}

}  // namespace mbcheck::sim
