// Inputs mbcheck reads from files: shard results (`merge`) and wave results (shard
// directories). Randomly damaged inputs are refused with the parser's own error, never a
// crash, an abort or a wrong merge.
#include <catch2/catch.hpp>

#include <random>

#include <cstdlib>

#include "sim/explore/dpor.hpp"
#include "sim/explore/merge.hpp"
#include "sim/report/replay_token.hpp"
#include "sim/explore/shard_exchange.hpp"

using namespace mbcheck::sim;

namespace {

// Inputs per test: 100,000 in the suite; scripts/soak-parsers.sh sets MBCHECK_PARSER_INPUTS.
int inputs(int suite_default) {
  const char* n = std::getenv("MBCHECK_PARSER_INPUTS");
  return n ? std::atoi(n) : suite_default;
}

nlohmann::json shard_result(unsigned i, unsigned n) {
  return {{"protocol", "lastzero"}, {"options", {{"n", "7"}}},   {"strategy", "dpor"},
          {"verdict", "verified"},  {"kind", nullptr},           {"replay", nullptr},
          {"executions", 320},      {"transitions", 13161},      {"blocked", 0},
          {"redundant", 473},       {"own_executions", 100 + i}, {"shard", std::to_string(i) + "/" + std::to_string(n)},
          {"seconds", 0.1},         {"complete", true}};
}

// A random JSON value of any type (for replacing a field).
nlohmann::json random_value(std::mt19937_64& rng) {
  switch (rng() % 9) {
    case 0: return nullptr;
    case 1: return static_cast<std::int64_t>(rng()) >> (rng() % 64);
    case 2: return -static_cast<std::int64_t>(rng() % 5);
    case 3: return static_cast<double>(rng() % 1000) / 7.0;
    case 4: return "maybe";
    case 5: return std::to_string(rng() % 10) + "/" + std::to_string(rng() % 10);
    case 6: return nlohmann::json::array({1, "x"});
    case 7: return nlohmann::json::object();
    default: return rng() % 2 == 0;
  }
}

// Deletes, replaces or adds a field somewhere in `j` (one level of nesting).
void damage(nlohmann::json& j, std::mt19937_64& rng) {
  if (!j.is_object() || j.empty()) {
    j = random_value(rng);
    return;
  }
  auto it = j.begin();
  std::advance(it, static_cast<long>(rng() % j.size()));
  const std::string key = it.key();
  switch (rng() % 4) {
    case 0: j.erase(key); break;
    case 1: j[key] = random_value(rng); break;
    case 2:
      if (j[key].is_array() && !j[key].empty()) {
        j[key][0] = random_value(rng);
      } else if (j[key].is_object() && !j[key].empty()) {
        j[key][j[key].begin().key()] = random_value(rng);
      } else {
        j[key] = random_value(rng);
      }
      break;
    default: j["extra"] = random_value(rng);
  }
}

}  // namespace

TEST_CASE("merge accepts exactly the shards 1..n of one search", "[merge]") {
  std::vector<ShardInput> all{{"a", shard_result(1, 3)}, {"b", shard_result(2, 3)}, {"c", shard_result(3, 3)}};
  const MergedResult m = merge_shard_results(all);
  CHECK(m.verdict == "verified");
  CHECK(m.executions == 320);
  CHECK(m.own_total == 101 + 102 + 103);
  CHECK_THROWS_WITH(merge_shard_results({all[0], all[1]}), Catch::Contains("shard 3/3 missing"));
  CHECK_THROWS_WITH(merge_shard_results({all[0], all[0], all[2]}), Catch::Contains("given twice"));
  auto other = all;
  other[1].json["executions"] = 321;
  CHECK_THROWS_WITH(merge_shard_results(other), Catch::Contains("disagrees"));
  other = all;
  other[2].json["shard"] = "3/4";
  CHECK_THROWS_WITH(merge_shard_results(other), Catch::Contains("not shards of one search"));
}

TEST_CASE("merge refuses 100,000 randomly damaged shard results with a MergeError, never anything else",
          "[merge][fuzz]") {
  std::mt19937_64 rng(20261201);
  std::uint64_t refused = 0, accepted = 0;
  const int rounds = inputs(100000);
  for (int round = 0; round < rounds; ++round) {
    std::vector<ShardInput> in{{"a", shard_result(1, 3)}, {"b", shard_result(2, 3)}, {"c", shard_result(3, 3)}};
    const int hits = 1 + static_cast<int>(rng() % 3);
    for (int h = 0; h < hits; ++h) damage(in[rng() % 3].json, rng);
    try {
      const MergedResult m = merge_shard_results(in);
      // Accepted only if the damage left every checked field as it was (an extra field, a
      // changed "seconds" or an own_executions still in range).
      CHECK(m.executions == 320);
      CHECK(m.verdict == "verified");
      ++accepted;
    } catch (const MergeError&) {
      ++refused;
    }
  }
  CHECK(refused > static_cast<std::uint64_t>(rounds) / 2);
  CHECK(accepted > 0);
}

TEST_CASE("a shard directory's wave results parse back, and damaged ones are refused by the parser", "[shard][fuzz]") {
  dpor::WaveResult w;
  w.stats.executions = 7;
  w.stats.transitions = 70;
  w.deferred.push_back({3, {1, 2}, 2});
  Outcome bug;
  bug.verdict = Verdict::race;
  bug.schedule = {0, 1, 1, 0};
  bug.steps = 4;
  w.bug = bug;
  const nlohmann::json good = dpor::to_json(w);
  const dpor::WaveResult back = dpor::wave_result_from_json(good);
  CHECK(back.stats.executions == 7);
  CHECK(back.deferred.size() == 1);
  REQUIRE(back.bug);
  CHECK(back.bug->schedule == bug.schedule);

  std::mt19937_64 rng(7);
  std::uint64_t refused = 0;
  const int rounds = inputs(20000);
  for (int round = 0; round < rounds; ++round) {
    nlohmann::json j = good;
    damage(j, rng);
    if (rng() % 2 && j.contains("bug")) damage(j["bug"], rng);
    try {
      (void)dpor::wave_result_from_json(j);
    } catch (const nlohmann::json::exception&) {
      ++refused;
    } catch (const std::invalid_argument&) {
      ++refused;
    }
  }
  CHECK(refused > static_cast<std::uint64_t>(rounds) / 4);
}

TEST_CASE(
    "replay tokens: 100,000 random and damaged tokens are refused with a TokenError or decode within "
    "the step limit",
    "[token][fuzz]") {
  const std::string good = encode_token({"readers", {{"n", "2"}}, {0, 0, 1, 2, 2, 2, 1, 0}});
  CHECK(decode_token(good).schedule == std::vector<AgentId>{0, 0, 1, 2, 2, 2, 1, 0});
  static const char kChars[] = "mb1:=,_-aAzZ09\n \x80/";
  std::mt19937_64 rng(99);
  std::uint64_t refused = 0, decoded = 0;
  const int rounds = inputs(100000);
  for (int round = 0; round < rounds; ++round) {
    std::string t = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % (t.size() + 1);
      switch (rng() % 4) {
        case 0: t.insert(at, 1, kChars[rng() % (sizeof kChars - 1)]); break;
        case 1:
          if (at < t.size()) t.erase(at, 1);
          break;
        case 2:
          if (at < t.size()) t[at] = kChars[rng() % (sizeof kChars - 1)];
          break;
        default: t.insert(at, std::string(rng() % 12, "AB_-w8"[rng() % 6])); break;  // long varints, big repeats
      }
    }
    try {
      const ReplayToken tok = decode_token(t, 1000);
      CHECK(tok.schedule.size() <= 1000);
      ++decoded;
    } catch (const TokenError&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
  CHECK(decoded > 0);
}
