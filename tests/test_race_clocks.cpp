// The race detector's two clock representations (sim/runtime/race_clocks.hpp) against plain
// vectors: chunks shared copy-on-write must read exactly what dense clocks read, whatever was
// copied, joined, raised or reset, and a change to one clock must never show in another that
// shares its chunks. The differential soak's programs fit one chunk; clocks of several
// chunks (cluster shapes of thousands of threads) are checked here.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "sim/explore/explore.hpp"
#include "sim/protocols/protocols.hpp"
#include "sim/runtime/race_clocks.hpp"
#include "sim/runtime/race_detector.hpp"
#include "sim/check.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;

namespace {
constexpr std::size_t kAgents = 200;  // 4 chunks, the last one partly used

using Plain = std::vector<std::uint32_t>;

template <class Clock>
Plain plain_of(const Clock& c) {
  Plain p(kAgents + 70);  // and past the agents: zeros
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = c[i];
  return p;
}

// Runs the same random operations on a pool of Clocks and of plain vectors, comparing all.
template <class Clock>
void run_random_operations(std::uint32_t seed) {
  std::mt19937 rng(seed);
  // Small values and short clocks, so that equal, dominating and zero chunks are common.
  auto value = [&] { return static_cast<std::uint32_t>(rng() % 4); };
  auto entry = [&] { return static_cast<std::size_t>(rng() % 3 == 0 ? rng() % 20 : rng() % kAgents); };
  constexpr int kClocks = 8;
  std::vector<Clock> clocks(kClocks);
  std::vector<Plain> plain(kClocks, Plain(kAgents + 70, 0));
  for (int step = 0; step < 4000; ++step) {
    const int a = static_cast<int>(rng() % kClocks), b = static_cast<int>(rng() % kClocks);
    switch (rng() % 9) {
      case 0:
      case 1: {
        const std::size_t i = entry();
        const std::uint32_t v = value();
        clocks[a].at(i) += v;
        plain[a][i] += v;
        break;
      }
      case 2: {
        const std::size_t i = entry();
        const std::uint32_t v = value() + 2;
        clocks[a].raise(i, v);
        plain[a][i] = std::max(plain[a][i], v);
        break;
      }
      case 3:
      case 4:
        clocks[a].join(clocks[b], kAgents);
        for (std::size_t i = 0; i < kAgents; ++i) plain[a][i] = std::max(plain[a][i], plain[b][i]);
        break;
      case 5:
        clocks[a] = clocks[b];  // a copy (shares every chunk)
        plain[a] = plain[b];
        break;
      case 6: {
        const std::size_t n = 1 + rng() % kAgents, own = rng() % n;
        clocks[a].reset(n, own, 1);
        std::fill(plain[a].begin(), plain[a].end(), 0);
        plain[a][own] = 1;
        break;
      }
      case 7:
        clocks[a].clear();
        std::fill(plain[a].begin(), plain[a].end(), 0);
        break;
      case 8:
        clocks[a].swap(clocks[b]);
        std::swap(plain[a], plain[b]);
        break;
    }
    // Every clock, not only the one changed: a write through a shared chunk would show elsewhere.
    for (int c = 0; c < kClocks; ++c) {
      INFO("seed " << seed << ", step " << step << ", clock " << c);
      REQUIRE(plain_of(clocks[c]) == plain[c]);
    }
  }
}
}  // namespace

TEST_CASE("dense clocks read what plain vectors read", "[runtime][clocks]") {
  for (std::uint32_t seed = 1; seed <= 4; ++seed) run_random_operations<DenseClock>(seed);
}

TEST_CASE("chunks shared copy-on-write read what plain vectors read", "[runtime][clocks]") {
  for (std::uint32_t seed = 1; seed <= 12; ++seed) run_random_operations<SharedClock>(seed);
}

TEST_CASE("a copy shares its chunks until one of the two writes", "[runtime][clocks]") {
  SharedClock a;
  a.reset(130, 5, 7);  // 3 chunks
  a.at(129) = 3;
  SharedClock b = a;
  b.at(5) = 9;  // b's first chunk is its own now
  CHECK(a[5] == 7);
  CHECK(b[5] == 9);
  CHECK(b[129] == 3);
  a.join(b, 130);  // b's chunk dominates a's: a shares it
  CHECK(a[5] == 9);
  a.at(5) = 11;  // written through a copy of its own again
  CHECK(b[5] == 9);
  CHECK(a[5] == 11);
}

namespace {
// Sets the thread count from which executions use chunks, for one scope.
struct ChunkedFrom {
  explicit ChunkedFrom(std::size_t threads) : old(RaceDetector::chunked_from_threads().exchange(threads)) {}
  ~ChunkedFrom() { RaceDetector::chunked_from_threads() = old; }
  std::size_t old;
};

struct Found {
  std::uint64_t executions = 0, transitions = 0;
  std::string verdict, message;
};

Found search_with(std::size_t chunked_from, const std::string& protocol,
                  const std::map<std::string, std::string>& flags) {
  ChunkedFrom scope(chunked_from);
  auto prog = make_protocol(protocol, flags);
  ExploreOptions o;
  o.max_executions = 300;
  const ExploreResult r = explore(*prog, o);
  Found f{r.stats.executions, r.stats.transitions, "none", ""};
  if (r.bug) {
    f.verdict = std::string(to_string(r.bug->verdict));
    if (r.bug->misuse) f.verdict = fmt::format("{}:{}", f.verdict, to_string(*r.bug->misuse));
    f.message = r.bug->message;
  }
  return f;
}
}  // namespace

// Races, lifetime and init visibility are all judged on the race detector's clocks: one
// program must get the same search and the same report (down to the racing steps) from either.
TEST_CASE("dense and chunked clocks give one program the same search and report", "[runtime][clocks]") {
  using Flags = std::map<std::string, std::string>;
  auto [protocol, flags] = GENERATE(table<std::string, Flags>({
      {"epi-load",
       {{"stages", "2"}, {"tiles", "3"}, {"store-warps", "1"}, {"threads-per-warp", "2"}, {"tile-elems", "4"}}},
      {"epi-load",
       {{"stages", "2"},
        {"tiles", "3"},
        {"store-warps", "1"},
        {"threads-per-warp", "2"},
        {"tile-elems", "4"},
        {"mutation", "release-before-read"}}},
      {"epi-load",
       {{"stages", "1"},
        {"tiles", "2"},
        {"store-warps", "1"},
        {"threads-per-warp", "2"},
        {"tile-elems", "4"},
        {"mutation", "single-stage-wrong-parity"}}},
      {"tma-pipeline", {{"consumers", "2"}, {"iterations", "3"}, {"mutation", "consumer-release-before-read"}}},
      {"pingpong", {{"group-threads", "2"}, {"threads-per-warp", "2"}, {"mutation", "no-order"}}},
      {"cluster-gemm", {{"cluster", "2x1"}}},
      {"cluster-gemm", {{"cluster", "2x1"}, {"mutation", "local-release-only"}}},
      {"cluster-gemm", {{"cluster", "2x1"}, {"mutation", "no-producer-tail"}}},
      {"cluster-gemm", {{"cluster", "2x1"}, {"mutation", "no-init-fence"}}},
      {"cluster-gemm", {{"order", "named-barriers"}, {"mutation", "no-order"}}},
  }));
  INFO(protocol << (flags.count("mutation") ? " " + flags.at("mutation") : ""));
  const Found dense = search_with(SIZE_MAX, protocol, flags);
  const Found chunked = search_with(0, protocol, flags);
  CHECK(chunked.executions == dense.executions);
  CHECK(chunked.transitions == dense.transitions);
  CHECK(chunked.verdict == dense.verdict);
  CHECK(chunked.message == dense.message);
  if (flags.count("mutation")) CHECK(dense.verdict != "none");  // each mutation is a bug here
}

TEST_CASE("a re-initialised barrier's phase 0 carries nothing of the earlier incarnation's phase 0",
          "[runtime][race]") {
  // Thread 1 stores and arrives on phase 0 of barrier 0's first incarnation (count 2: that
  // phase never completes), then tells thread 0 through barrier 1 with a relaxed arrive (it
  // orders nothing). Thread 0 invalidates barrier 0, re-initialises it with count 1 and tells
  // thread 2 the same way; thread 2 completes phase 0 of the second incarnation, waits for it
  // and reads the word. Nothing orders thread 1's store before that read: the first
  // incarnation's phase 0 released it, but no wait ever saw that phase complete.
  using namespace mbcheck::sim::test;
  for (const std::size_t chunked_from : {std::size_t{0}, SIZE_MAX}) {
    ChunkedFrom scope(chunked_from);
    FunctionProgram prog(threads(3), [] {
      using P = HostPlatform;
      const auto t = P::thread_idx();
      if (t == 0) {
        smem_bar(0).init(2);
        smem_bar(1).init(1);
        smem_bar(2).init(1);
      }
      P::sync_threads();
      auto& told_0 = reinterpret_cast<P::Barrier*>(P::shared_memory())[1];
      auto& told_2 = reinterpret_cast<P::Barrier*>(P::shared_memory())[2];
      if (t == 1) {
        P::store(smem_word(0), std::int64_t{1});
        smem_bar(0).arrive();
        P::mbarrier_arrive_relaxed(told_0);
      } else if (t == 0) {
        smem_bar(1).wait(0);
        smem_bar(0).inval();
        smem_bar(0).init(1);
        P::mbarrier_arrive_relaxed(told_2);
      } else {
        smem_bar(2).wait(0);
        smem_bar(0).arrive();
        smem_bar(0).wait(0);
        (void)P::load(smem_word(0));
      }
    });
    const ExploreResult r = explore_all(prog);
    INFO("chunked from " << chunked_from << ": " << (r.bug ? r.bug->message : ""));
    REQUIRE(r.bug);
    CHECK(r.bug->verdict == Verdict::race);
  }
}
