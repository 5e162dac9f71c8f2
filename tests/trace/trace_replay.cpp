// Trace conformance: replays barrier-operation logs recorded on the GPU
// (device/trace_residual_add.cu) through the emulator's state machine, one CTA at a time in
// log order, and checks that each is a valid execution: no misuse, every wait that returned
// on the GPU finds its phase complete, and at the end every barrier has finished its last
// phase with all arrivals and bytes accounted for.
//
// A bulk copy's landing is not in the log (the copy engine signals the barrier itself); it
// may happen at any time after the issue, so the replay lands it at once, which can only
// complete phases earlier, never later, than on the GPU.
//
//   mbcheck_trace_replay FILE...     exit 0 when every run of every file is valid
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/runtime/mbarrier.hpp"

namespace {

using mbcheck::sim::MbarrierState;
using mbcheck::sim::MisuseError;

// TraceOp of device/trace_platform.cuh.
enum Op : unsigned { kInit = 1, kArrive, kArriveExpectTx, kExpectTx, kCompleteTx, kBulkCopy, kWait };
const char* op_name(unsigned op) {
  static const char* names[] = {"?",         "init",        "arrive",    "arrive_expect_tx",
                                "expect_tx", "complete_tx", "bulk_copy", "wait"};
  return op < 8 ? names[op] : "?";
}

struct Record {
  unsigned seq, op, barrier, thread;
  long long arg;
};

struct Run {
  std::string header;
  std::map<unsigned, std::vector<Record>> ctas;  // cta -> records in seq order
};

std::vector<Run> read_runs(const std::string& path) {
  std::vector<Run> runs;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("run ", 0) == 0) {
      runs.push_back({line, {}});
      continue;
    }
    std::istringstream words(line);
    unsigned cta;
    Record r{};
    if (runs.empty() || !(words >> cta >> r.seq >> r.op >> r.barrier >> r.thread >> r.arg)) continue;
    runs.back().ctas[cta].push_back(r);
  }
  return runs;
}

// Replays one CTA's log; returns "" if valid, else what went wrong.
std::string replay_cta(const std::vector<Record>& log, unsigned long long* waits) {
  std::map<unsigned, MbarrierState> bars;
  for (size_t i = 0; i < log.size(); ++i) {
    const Record& r = log[i];
    if (r.seq != i) return "record " + std::to_string(i) + " has seq " + std::to_string(r.seq) + ": the log has a gap";
    MbarrierState& bar = bars[r.barrier];
    const std::string where = "seq " + std::to_string(r.seq) + " thread " + std::to_string(r.thread) + " " +
                              op_name(r.op) + "(" + std::to_string(r.arg) + ") on barrier " + std::to_string(r.barrier);
    try {
      bool completed = false;
      switch (r.op) {
        case kInit: bar.init(r.arg); break;
        case kArrive: bar.arrive(r.arg, false, &completed); break;
        case kArriveExpectTx: bar.arrive_expect_tx(r.arg, &completed); break;
        case kExpectTx: bar.expect_tx(r.arg); break;
        case kCompleteTx:
        case kBulkCopy: bar.complete_tx(r.arg); break;  // a copy lands at once (see above)
        case kWait:
          ++*waits;
          if (!bar.wait_would_proceed(r.arg) || !bar.test_wait_parity(r.arg))
            return where + ": returned on the GPU, but the phase is incomplete here (" + bar.describe() + ")";
          break;
        default: return where + ": unknown operation";
      }
    } catch (const MisuseError& e) {
      return where + ": " + e.what();
    }
  }
  for (auto& [index, bar] : bars) {
    if (bar.pending != bar.expected || bar.tx != 0)
      return "barrier " + std::to_string(index) + " ends mid-phase (" + bar.describe() +
             "): arrivals or bytes do not add up";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mbcheck_trace_replay FILE...\n");
    return 2;
  }
  int invalid = 0, runs_seen = 0;
  for (int f = 1; f < argc; ++f) {
    for (const Run& run : read_runs(argv[f])) {
      ++runs_seen;
      size_t records = 0;
      unsigned long long waits = 0;
      std::string verdict;
      for (const auto& [cta, log] : run.ctas) {
        records += log.size();
        const std::string err = replay_cta(log, &waits);
        if (!err.empty() && verdict.empty()) verdict = "CTA " + std::to_string(cta) + ": " + err;
      }
      if (run.ctas.empty()) verdict = "no records";
      std::printf("%s: %zu CTAs, %zu records, %llu waits: %s\n", run.header.c_str(), run.ctas.size(), records, waits,
                  verdict.empty() ? "valid" : ("INVALID: " + verdict).c_str());
      invalid += verdict.empty() ? 0 : 1;
    }
  }
  std::printf("%s: %d of %d run(s) invalid\n", invalid || !runs_seen ? "FAIL" : "PASS", invalid, runs_seen);
  return invalid || !runs_seen ? 1 : 0;
}
