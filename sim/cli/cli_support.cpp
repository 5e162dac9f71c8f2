#include "sim/cli/cli_support.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>

#include "sim/explore/explore.hpp"
#include "sim/report/replay_token.hpp"

namespace mbcheck::sim::cli {

int usage_error(const std::string& message) {
  fmt::print(stderr, "mbcheck: error: {}\n", message);
  return kExitUsage;
}

// Prints one execution's result; returns the exit code.
int report(const std::string& protocol, CliProgram& program, const Outcome& out, bool print_token_always) {
  if (out.cut_short) {
    // Stopped inside the execution (SIGINT/SIGTERM, --time-limit): its prefix proves nothing.
    print_out("verdict: incomplete: {}\n", stop_requested() ? "interrupted" : "time limit");
    print_out("steps:   {} (stopped there)\n", out.steps);
    print_out("replay:  {}\n", encode_token({protocol, program.options(), out.schedule}));
    return kExitIncomplete;
  }
  if (out.verdict == Verdict::step_limit) {
    // Past --max-steps the execution proves nothing either way.
    print_out("verdict: incomplete: step-limit\n");
    print_out("cause:   {}\n", out.message);
    print_out("steps:   {}\n", out.steps);
    print_out("replay:  {}\n", encode_token({protocol, program.options(), out.schedule}));
    return kExitIncomplete;
  }
  if (out.verdict == Verdict::completed) {
    print_out("verdict: ok: {}\n", program.result_summary());
  } else {
    print_out("verdict: bug: {}\n", to_string(out.verdict));
    print_out("cause:   {}\n", out.message);
    for (const auto& d : out.details) print_out("         {}\n", d);
  }
  print_out("steps:   {}\n", out.steps);
  // A correct execution's token is only useful on request (it runs to kilobytes).
  if (out.verdict != Verdict::completed || print_token_always)
    print_out("replay:  {}\n", encode_token({protocol, program.options(), out.schedule}));
  return out.verdict == Verdict::completed ? kExitOk : kExitBug;
}

// The fields --json shares between every strategy: what was checked, the verdict, and the
// counterexample (schema: sim/output.schema.json).
nlohmann::json result_json(const std::string& protocol, CliProgram& program, const std::string& strategy,
                           CheckVerdict verdict, const std::optional<Counterexample>& cex, const std::string& token) {
  nlohmann::json j;
  j["protocol"] = protocol;
  j["options"] = program.options();
  j["strategy"] = strategy;
  j["verdict"] = to_string(verdict);
  j["kind"] = cex ? nlohmann::json(to_string(cex->kind)) : nlohmann::json();
  j["replay"] = token.empty() ? nlohmann::json() : nlohmann::json(token);
  if (cex) {
    j["cause"] = cex->cause;
    j["details"] = cex->details;
    if (cex->misuse) j["misuse"] = std::string(to_string(*cex->misuse));
    if (cex->root_misuse) j["root_misuse"] = std::string(to_string(*cex->root_misuse));
    j["steps"] = cex->steps;
    j["timeline"] = cex->timeline;
    j["counterexample"] = nlohmann::json::parse(counterexample_json(visual_input(program, cex->schedule, "", token)));
  }
  return j;
}

// A count or a seed: digits only, within 64 bits (CLI11 alone turns "-1" into 2^64-1).
extern const CLI::Validator kWholeNumber;
const CLI::Validator kWholeNumber(
    [](std::string& s) -> std::string {
      if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
        return "must be a whole number (digits only), got '" + s.substr(0, 40) + "'";
      if (s.size() == 20 && s > "18446744073709551615") return "must be below 2^64";
      return {};
    },
    "WHOLE");
// A time limit: a finite number of seconds in [0, 1e9] (0: none).
extern const CLI::Validator kSeconds;
const CLI::Validator kSeconds(
    [](std::string& s) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v < 0 || v > 1e9)
        return "must be a number of seconds in [0, 1e9], got '" + s.substr(0, 40) + "'";
      return {};
    },
    "SECONDS");

namespace {
// Out of memory anywhere (the search's bookkeeping, a fiber, a scheduler callback that may
// not throw): one clear line, preformatted (nothing may allocate now), and exit 2.
char g_oom_message[512] = "mbcheck: error: out of memory\n";
void on_out_of_memory() {
  (void)!write(STDERR_FILENO, g_oom_message, std::strlen(g_oom_message));
  _exit(kExitUsage);
}

// --memory-limit: the address-space limit (RLIMIT_AS) for the process, in GiB; by default
// 90% of physical memory, so a shape too large fails with the line above, not by swapping.
}  // namespace

std::uint64_t apply_memory_limit(double gib) {
  const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  const double bytes = gib > 0 ? gib * 1024.0 * 1024 * 1024 : 0.9 * phys;
  rlimit lim{};
  getrlimit(RLIMIT_AS, &lim);
  const rlim_t want = static_cast<rlim_t>(bytes);
  if (lim.rlim_max == RLIM_INFINITY || want < lim.rlim_max) lim.rlim_cur = want;
#if defined(__SANITIZE_ADDRESS__)
    // ASan reserves terabytes of address space for its shadow memory: an RLIMIT_AS would stop it
    // ("Failed to mmap"). Under ASan the limit only sizes the search's preflight.
#else
  setrlimit(RLIMIT_AS, &lim);
#endif
  std::snprintf(g_oom_message, sizeof g_oom_message,
                "mbcheck: error: out of memory: this shape needs more than the %.1f GiB limit (--memory-limit; "
                "an exhaustive search keeps about 200 bytes per step of its deepest execution); use a "
                "smaller shape, --strategy pct or random, or a higher --memory-limit\n",
                static_cast<double>(lim.rlim_cur) / (1024.0 * 1024 * 1024));
  return lim.rlim_cur == RLIM_INFINITY ? 0 : static_cast<std::uint64_t>(lim.rlim_cur);
}

namespace {
// SIGINT/SIGTERM: the first asks the search or campaign to stop and print what it has
// (exit 3, incomplete); a second one exits at once.
extern "C" void on_interrupt(int sig) {
  static volatile std::sig_atomic_t seen = 0;
  if (seen) _exit(128 + sig);
  seen = 1;
  request_stop();
}

}  // namespace

void install_process_handlers() {
  std::set_new_handler(on_out_of_memory);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A file-size limit (ulimit -f, a batch scheduler's quota) would otherwise kill the process
  // with SIGXFSZ mid-write, silently: ignored, the write fails with EFBIG and the output or
  // shard file that could not be written is reported like a full disk (exit 2).
  std::signal(SIGXFSZ, SIG_IGN);
}

namespace {
int g_stdout_error = 0;  // errno of the first failed write to stdout
bool g_stdout_reported = false;
}  // namespace

void write_stdout(std::string_view text) {
  if (g_stdout_error != 0) return;  // the result is lost already: no half of what follows
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) g_stdout_error = errno != 0 ? errno : EIO;
}

bool flush_stdout() {
  if (g_stdout_error == 0 && std::fflush(stdout) != 0) g_stdout_error = errno != 0 ? errno : EIO;
  if (g_stdout_error == 0 && std::ferror(stdout)) g_stdout_error = EIO;
  if (g_stdout_error == 0) return true;
  if (!g_stdout_reported)
    fmt::print(stderr, "mbcheck: error: cannot write the result to stdout: {}\n", std::strerror(g_stdout_error));
  g_stdout_reported = true;
  return false;
}

namespace {
// The temporary file an output is written through (sim/report/report_files.cpp names it so).
std::string temporary_for(const std::string& path) { return fmt::format("{}.{}.tmp", path, ::getpid()); }
}  // namespace

bool check_output_path(const std::string& flag, const std::string& path) {
  if (path.empty()) {
    fmt::print(stderr, "mbcheck: error: {} needs a file name\n", flag);
    return false;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    fmt::print(stderr, "mbcheck: error: {} {}: is a directory\n", flag, path);
    return false;
  }
  // The file the write will create, created and removed now: access() would not do, it says
  // yes to root where the file system says no (/proc, a read-only mount), and it does not see
  // a name too long. Nothing is left behind, and an existing output stays as it is.
  const std::string tmp = temporary_for(path);
  const int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST) {
    const int err = errno;
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    fmt::print(stderr, "mbcheck: error: {} {}: cannot write in {}: {}\n", flag, path,
               dir.empty() ? std::string(".") : dir.string(), std::strerror(err));
    return false;
  }
  if (fd >= 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
  }
  return true;
}

}  // namespace mbcheck::sim::cli
