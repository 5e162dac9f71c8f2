// Replay tokens: round trips, and a clear error for each way a token can be broken.
#include <catch2/catch.hpp>

#include "sim/report/replay_token.hpp"

using namespace mbcheck::sim;

TEST_CASE("a token round-trips protocol, shape and schedule", "[token]") {
  ReplayToken t{"epi-load", {{"stages", "2"}, {"beta", "0.5"}}, {0, 0, 0, 5, 300, 300, 7, 1u << 20, 0}};
  std::string text = encode_token(t);
  CHECK(text.rfind("mb2:epi-load:beta=0.5,stages=2:", 0) == 0);
  ReplayToken back = decode_token(text);
  CHECK(back.protocol == t.protocol);
  CHECK(back.options == t.options);
  CHECK(back.schedule == t.schedule);
}

TEST_CASE("runs of the same agent are stored once", "[token]") {
  std::vector<AgentId> run(5000, 3);
  CHECK(encode_schedule(run).size() < 8);
  CHECK(decode_schedule(encode_schedule(run)) == run);
}

TEST_CASE("whitespace from a wrapped terminal line is ignored", "[token]") {
  std::string text = encode_token({"epi-load", {{"tiles", "4"}}, {1, 2, 3}});
  std::string wrapped = text.substr(0, 10) + "\n  " + text.substr(10);
  CHECK(decode_token(wrapped).schedule == std::vector<AgentId>{1, 2, 3});
}

TEST_CASE("malformed tokens say what is wrong", "[token]") {
  CHECK_THROWS_WITH(decode_token("hello"), "a replay token starts with 'mb2:' (or 'mb1:')");
  CHECK_THROWS_WITH(decode_token("mb1:epi-load"), "no shape part after the protocol name");
  CHECK_THROWS_WITH(decode_token("mb1:epi-load:tiles=4"), "no schedule part after the shape");
  CHECK_THROWS_WITH(decode_token("mb1:epi-load:tiles:AA"), "shape entry 'tiles' is not key=value");
  CHECK_THROWS_WITH(decode_token("mb1:epi-load:tiles=4:A*"), "bad character '*' in the schedule part");
  CHECK_THROWS_WITH(decode_token("mb1:epi-load:tiles=4:gA"), "the schedule part is truncated");
  CHECK_THROWS_WITH(decode_token("mb1:epi-load:tiles=4:AAA"), "the schedule part is corrupt");
}
