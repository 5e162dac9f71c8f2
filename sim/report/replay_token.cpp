#include "sim/report/replay_token.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace mbcheck::sim {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string unbase64url(const std::string& text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char ch : text) {
    const char* at = std::char_traits<char>::find(kAlphabet, 64, ch);
    if (!at) throw TokenError(fmt::format("bad character '{}' in the schedule part", ch));
    acc = (acc << 6) | static_cast<std::uint32_t>(at - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}
}  // namespace

std::size_t encode_schedule_to(const AgentId* schedule, std::size_t n, char* out, std::size_t cap) noexcept {
  // The same bytes as put_varint + base64url, streamed through a bit accumulator so that
  // nothing is allocated (the crash reporter calls this from a signal handler).
  std::size_t len = 0;
  std::uint32_t acc = 0;
  int bits = 0;
  auto emit = [&](char c) {
    if (len < cap) out[len] = c;
    ++len;
  };
  auto byte = [&](unsigned char b) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      emit(kAlphabet[(acc >> bits) & 63]);
    }
  };
  auto varint = [&](std::uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<unsigned char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    byte(static_cast<unsigned char>(v));
  };
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && schedule[j] == schedule[i]) ++j;
    varint(schedule[i]);
    varint(j - i);
    i = j;
  }
  if (bits > 0) emit(kAlphabet[(acc << (6 - bits)) & 63]);
  return len;
}

std::string shape_line(const std::map<std::string, std::string>& options) {
  std::string out;
  for (const auto& [k, v] : options) out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v);
  return out;
}

std::string encode_schedule(const std::vector<AgentId>& schedule) {
  std::string out(encode_schedule_to(schedule.data(), schedule.size(), nullptr, 0), '\0');
  encode_schedule_to(schedule.data(), schedule.size(), out.data(), out.size());
  return out;
}

namespace {
// The runs (agent, repeat) as LEB128 varints; with `delta` (mb2) the agent is the zigzag
// difference from the previous run's.
std::vector<AgentId> decode_runs(const std::string& bytes, bool delta, std::uint64_t max_steps) {
  std::vector<AgentId> out;
  std::size_t pos = 0;
  auto get = [&]() -> std::uint64_t {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= bytes.size()) throw TokenError("the schedule part is truncated");
      auto b = static_cast<unsigned char>(bytes[pos++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw TokenError("the schedule part holds a number that is too long");
  };
  std::int64_t previous = 0;
  while (pos < bytes.size()) {
    const std::uint64_t first = get();
    const std::uint64_t repeat = get();
    const std::int64_t agent = delta ? previous + static_cast<std::int64_t>((first >> 1) ^ (~(first & 1) + 1))
                                     : static_cast<std::int64_t>(std::min<std::uint64_t>(first, INT64_MAX));
    if (agent < 0 || static_cast<std::uint64_t>(agent) >= kNoAgent - 1)
      throw TokenError(fmt::format("the schedule names agent {}, which no execution has", agent));
    if (repeat == 0) throw TokenError("the schedule part is corrupt");
    // Bounded before anything is allocated: a few characters can claim billions of steps.
    if (repeat > max_steps || out.size() + repeat > max_steps)
      throw TokenError(fmt::format("the token records more than {} steps (the step limit)", max_steps));
    out.insert(out.end(), repeat, static_cast<AgentId>(agent));
    previous = agent;
  }
  return out;
}
}  // namespace

std::vector<AgentId> decode_schedule(const std::string& text, std::uint64_t max_steps) {
  return decode_runs(unbase64url(text), false, max_steps);
}

namespace {
// mb2's schedule bytes: runs of one agent as (zigzag(agent - previous run's agent), length)
// varints, deflated. Ascending ids (a preemption-free schedule walks the threads in order)
// become one repeated pair, which deflate folds into a few bytes.
std::string deflated_schedule(const std::vector<AgentId>& schedule) {
  std::string raw;
  auto varint = [&](std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) raw.push_back(static_cast<char>((v & 0x7f) | 0x80));
    raw.push_back(static_cast<char>(v));
  };
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < schedule.size();) {
    std::size_t j = i;
    while (j < schedule.size() && schedule[j] == schedule[i]) ++j;
    const std::int64_t delta = static_cast<std::int64_t>(schedule[i]) - previous;
    varint(static_cast<std::uint64_t>((delta << 1) ^ (delta >> 63)));
    varint(j - i);
    previous = schedule[i];
    i = j;
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                static_cast<uLong>(raw.size()), Z_BEST_COMPRESSION) != Z_OK)
    throw std::runtime_error("mbcheck: zlib could not compress a schedule");
  out.resize(size);
  static const char* kAlphabetChars = kAlphabet;
  std::string text;
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : out) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      text.push_back(kAlphabetChars[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) text.push_back(kAlphabetChars[(acc << (6 - bits)) & 63]);
  return text;
}

// Inflates at most `cap` bytes (a few characters must not claim gigabytes).
std::string inflated(const std::string& bytes, std::size_t cap) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw TokenError("zlib could not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    char chunk[16384];
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
    if (out.size() > cap) rc = Z_MEM_ERROR;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  inflateEnd(&z);
  if (rc == Z_MEM_ERROR) throw TokenError("the schedule part claims more steps than the step limit");
  if (rc != Z_STREAM_END) throw TokenError("the schedule part is truncated or corrupt");
  return out;
}

std::vector<AgentId> decode_deflated_schedule(const std::string& text, std::uint64_t max_steps) {
  const std::size_t cap = static_cast<std::size_t>(std::min<std::uint64_t>(max_steps, 1u << 26)) * 10 + 64;
  return decode_runs(inflated(unbase64url(text), cap), true, max_steps);
}
}  // namespace

std::string encode_token_mb1(const ReplayToken& token) {
  std::string opts;
  for (const auto& [k, v] : token.options) opts += fmt::format("{}{}={}", opts.empty() ? "" : ",", k, v);
  return fmt::format("mb1:{}:{}:{}", token.protocol, opts, encode_schedule(token.schedule));
}

std::string encode_token(const ReplayToken& token) {
  std::string opts;
  for (const auto& [k, v] : token.options) opts += fmt::format("{}{}={}", opts.empty() ? "" : ",", k, v);
  return fmt::format("mb2:{}:{}:{}", token.protocol, opts, deflated_schedule(token.schedule));
}

ReplayToken decode_token(const std::string& text, std::uint64_t max_steps) {
  // Tokens may arrive wrapped or quoted from a terminal: ignore whitespace.
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t.push_back(c);
  // mb2: the schedule deflated (encode_token); mb1: plain varints (the crash reporter's, made
  // without allocating, and tokens of earlier versions).
  const bool deflated = t.rfind("mb2:", 0) == 0;
  if (!deflated && t.rfind("mb1:", 0) != 0) throw TokenError("a replay token starts with 'mb2:' (or 'mb1:')");
  auto p1 = t.find(':', 4);
  if (p1 == std::string::npos) throw TokenError("no shape part after the protocol name");
  auto p2 = t.find(':', p1 + 1);
  if (p2 == std::string::npos) throw TokenError("no schedule part after the shape");
  ReplayToken out;
  out.protocol = t.substr(4, p1 - 4);
  if (out.protocol.empty()) throw TokenError("empty protocol name");
  if (out.protocol.size() > 64) throw TokenError("the protocol name is longer than 64 characters");
  std::string opts = t.substr(p1 + 1, p2 - p1 - 1);
  std::size_t pos = 0;
  while (pos < opts.size()) {
    auto comma = opts.find(',', pos);
    std::string kv = opts.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || kv.size() > 200)
      throw TokenError(fmt::format("shape entry '{}' is not key=value", kv.substr(0, 60)));
    if (!out.options.emplace(kv.substr(0, eq), kv.substr(eq + 1)).second)
      throw TokenError(fmt::format("shape entry '{}' appears twice", kv.substr(0, eq)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  out.schedule =
      deflated ? decode_deflated_schedule(t.substr(p2 + 1), max_steps) : decode_schedule(t.substr(p2 + 1), max_steps);
  return out;
}

}  // namespace mbcheck::sim
