// mbcheck next to two peers on the same protocol: its bundled epi-load (EpiLoadPipeline,
// spec/kernels/residual_add.hpp) against a Relacy model (bench/peers/relacy_epi_load.cpp,
// random scheduler) and a Promela model for Spin (bench/peers/epi_load.pml, exhaustive).
// Each model file says how it maps to epi-load and what it leaves out.
//
//   bench_peers [--runs R] [--jobs J] [--rounds N] [--check-reps N] [--relacy PATH] [--no-relacy]
//               [--pml PATH] [--no-spin] [--spin-time-limit S]
//
// Figures vary with the machine; compare them within one run. The fuzzing figures are taken in
// --rounds rounds (mbcheck with one job, with --jobs, then Relacy, back to back), each round's
// ratios from its own three timings, and the median ratio reported: on a shared VM whose speed
// drifts by a third from minute to minute, timings far apart in time are not comparable.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/check.hpp"
#include "sim/fuzz.hpp"
#include "sim/protocols/protocols.hpp"

using namespace mbcheck::sim;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Shape {
  int stages, threads, tiles, elems;
  std::map<std::string, std::string> options() const {  // one store warp of `threads` lanes
    return {{"stages", std::to_string(stages)},
            {"store-warps", "1"},
            {"threads-per-warp", std::to_string(threads)},
            {"tiles", std::to_string(tiles)},
            {"tile-elems", std::to_string(elems)}};
  }
  std::string name() const {
    return fmt::format("{} stages, 1 store warp of {} threads, {} tiles of {} floats", stages, threads, tiles, elems);
  }
};
constexpr Shape kFuzzShape{3, 4, 6, 4}, kLargeShape{4, 4, 8, 4};

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs `cmd` through the shell and returns its stdout (nullopt when it could not start).
std::optional<std::string> capture(const std::string& cmd, int* status) {
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return std::nullopt;
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  *status = pclose(f);
  return out;
}

// The number after `key` ("seconds=" in relacy's line, "errors: " in pan's report).
std::optional<double> field(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(text.c_str() + at + key.size(), nullptr);
}

// The number that starts the line holding `key` ("  2545497 states, stored").
std::optional<double> line_number(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  const auto start = text.rfind('\n', at);
  return std::strtod(text.c_str() + (start == std::string::npos ? 0 : start + 1), nullptr);
}

bool on_path(const std::string& tool) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", tool).c_str()) == 0;
}

fs::path own_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

struct FuzzFigures {
  double runs_per_s = 0, ns_per_transition = 0;
};

FuzzFigures fuzz_figures(std::uint64_t runs, unsigned jobs, bool quiet = false) {
  FuzzOptions o;
  o.kind = FuzzKind::random;
  o.runs = runs;
  o.jobs = jobs;
  o.seed = 1;
  const auto opts = kFuzzShape.options();
  const FuzzResult r = fuzz([&] { return std::unique_ptr<Program>(make_protocol("epi-load", opts)); }, o);
  if (r.bug_run || r.step_limited_runs)
    fmt::print("  (unexpected: {} step-limited runs, bug run {})\n", r.step_limited_runs,
               r.bug_run ? std::to_string(*r.bug_run) : "none");
  const FuzzFigures f{double(r.runs) / r.seconds, r.seconds * 1e9 / double(r.transitions)};
  if (quiet) return f;
  fmt::print(
      "  mbcheck random walk, --jobs {}: {} runs, {} transitions ({:.1f} per run) in {:.3f} s = {:.0f} runs/s, "
      "{:.0f} ns per transition (wall){}\n",
      jobs, r.runs, r.transitions, double(r.transitions) / double(r.runs), r.seconds, f.runs_per_s, f.ns_per_transition,
      jobs > 1 ? fmt::format(", {:.0f} ns per transition per core", f.ns_per_transition * jobs) : "");
  return f;
}

// The exhaustive check (DPOR) of epi-load at `s`, median wall time of `reps` checks, in s.
double check_figures(const Shape& s, int reps) {
  auto prog = make_protocol("epi-load", s.options());
  std::vector<double> secs;
  CheckResult r;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    r = check_program(*prog);
    secs.push_back(since(start));
  }
  fmt::print("  mbcheck check epi-load ({}): {}, {} execution(s), {} transitions; {:.3f} ms (median of {})\n", s.name(),
             to_string(r.verdict), r.stats.executions, r.stats.transitions, median(secs) * 1e3, reps);
  return median(secs);
}

struct Options {
  std::uint64_t runs = 200000;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  int check_reps = 20;
  int rounds = 3;
  std::string relacy, pml = MBCHECK_PEERS_DIR "/epi_load.pml";
  bool no_relacy = false, no_spin = false;
  double spin_limit_s = 300;
};

Options parse(int argc, char** argv) {
  Options o;
  o.relacy = (own_dir() / "relacy_epi_load").string();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) {
        fmt::print(stderr, "bench_peers: {} needs a value\n", a);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--runs")
      o.runs = std::stoull(value());
    else if (a == "--jobs")
      o.jobs = static_cast<unsigned>(std::stoul(value()));
    else if (a == "--rounds")
      o.rounds = std::max(1, std::stoi(value()));
    else if (a == "--check-reps")
      o.check_reps = std::max(1, std::stoi(value()));
    else if (a == "--relacy")
      o.relacy = value();
    else if (a == "--no-relacy")
      o.no_relacy = true;
    else if (a == "--pml")
      o.pml = value();
    else if (a == "--no-spin")
      o.no_spin = true;
    else if (a == "--spin-time-limit")
      o.spin_limit_s = std::stod(value());
    else {
      fmt::print(stderr,
                 "usage: bench_peers [--runs R] [--jobs J] [--rounds N] [--check-reps N] [--relacy PATH] [--no-relacy] "
                 "[--pml PATH] [--no-spin] [--spin-time-limit S]\n");
      std::exit(2);
    }
  }
  return o;
}

// Relacy's random scheduler on its model of the same shape: iterations per second, or why not.
std::optional<double> relacy_rate(const Options& o, std::string* why) {
  if (o.no_relacy) return *why = "skipped (--no-relacy)", std::nullopt;
  if (access(o.relacy.c_str(), X_OK) != 0)
    return *why = fmt::format("not installed (apt install relacy-dev), no {}", o.relacy), std::nullopt;
  const Shape& s = kFuzzShape;
  int status = 0;
  const auto out =
      capture(fmt::format("'{}' --stages {} --threads {} --tiles {} --tile-elems {} --iterations {} 2>/dev/null",
                          o.relacy, s.stages, s.threads, s.tiles, s.elems, o.runs),
              &status);
  const auto secs = out ? field(*out, "seconds=") : std::nullopt;
  if (!out || status != 0 || !secs || out->find("result=ok") == std::string::npos)
    return *why = fmt::format("failed (exit status {}): {}", status, out ? *out : "could not start"), std::nullopt;
  return double(o.runs) / *secs;
}

// The rounds: mbcheck with one job, with --jobs, and Relacy, back to back; each round's ratios.
void fuzz_rounds(const Options& o) {
  std::vector<double> ratio_one, ratio_all, ns_one;
  std::string why;
  for (int round = 1; round <= o.rounds; ++round) {
    const FuzzFigures one = fuzz_figures(o.runs, 1, round > 1);
    const FuzzFigures all = o.jobs > 1 ? fuzz_figures(o.runs, o.jobs, round > 1) : one;
    ns_one.push_back(one.ns_per_transition);
    const std::optional<double> rate = relacy_rate(o, &why);
    if (!rate) return fmt::print("  relacy: {}\n", why);
    ratio_one.push_back(one.runs_per_s / *rate);
    ratio_all.push_back(all.runs_per_s / *rate);
    fmt::print(
        "  round {}: mbcheck {:.0f} runs/s ({:.0f} ns per transition) with --jobs 1, {:.0f} runs/s with --jobs {}; "
        "relacy random scheduler (1 thread) {:.0f} iterations/s; mbcheck / relacy {:.2f}x and {:.2f}x\n",
        round, one.runs_per_s, one.ns_per_transition, all.runs_per_s, o.jobs, *rate, ratio_one.back(),
        ratio_all.back());
  }
  auto range = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return fmt::format("{:.2f}x (rounds: {:.2f}-{:.2f}x)", v[v.size() / 2], v.front(), v.back());
  };
  fmt::print("  mbcheck / relacy executions per second, median of {} rounds: {} with --jobs 1, {} with --jobs {}\n",
             o.rounds, range(ratio_one), range(ratio_all), o.jobs);
  std::sort(ns_one.begin(), ns_one.end());
  fmt::print("  mbcheck ns per transition with --jobs 1, median of {} rounds: {:.0f}\n", o.rounds,
             ns_one[ns_one.size() / 2]);
  // The model must find a planted bug, or its speed says nothing.
  int status = 0;
  const auto bug = capture(fmt::format("'{}' --bug --iterations {} 2>/dev/null", o.relacy, o.runs), &status);
  const bool found = bug && bug->find("result=DATA RACE") != std::string::npos;
  fmt::print("  relacy --bug (consumers release before reading): {}\n",
             found ? fmt::format("DATA RACE at iteration {:.0f}", field(*bug, "iterations=").value_or(0))
                   : "NOT FOUND: the model is broken");
}

void spin(const Options& o, double mbcheck_s) {
  if (o.no_spin) return fmt::print("  spin: skipped (--no-spin)\n");
  if (!on_path("spin") || !on_path("gcc")) return fmt::print("  spin: spin or gcc not found (apt install spin gcc)\n");
  if (!fs::exists(o.pml)) return fmt::print("  spin: no model at {} (--pml PATH)\n", o.pml);
  char tmpl[] = "/tmp/bench_peers_spin.XXXXXX";
  if (!mkdtemp(tmpl)) return fmt::print("  spin: cannot create a temporary directory\n");
  const fs::path dir = tmpl;
  const Shape& s = kLargeShape;
  int status = 0;
  auto start = Clock::now();
  const auto built =
      capture(fmt::format("cd '{}' && spin -DSTAGES={} -DTHREADS={} -DTILES={} -DVECS={} -a '{}' >build.log 2>&1 && "
                          "gcc -O2 -w -DSAFETY -o pan pan.c >>build.log 2>&1 && echo built",
                          dir.string(), s.stages, s.threads, s.tiles, s.elems / 4, fs::absolute(o.pml).string()),
              &status);
  const double build_s = since(start);
  if (!built || built->find("built") == std::string::npos) {
    fmt::print("  spin: building pan failed (see {}/build.log)\n", dir.string());
    return;
  }
  start = Clock::now();
  const auto out =
      capture(fmt::format("cd '{}' && timeout {:.0f} ./pan -m100000 2>&1", dir.string(), std::max(1.0, o.spin_limit_s)),
              &status);
  const double run_s = since(start);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!out) return fmt::print("  spin: pan could not start\n");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 124)
    return fmt::print("  spin: pan ran past --spin-time-limit {:.0f} s (> {:.0f}x mbcheck)\n", o.spin_limit_s,
                      o.spin_limit_s / mbcheck_s);
  const auto errors = field(*out, "errors: ");
  const auto states = line_number(*out, " states, stored");
  const auto pan_s = field(*out, "elapsed time ");
  fmt::print(
      "  spin ({}): spin -a + gcc {:.2f} s; pan {:.2f} s wall (pan's own timer {} s), {} states stored, errors {}\n",
      s.name(), build_s, run_s, pan_s ? fmt::format("{:.2f}", *pan_s) : "?",
      states ? fmt::format("{:.0f}", *states) : "?", errors ? fmt::format("{:.0f}", *errors) : "?");
  if (!errors || *errors != 0) fmt::print("  spin: unexpected report:\n{}", *out);
  fmt::print("  spin / mbcheck exhaustive time: {:.0f}x (pan alone), {:.0f}x (with spin -a and gcc)\n",
             run_s / mbcheck_s, (run_s + build_s) / mbcheck_s);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  fmt::print("mbcheck vs Relacy and Spin on epi-load\n\nrandom executions, epi-load at {} ({} runs each):\n",
             kFuzzShape.name(), o.runs);
  fuzz_rounds(o);

  fmt::print("\nexhaustive search:\n");
  check_figures(kFuzzShape, o.check_reps);
  const double large = check_figures(kLargeShape, o.check_reps);
  spin(o, large);
  return 0;
}
