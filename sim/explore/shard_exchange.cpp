#include "sim/explore/shard_exchange.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace mbcheck::sim::dpor {

namespace {

std::uint64_t u64(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw std::invalid_argument(fmt::format("\"{}\" is not a whole number", key));
  return v.get<std::uint64_t>();
}

nlohmann::json outcome_json(const Outcome& o) {
  return {{"verdict", static_cast<int>(o.verdict)},
          {"misuse", o.misuse ? static_cast<int>(*o.misuse) : -1},
          {"message", o.message},
          {"details", o.details},
          {"schedule", o.schedule},
          {"steps", o.steps},
          {"culprits", o.culprits},
          {"root", o.root ? static_cast<int>(o.root->kind) : -1},  // (its text: in message and details)
          {"root_only", o.root_only}};
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  const int verdict = j.at("verdict").get<int>();
  if (verdict < 0 || verdict > static_cast<int>(Verdict::hang) || !is_bug(static_cast<Verdict>(verdict)))
    throw std::invalid_argument(fmt::format("\"verdict\" {} is not a bug", verdict));
  o.verdict = static_cast<Verdict>(verdict);
  const int m = j.at("misuse").get<int>();
  if (m > static_cast<int>(kLastMisuseKind)) throw std::invalid_argument("\"misuse\" out of range");
  if (m >= 0) o.misuse = static_cast<MisuseKind>(m);
  o.message = j.at("message").get<std::string>();
  o.details = j.at("details").get<std::vector<std::string>>();
  o.schedule = j.at("schedule").get<std::vector<AgentId>>();
  o.steps = u64(j, "steps");
  o.culprits = j.at("culprits").get<std::vector<AgentId>>();
  const int root = j.value("root", -1);
  if (root > static_cast<int>(kLastMisuseKind)) throw std::invalid_argument("\"root\" out of range");
  if (root >= 0) {
    o.root.emplace();
    o.root->kind = static_cast<MisuseKind>(root);
  }
  o.root_only = j.value("root_only", false);
  return o;
}

}  // namespace

nlohmann::json to_json(const WaveResult& w) {
  nlohmann::json deferred = nlohmann::json::array();
  for (const auto& d : w.deferred) deferred.push_back({d.node, d.initials, d.fallback});
  nlohmann::json j = {{"executions", w.stats.executions},
                      {"redundant", w.stats.redundant},
                      {"blocked", w.stats.blocked},
                      {"transitions", w.stats.transitions},
                      {"races", w.stats.races},
                      {"bound_cut", w.stats.bound_cut},
                      {"fallbacks", w.stats.fallbacks},
                      {"reruns", w.stats.reruns},
                      {"provisional", w.stats.provisional},
                      {"provisional_incs", w.stats.provisional_incs},
                      {"provisional_expects", w.stats.provisional_expects},
                      {"spin_iterations", w.stats.spin_iterations},
                      {"spin_noops", w.stats.spin_noops},
                      {"backoff_merges", w.stats.backoff_merges},
                      {"early_arrive_ons", w.stats.early_arrive_ons},
                      {"stopped", w.stopped},
                      {"deferred", deferred}};
  if (w.bug) j["bug"] = outcome_json(*w.bug);
  return j;
}

WaveResult wave_result_from_json(const nlohmann::json& j) {
  WaveResult w;
  w.stats.executions = u64(j, "executions");
  w.stats.redundant = u64(j, "redundant");
  w.stats.blocked = u64(j, "blocked");
  w.stats.transitions = u64(j, "transitions");
  w.stats.races = u64(j, "races");
  w.stats.bound_cut = u64(j, "bound_cut");
  w.stats.fallbacks = u64(j, "fallbacks");
  w.stats.reruns = u64(j, "reruns");
  w.stats.provisional = u64(j, "provisional");
  w.stats.provisional_incs = j.contains("provisional_incs") ? u64(j, "provisional_incs") : 0;  // (older logs)
  w.stats.provisional_expects = j.contains("provisional_expects") ? u64(j, "provisional_expects") : 0;
  w.stats.spin_iterations = u64(j, "spin_iterations");
  w.stats.spin_noops = j.contains("spin_noops") ? u64(j, "spin_noops") : 0;  // (logs of older binaries)
  w.stats.backoff_merges = u64(j, "backoff_merges");
  w.stats.early_arrive_ons = j.contains("early_arrive_ons") ? u64(j, "early_arrive_ons") : 0;  // (older logs)
  w.stopped = j.at("stopped").get<bool>();
  for (const auto& d : j.at("deferred"))
    w.deferred.push_back({d.at(0).get<std::size_t>(), d.at(1).get<std::vector<AgentId>>(), d.at(2).get<AgentId>()});
  if (j.contains("bug")) w.bug = outcome_from_json(j.at("bug"));
  return w;
}

ShardExchange::ShardExchange(std::string dir, unsigned index, unsigned count, std::string identity)
    : dir_(dir),
      index_(index),
      count_(count),
      // The directory is claimed for this search (search.txt) before any log in it is opened.
      logs_((claim_shard_dir(dir, index, identity), dir), index, count, identity) {}

void ShardExchange::store(std::uint64_t wave, std::size_t i, const WaveResult& r) {
  logs_.append(wave, i, to_json(r).dump());
}

bool ShardExchange::load(std::uint64_t wave, std::size_t i, WaveResult& out) {
  const std::optional<std::string> text = logs_.take(wave, i);
  if (!text) return false;
  auto bad = [&](const char* why) {
    return ShardError(fmt::format("{}: the result of wave {} item {} is not a shard result: {}", dir_, wave, i, why));
  };
  try {
    out = wave_result_from_json(nlohmann::json::parse(*text));
  } catch (const nlohmann::json::exception& e) {
    throw bad(e.what());
  } catch (const std::invalid_argument& e) {
    throw bad(e.what());
  }
  return true;
}

std::string ShardExchange::claim_path(std::uint64_t wave, std::size_t i) const {
  return fmt::format("{}/w{}-{}.claim", dir_, wave, i);
}

// Claims item i for this shard: a file naming the shard, made whole by link() (which fails if
// another shard claimed it first). Not synced: a claim lost in a crash only means the item is
// computed again.
bool ShardExchange::claim(std::uint64_t wave, std::size_t i) const {
  const std::string tmp = fmt::format("{}/w{}-{}.{}.{}.claiming", dir_, wave, i, index_, ::getpid());
  {
    std::ofstream out(tmp);
    out << index_ << "\n";
    out.flush();
    if (!out) throw ShardError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  }
  const std::string p = claim_path(wave, i);
  const int linked = ::link(tmp.c_str(), p.c_str());
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (linked != 0 && link_errno != EEXIST)
    throw ShardError(fmt::format("cannot create {}: {}", p, std::strerror(link_errno)));
  return linked == 0;
}

// The shard that claimed item i.
unsigned ShardExchange::claimant(std::uint64_t wave, std::size_t i) const {
  const std::string p = claim_path(wave, i);
  std::ifstream in(p);
  unsigned shard = 0;
  if (!(in >> shard) || shard >= count_)
    throw ShardError(fmt::format("{} is not a claim of one of the {} shards", p, count_));
  return shard;
}

// Whether another shard has published item i. Looking costs an fstat per other shard's log:
// it is done at most once per 10 us per other shard, however short the helper's executions
// (a later look only means more work done twice, on a core that would be idle).
bool ShardExchange::published(std::uint64_t wave, std::size_t i) {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_look_) return false;
  next_look_ = now + std::chrono::microseconds(10) * (count_ - 1);
  return logs_.has(wave, i);
}

bool ShardExchange::run(std::size_t n, const Compute& compute, const std::function<bool()>& stop,
                        std::vector<WaveResult>& results, std::uint64_t* own_executions) {
  const std::uint64_t wave = waves_++;
  results.assign(n, {});
  std::vector<bool> have(n, false);
  // Computes item i here and publishes it; false when `until` cut it short (nothing kept).
  auto do_item = [&](std::size_t i, const std::function<bool()>& until) {
    WaveResult r = compute(i, until);
    if (r.interrupted) return false;
    *own_executions += r.stats.executions;
    store(wave, i, r);
    results[i] = std::move(r);
    have[i] = true;
    return true;
  };
  // The first n items (one per shard) have fixed owners: item i is shard (i + w) mod n's, so
  // the first and largest subtree (the later ones sleep on what went before) goes round the
  // shards. The rest are claimed in order by whichever shard is free, so the work goes to
  // whoever runs dry (a fixed share of all items gave 2 shards of `readers --n 17` a 2:1
  // split). Waves of no more items than shards make no claim files: a claim's metadata write
  // slows every shard's fsync. An item this shard claimed in an earlier life (a rerun after
  // kill -9) is its own.
  auto fixed_owner = [&](std::size_t i) { return static_cast<unsigned>((i + wave) % count_); };
  struct Forget {  // whatever way this returns, the wave's records are no longer needed
    ShardLogs& logs;
    std::uint64_t wave;
    ~Forget() { logs.forget_through(wave); }
  } forget{logs_, wave};
  for (std::size_t i = 0; i < n; ++i) {
    if (i < count_ && fixed_owner(i) != index_) continue;
    if (stop()) return false;
    if (load(wave, i, results[i])) {
      have[i] = true;
    } else if (i < count_ || claim(wave, i) || claimant(wave, i) == index_) {
      if (!do_item(i, stop)) return false;
    }
  }
  // Nothing of its own left: it computes what is still missing too, whoever owns it, and drops
  // its copy as soon as another shard publishes the item (asked between executions). So a
  // shard never waits for a slow, killed or not yet started one, and a wave ends when its
  // last item is done anywhere; the cost is work done twice on cores that would be idle.
  for (std::size_t i = 0; i < n; ++i)
    while (!have[i]) {
      if (stop()) return false;
      if (load(wave, i, results[i])) {
        have[i] = true;
      } else if (!do_item(i, [&] { return stop() || published(wave, i); }) && stop()) {
        return false;
      }
    }
  return true;
}

}  // namespace mbcheck::sim::dpor

namespace mbcheck::sim {

void claim_shard_dir(const std::string& dir, unsigned index, const std::string& identity) {
  // The directory belongs to one search: the first shard names it, the others must match.
  const std::string id_path = dir + "/search.txt";
  const std::string tmp = fmt::format("{}/search.{}.{}.tmp", dir, index, ::getpid());
  const std::string text = identity + "\n";
  {
    std::ofstream out(tmp);
    out << text;
    out.flush();
    if (!out) throw ShardError(fmt::format("--shard-dir {}: cannot write {}: {}", dir, tmp, std::strerror(errno)));
  }
  const int linked = ::link(tmp.c_str(), id_path.c_str());  // fails with EEXIST if a shard made it first
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (linked != 0 && link_errno != EEXIST)
    throw ShardError(fmt::format("--shard-dir {}: cannot create {}: {}", dir, id_path, std::strerror(link_errno)));
  std::ifstream in(id_path);
  std::stringstream got;
  got << in.rdbuf();
  if (!in) throw ShardError(fmt::format("--shard-dir {}: cannot read {}", dir, id_path));
  if (got.str() != text)
    throw ShardError(
        fmt::format("--shard-dir {} holds the work of another search ({}); this one is {}; use an "
                    "empty directory",
                    dir, got.str().substr(0, got.str().find('\n')), identity));
}

}  // namespace mbcheck::sim
