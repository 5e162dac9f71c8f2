// Sharded search against one process: the command line run as separate processes, as a batch
// scheduler's array job would (2 shards at once on a fresh shard directory), next to one
// process with one job and one process with 2 jobs, on the same searches, in one run. Each
// figure is the median of 3 wall times; every run's last line must be the same verdict.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

pid_t start(const std::vector<std::string>& args, const std::string& out) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(MBCHECK_CLI));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  if (posix_spawn(&pid, MBCHECK_CLI, &fa, nullptr, argv.data(), environ) != 0) {
    fmt::print(stderr, "bench_shards: cannot run {}\n", MBCHECK_CLI);
    std::exit(1);
  }
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

void finish(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "bench_shards: a run of {} failed (status {})\n", MBCHECK_CLI, status);
    std::exit(1);
  }
}

// The verdict line, without its time.
std::string verdict(const std::string& out) {
  std::ifstream in(out);
  std::string line, last;
  while (std::getline(in, line))
    if (line.rfind("verified:", 0) == 0) last = line;
  return last.substr(0, last.rfind(", "));
}

struct Timed {
  double seconds;
  std::string verdict;
};

// `processes` at once, each with its own args; wall time until the last ends.
Timed run(const std::vector<std::vector<std::string>>& processes, const std::filesystem::path& tmp) {
  const auto t0 = Clock::now();
  std::vector<pid_t> pids;
  for (std::size_t i = 0; i < processes.size(); ++i)
    pids.push_back(start(processes[i], (tmp / fmt::format("out{}", i)).string()));
  for (pid_t p : pids) finish(p);
  Timed t{std::chrono::duration<double>(Clock::now() - t0).count(), verdict((tmp / "out0").string())};
  for (std::size_t i = 1; i < processes.size(); ++i)
    if (verdict((tmp / fmt::format("out{}", i)).string()) != t.verdict) t.verdict = "(shards disagree)";
  return t;
}

double median3(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[1];
}

}  // namespace

int main() {
  const auto tmp = std::filesystem::temp_directory_path() / fmt::format("mbcheck-bench-shards-{}", ::getpid());
  fmt::print("2 shards (2 processes at once, one shard directory) vs one process; median of 3 wall times\n\n");
  const std::vector<std::vector<std::string>> searches = {
      {"check", "lastzero", "--n", "12"}, {"check", "readers", "--n", "17"}, {"check", "readers", "--n", "18"}};
  for (const auto& search : searches) {
    std::vector<double> one, jobs2, shards;
    std::string want, got_jobs2, got_shards;
    for (int rep = 0; rep < 3; ++rep) {
      std::filesystem::remove_all(tmp);
      std::filesystem::create_directories(tmp / "dir");
      auto args = search;
      args.insert(args.end(), {"--jobs", "1"});
      Timed t = run({args}, tmp);
      one.push_back(t.seconds);
      want = t.verdict;
      args = search;
      args.insert(args.end(), {"--jobs", "2"});
      t = run({args}, tmp);
      jobs2.push_back(t.seconds);
      got_jobs2 = t.verdict;
      std::vector<std::vector<std::string>> pair;
      for (int i = 1; i <= 2; ++i) {
        args = search;
        args.insert(args.end(), {"--shard", fmt::format("{}/2", i), "--shard-dir", (tmp / "dir").string()});
        pair.push_back(args);
      }
      t = run(pair, tmp);
      shards.push_back(t.seconds);
      got_shards = t.verdict;
    }
    std::string name;
    for (std::size_t i = 1; i < search.size(); ++i) name += (i > 1 ? " " : "") + search[i];
    const double o = median3(one), j = median3(jobs2), s = median3(shards);
    fmt::print("  {:<18} {}\n", name, want);
    fmt::print("    one process, --jobs 1: {:.3f} s\n", o);
    fmt::print("    one process, --jobs 2: {:.3f} s = {:.2f}x{}\n", j, o / j,
               got_jobs2 == want ? "" : "  DIFFERENT RESULT: " + got_jobs2);
    fmt::print("    2 shards:              {:.3f} s = {:.2f}x{}\n", s, o / s,
               got_shards == want ? "" : "  DIFFERENT RESULT: " + got_shards);
  }
  std::filesystem::remove_all(tmp);
}
