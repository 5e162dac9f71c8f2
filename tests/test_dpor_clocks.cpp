// The search's clocks (sim/explore/dpor_clocks.hpp) against plain dense vectors: working clocks
// of chunk references, stored records and phase summaries must hold exactly what the dense
// joins hold. The differential soak's programs have fewer than 32 agents (one chunk), so the
// clocks of many chunks (thousands of agents, a copy agent per tile) are checked here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "sim/explore/dpor_clocks.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::dpor;

namespace {
constexpr std::size_t kAgents = 150;  // 5 chunks, the last one partly used

using Dense = std::vector<std::uint32_t>;

void dense_join(Dense& into, const Dense& from) {
  for (std::size_t i = 0; i < kAgents; ++i) into[i] = std::max(into[i], from[i]);
}

Dense dense_of(const ClockArena& arena, const WorkClock& w) {
  Dense d(kAgents);
  for (std::size_t i = 0; i < kAgents; ++i) d[i] = arena.get(w, i);
  return d;
}

struct Stored {
  ClockId id;
  Dense dense;
};
}  // namespace

TEST_CASE("working clocks, records and summaries hold what dense clocks hold", "[explore][clocks]") {
  std::mt19937 rng(20261203);
  // Small values and many zero chunks, so that equal, dominating and zero chunks are common.
  auto value = [&] { return static_cast<std::uint32_t>(rng() % 4); };
  auto index = [&] {
    // Mostly in the first and last chunks, sometimes anywhere.
    const std::uint32_t r = rng() % 10;
    return r < 4 ? rng() % 32 : r < 8 ? 128 + rng() % 22 : rng() % kAgents;
  };
  std::size_t checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    ClockArena arena;
    std::vector<Stored> stored;
    Summary summary;
    Dense summary_dense(kAgents, 0);
    for (int step = 0; step < 60; ++step) {
      WorkClock w;
      Dense d(kAgents, 0);
      const ClockId like = stored.empty() || rng() % 2 ? kNoClock : stored[rng() % stored.size()].id;
      if (like != kNoClock) {
        // A copy of the record (it then knows it is one: joining, covering or storing that
        // record is O(1), until anything changes it) or a join into an empty clock.
        if (rng() % 2)
          arena.assign_raw(like, w);
        else
          arena.join_raw(like, w);
        for (const Stored& s : stored)
          if (s.id == like) d = s.dense;
      }
      for (int op = 0, ops = static_cast<int>(rng() % 6); op < ops; ++op) {
        switch (rng() % 4) {
          case 0:
            if (!stored.empty()) {
              const Stored& s = stored[rng() % stored.size()];
              arena.join_raw(s.id, w);
              dense_join(d, s.dense);
            }
            break;
          case 1: {  // another working clock, with chunks of its own
            WorkClock other;
            Dense od(kAgents, 0);
            for (int k = 0; k < 5; ++k) {
              const std::size_t i = index();
              const std::uint32_t v = value();
              arena.set(other, i, v);
              od[i] = v;
            }
            arena.join(w, other);
            dense_join(d, od);
            break;
          }
          case 2: {
            const std::size_t i = index();
            const std::uint32_t v = std::max(d[i], value());  // clocks only grow
            arena.set(w, i, v);
            d[i] = v;
            break;
          }
          default:
            if (!stored.empty()) {  // an event: its record plus its own entry
              const Stored& s = stored[rng() % stored.size()];
              Event e;
              e.agent = static_cast<AgentId>(index());
              e.seq = s.dense[e.agent] + 1 + value();  // a record's own entry is older than the event
              e.clock = s.id;
              arena.join_into(e, w);
              Dense ed = s.dense;
              ed[e.agent] = e.seq;
              dense_join(d, ed);
              CHECK(arena.at(e, e.agent) == e.seq);
            }
        }
      }
      REQUIRE(dense_of(arena, w) == d);
      // The summary: adding, covering, joining back, before and after sealing. Sometimes two
      // events of one clock, as the waiters of one phase are (the second adds its own entry).
      for (int k = 0, n = rng() % 3 == 0 ? 2 : 1; k < n; ++k) {
        Event e;
        e.agent = static_cast<AgentId>(index());
        e.seq = value() + 1;
        arena.add(summary, w, e);
        dense_join(summary_dense, d);
        summary_dense[e.agent] = std::max(summary_dense[e.agent], e.seq);
      }
      if (rng() % 5 == 0) arena.seal(summary);
      WorkClock probe;
      arena.join(probe, summary);
      REQUIRE(dense_of(arena, probe) == summary_dense);
      CHECK(arena.covered(probe, summary));
      const bool covers = std::equal(d.begin(), d.end(), summary_dense.begin(),
                                     [](std::uint32_t a, std::uint32_t b) { return a >= b; });
      CHECK(arena.covered(w, summary) == covers);
      if (covers) {  // a summary that holds the clock: joined by copying it (when sealed)
        WorkClock copy;
        copy.assign(w);
        arena.join_dominating(copy, summary);
        REQUIRE(dense_of(arena, copy) == summary_dense);
      }
      // Stored, and read back entry by entry.
      const ClockId id = arena.store(w, kNoAgent, 0, like);
      REQUIRE(dense_of(arena, w) == d);  // store leaves the same clock (now all stored chunks)
      for (std::size_t i = 0; i < kAgents; ++i) REQUIRE(arena.raw(id, i) == d[i]);
      if (like != kNoClock && d == stored[0].dense && like == stored[0].id) CHECK(id == like);
      CHECK(arena.store(w, kNoAgent, 0) == id);  // w is now a copy of that record
      // A copy changed is no longer one: storing it, joining or covering with the record see it.
      {
        const std::size_t i = index();
        WorkClock changed;
        arena.assign_raw(id, changed);
        arena.set(changed, i, d[i] + 1);
        Dense cd = d;
        cd[i] = d[i] + 1;
        arena.join_raw(id, changed);
        REQUIRE(dense_of(arena, changed) == cd);
        const ClockId changed_id = arena.store(changed, kNoAgent, 0, id);
        CHECK(changed_id != id);
        for (std::size_t j = 0; j < kAgents; ++j) REQUIRE(arena.raw(changed_id, j) == cd[j]);
        Summary of_changed;
        arena.add(of_changed, changed, Event{});
        arena.seal(of_changed);
        CHECK_FALSE(arena.covered(w, of_changed));
      }
      stored.push_back({id, d});
      ++checked;
    }
  }
  CHECK(checked == 200 * 60);
}

TEST_CASE("equal clocks are stored once, whatever chunks they were built from", "[explore][clocks]") {
  ClockArena arena;
  WorkClock a, b;
  for (std::size_t i = 0; i < kAgents; i += 7) arena.set(a, i, static_cast<std::uint32_t>(i % 5 + 1));
  const ClockId first = arena.store(a, kNoAgent, 0);
  // The same entries, reached by joining the stored record into a clock that already held part.
  for (std::size_t i = 0; i < kAgents; i += 14) arena.set(b, i, static_cast<std::uint32_t>(i % 5 + 1));
  arena.join_raw(first, b);
  CHECK(arena.store(b, kNoAgent, 0) == first);
  // The own entry: a record keeps what it is given for `own`, so a step that acquired nothing
  // shares its agent's previous record.
  WorkClock c;
  arena.join_raw(first, c);
  CHECK(arena.store(c, 0, arena.raw(first, 0), first) == first);
}
