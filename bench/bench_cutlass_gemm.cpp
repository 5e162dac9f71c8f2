// Whole CUTLASS GEMMs checked exhaustively (tests/cutlass/gemm: CUTLASS examples 48 and 49
// through GemmUniversalAdapter, unmodified): for each kernel and cluster shape, the check's
// executions, steps (transitions), seconds and the process's peak memory, each check a process
// of its own (`<binary> check <kernel> --json`, peak memory from wait4's ru_maxrss). The last
// column is the check's time over compute-sanitizer racecheck's on an H100 for one schedule of
// example 48 (1.46 s at 256x256x128, issue 48; device/RESULTS.md has this tree's own figures).
// Checked with --cta-acquire peers (the H100's scopes) and --time-limit 60.
//   bench_cutlass_gemm [--m M --n N --k K --sms S]   (default 256 384 128 2)
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Row {
  const char* binary;
  const char* kernel;
};
const Row kRows[] = {
    {GEMM_EX48, "ex48-1x1"},
    {GEMM_EX48, "ex48-2x1"},
    {GEMM_EX49_COOPERATIVE, "ex49-cooperative-1x1"},
    {GEMM_EX49_COOPERATIVE, "ex49-cooperative-2x1"},
    {GEMM_EX49_PINGPONG, "ex49-pingpong-1x1"},
    {GEMM_EX49_PINGPONG, "ex49-pingpong-2x1"},
};
constexpr double kRacecheckSeconds = 1.46;

// Runs `args` with stdout to `out`; returns its exit status and peak resident set (KiB).
std::pair<int, long> run(const std::vector<std::string>& args, const std::string& out) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) return {-1, 0};
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> shape = {"--m", "256", "--n", "384", "--k", "128", "--sms", "2"};
  for (int i = 1; i + 1 < argc; i += 2)
    for (std::size_t j = 0; j < shape.size(); j += 2)
      if (shape[j] == argv[i]) shape[j + 1] = argv[i + 1];
  fmt::print("whole CUTLASS GEMMs, exhaustive check, {}x{}x{} on {} SMs (one process each)\n", shape[1], shape[3],
             shape[5], shape[7]);
  fmt::print("{:<22} {:>10} {:>12} {:>9} {:>10} {:>12}  {}\n", "kernel", "executions", "steps", "seconds", "peak MiB",
             "/racecheck", "verdict");
  const std::string out = "bench_cutlass_gemm.out.json";
  int failures = 0;
  for (const Row& row : kRows) {
    // The H100's scopes (a cluster GEMM races under PTX's: docs/semantics.md, "Scopes"); a
    // minute each at most (a check that does not finish says incomplete).
    std::vector<std::string> args = {row.binary,      "check", row.kernel,     "--json",
                                     "--cta-acquire", "peers", "--time-limit", "60"};
    args.insert(args.end(), shape.begin(), shape.end());
    const auto [status, rss_kib] = run(args, out);
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.contains("executions")) {
      fmt::print("{:<22} no result (exit {})\n", row.kernel, status);
      ++failures;
      continue;
    }
    const double seconds = j.value("seconds", 0.0);
    // "kind" is null where there is no bug.
    const std::string kind = j.contains("kind") && j["kind"].is_string() ? j["kind"].get<std::string>() : "";
    const std::string verdict = j.value("verdict", "?") + (kind.empty() ? "" : " " + kind);
    fmt::print("{:<22} {:>10} {:>12} {:>9.2f} {:>10.1f} {:>12.2f}  {}\n", row.kernel, j.value("executions", 0ull),
               j.value("transitions", 0ull), seconds, rss_kib / 1024.0, seconds / kRacecheckSeconds, verdict);
    failures += j.value("verdict", "") != "verified";
  }
  std::remove(out.c_str());
  return failures ? 1 : 0;
}
