// The library alone (mbcheck_sim, no command line) gives a CheckResult's replay token,
// replays it exactly, and writes its HTML page, Chrome trace and SARIF log (#47).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/check.hpp"
#include "sim/report.hpp"
#include "tests/protocol_helpers.hpp"

using namespace mbcheck::sim;
using namespace mbcheck::sim::test;

namespace {
using P = HostPlatform;

// Two rounds through one stage; the consumer never releases the stage, so the producer
// blocks on 'empty' in round two while the consumer blocks on 'full'.
void stuck_handoff() {
  Bar full = smem_bar(0), empty = smem_bar(1);
  P::label(full.raw(), "full", 0);
  P::label(empty.raw(), "empty", 0);
  if (P::thread_idx() == 0) {
    full.init(1);
    empty.init(1);
  }
  P::sync_threads();
  for (int round = 0; round < 2; ++round) {
    if (P::thread_idx() == 0) {
      empty.wait(round - 1);
      P::store(smem_word(0), std::int64_t{round});
      full.arrive();
    } else {
      full.wait(round);
      (void)P::load(smem_word(0));
      // missing: empty.arrive()
    }
  }
}

const ProtocolId kStuck{"stuck-handoff", {{"rounds", "2"}}};

CheckResult check_stuck(Program& program) {
  CheckOptions options;
  options.protocol = kStuck;
  return check_program(program, options);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory of its own under the system's temporary directory.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("mbcheck-library-report-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};
}  // namespace

TEST_CASE("a result's replay token is the command line's, and replays its counterexample exactly",
          "[library][replay]") {
  FunctionProgram program(threads(2), stuck_handoff);
  const CheckResult r = check_stuck(program);
  REQUIRE(r.verdict == CheckVerdict::bug);
  const Counterexample& c = *r.counterexample;
  REQUIRE(c.kind == Verdict::deadlock);

  // What `mbcheck check` prints for this protocol and shape: `replay` of that binary takes it.
  const std::string token = replay_token(r);
  CHECK(token == encode_token({"stuck-handoff", {{"rounds", "2"}}, c.schedule}));
  CHECK(token.rfind("mb2:stuck-handoff:rounds=2:", 0) == 0);
  CHECK_THAT(format_report(r, token), Catch::Contains("replay:   " + token));

  // On a program built anew: the same verdict, cause, details and schedule, every step traced.
  FunctionProgram again(threads(2), stuck_handoff);
  std::vector<TraceEntry> trace;
  const Outcome out = replay(again, token, &trace);
  CHECK(out.verdict == Verdict::deadlock);
  CHECK(out.message == c.cause);
  CHECK(out.details == c.details);
  CHECK(out.schedule == c.schedule);
  CHECK(out.steps == c.steps);
  CHECK(trace.size() == c.steps);
  CHECK_FALSE(out.cut_short);
  // Without a trace asked for, the same outcome.
  CHECK(replay(again, token).message == c.cause);
}

TEST_CASE("a kernel checked without a name gets a token of protocol 'kernel'; no bug, no token", "[library][replay]") {
  CheckResult r = check(threads(2), stuck_handoff);
  REQUIRE(r.counterexample);
  CHECK(replay_token(r).rfind("mb2:kernel::", 0) == 0);
  CheckResult fine = check(threads(1), [] {});
  REQUIRE(fine.verdict == CheckVerdict::verified);
  CHECK(replay_token(fine).empty());
}

TEST_CASE("a token that does not fit the program diverges; a malformed one throws", "[library][replay]") {
  FunctionProgram program(threads(2), stuck_handoff);
  const std::string token = replay_token(check_stuck(program));
  FunctionProgram alone(threads(1), [] {});  // one thread, which finishes at once
  const Outcome out = replay(alone, token);
  CHECK(out.verdict == Verdict::diverged);
  CHECK_THAT(out.message, Catch::Contains("a token of another shape or protocol"));
  CHECK_THROWS_AS(replay(program, "mb2:stuck-handoff"), TokenError);
}

TEST_CASE("a result's HTML page, Chrome trace and SARIF log, from the library", "[library][report]") {
  FunctionProgram program(threads(2), stuck_handoff);
  const CheckResult r = check_stuck(program);
  REQUIRE(r.counterexample);
  const std::string token = replay_token(r);

  const std::string html = html_page(program, r);
  CHECK_THAT(html, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK_THAT(html, Catch::Contains("<title>mbcheck: stuck-handoff rounds=2</title>"));
  CHECK_THAT(html, Catch::Contains(R"("verdict":"deadlock")"));
  CHECK_THAT(html, Catch::Contains("thread 0 (warp 0 lane 0)"));
  CHECK_THAT(html, Catch::Contains("thread 1 (warp 0 lane 1)"));
  CHECK_THAT(html, Catch::Contains("empty[0]"));
  CHECK_THAT(html, Catch::Contains(token));

  const auto trace = nlohmann::json::parse(trace_json(program, r));
  std::size_t steps = 0;
  std::set<std::string> names;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++steps;
    if (e["ph"] == "M") names.insert(e["args"]["name"].get<std::string>());
  }
  CHECK(steps == r.counterexample->steps);
  CHECK(names == std::set<std::string>{"thread 0 (warp 0 lane 0)", "thread 1 (warp 0 lane 1)"});
  CHECK(trace["otherData"]["verdict"] == "deadlock");
  CHECK(trace["otherData"]["replay"] == token);

  const auto sarif = nlohmann::json::parse(sarif_log(program, r));
  CHECK(sarif["version"] == "2.1.0");
  const auto& run = sarif["runs"][0];
  CHECK(run["tool"]["driver"]["version"] == kMbcheckVersion);
  REQUIRE(run["results"].size() == 1);
  const auto& result = run["results"][0];
  CHECK(result["ruleId"] == "deadlock");
  CHECK_THAT(result["message"]["text"].get<std::string>(), Catch::Contains(r.counterexample->cause));
  CHECK_THAT(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].get<std::string>(),
             Catch::EndsWith("test_library_report.cpp"));
}

TEST_CASE("write_reports writes the files named, as the writers give them; no bug, only an empty SARIF log",
          "[library][report]") {
  TempDir dir;
  FunctionProgram program(threads(2), stuck_handoff);
  const CheckResult r = check_stuck(program);
  REQUIRE(r.counterexample);
  ReportFiles files;
  files.html = (dir.path / "bug.html").string();
  files.trace = (dir.path / "bug.json").string();
  files.sarif = (dir.path / "bug.sarif").string();
  CHECK_FALSE(write_reports(program, r, files));
  CHECK(read_file(files.html) == html_page(program, r));
  CHECK(read_file(files.trace) == trace_json(program, r));
  CHECK(read_file(files.sarif) == sarif_log(program, r));

  FunctionProgram fine_program(threads(1), [] {});
  const CheckResult fine = check_program(fine_program);
  REQUIRE(fine.verdict == CheckVerdict::verified);
  CHECK(html_page(fine_program, fine).empty());
  CHECK(trace_json(fine_program, fine).empty());
  ReportFiles ok_files;
  ok_files.html = (dir.path / "ok.html").string();
  ok_files.sarif = (dir.path / "ok.sarif").string();
  CHECK_FALSE(write_reports(fine_program, fine, ok_files));
  CHECK_FALSE(std::filesystem::exists(ok_files.html));
  CHECK(nlohmann::json::parse(read_file(ok_files.sarif))["runs"][0]["results"].empty());

  // A file that cannot be written: what went wrong, naming it.
  ReportFiles bad;
  bad.html = (dir.path / "missing" / "bug.html").string();
  const auto error = write_reports(program, r, bad);
  REQUIRE(error);
  CHECK_THAT(*error, Catch::Contains(bad.html));
}
