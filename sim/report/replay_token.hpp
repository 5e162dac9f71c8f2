// Replay tokens: one printable string that names the protocol, its shape and the exact
// schedule of an execution, so `mbcheck replay TOKEN` reproduces it step for step.
//
//   mb2:<protocol>:<key>=<value>,<key>=<value>,...:<schedule>
// The schedule is the agent chosen at each step, run-length encoded as (agent, repeat)
// LEB128 varints, the agent as the zigzag difference from the previous run's, deflated
// (zlib), then base64url without padding. mb1 tokens (the same varints with the agent itself,
// not deflated: what the crash reporter writes without allocating) are read as well.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/runtime/runtime.hpp"

namespace mbcheck::sim {

struct ReplayToken {
  std::string protocol;
  std::map<std::string, std::string> options;  // shape flags, canonical order
  std::vector<AgentId> schedule;
};

struct TokenError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string encode_token(const ReplayToken& token);
// A token's shape flags as people read them: "consumers=3 rounds=4".
std::string shape_line(const std::map<std::string, std::string>& options);
// The mb1 form (schedule not deflated): the crash reporter's, whose schedule part is written
// by encode_schedule_to from a signal handler after this prefix.
std::string encode_token_mb1(const ReplayToken& token);
// The most steps a token may record: the step limit of one execution (every command's default).
inline constexpr std::uint64_t kMaxTokenSteps = 10'000'000;
// Throws TokenError saying what is wrong (a duplicate shape entry, more than `max_steps`
// steps: checked before anything is allocated).
ReplayToken decode_token(const std::string& text, std::uint64_t max_steps = kMaxTokenSteps);

std::string encode_schedule(const std::vector<AgentId>& schedule);
// The same text without allocating (async-signal-safe), snprintf-style: writes at most `cap`
// chars of the encoding of schedule[0, n) to `out` and returns its full length, so a result
// above `cap` means it did not fit. No terminating NUL.
std::size_t encode_schedule_to(const AgentId* schedule, std::size_t n, char* out, std::size_t cap) noexcept;
std::vector<AgentId> decode_schedule(const std::string& text, std::uint64_t max_steps = kMaxTokenSteps);

}  // namespace mbcheck::sim
