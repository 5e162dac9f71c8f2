// What the bundled protocols share to read their options and hold their buffers
// (sim/protocols/protocols.cpp, pingpong.cpp and cluster_gemm.cpp; not part of the library's API).
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/protocols/protocols.hpp"

namespace mbcheck::sim {

// Reads integer and float options, with one clear error per bad value.
class OptionReader {
 public:
  OptionReader(const ProtocolInfo& info, const std::map<std::string, std::string>& given) : info_(info) {
    for (const auto& opt : info.options) values_[opt.name] = opt.default_value;
    for (const auto& [k, v] : given) {
      if (!values_.count(k)) throw ShapeError(fmt::format("{} has no option --{}", info.name, k));
      values_[k] = v;
    }
  }
  std::uint64_t integer(const std::string& name, std::uint64_t lo, std::uint64_t hi) {
    const std::string& v = values_.at(name);
    std::uint64_t out = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size())
      throw ShapeError(fmt::format("--{} {}: not a whole number", name, v));
    if (out < lo || out > hi) throw ShapeError(fmt::format("--{} {}: must be in [{}, {}]", name, v, lo, hi));
    return out;
  }
  float real(const std::string& name) {
    const std::string& v = values_.at(name);
    char* end = nullptr;
    float out = std::strtof(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(out))
      throw ShapeError(fmt::format("--{} {}: not a finite number", name, v));
    return out;
  }
  std::string choice(const std::string& name, const std::vector<std::string>& allowed) {
    const std::string& v = values_.at(name);
    for (const auto& a : allowed)
      if (a == v) return v;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw ShapeError(fmt::format("--{} {}: must be one of {}", name, v, list));
  }
  // The "mutation" option as the enum whose value i names info.mutations[i - 1] (0: "none").
  template <class Mutation>
  Mutation mutation() {
    std::vector<std::string> allowed{"none"};
    allowed.insert(allowed.end(), info_.mutations.begin(), info_.mutations.end());
    const std::string chosen = choice("mutation", allowed);
    for (std::size_t i = 1; i < allowed.size(); ++i)
      if (chosen == allowed[i]) return static_cast<Mutation>(i);
    return Mutation{};
  }
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  const ProtocolInfo& info_;
  std::map<std::string, std::string> values_;
};

// 16-byte aligned float array (bulk copies need 16-byte aligned global addresses).
class FloatBuffer {
 public:
  explicit FloatBuffer(std::size_t n) : storage_(n + 4) {
    auto addr = reinterpret_cast<std::uintptr_t>(storage_.data());
    offset_ = ((16 - addr % 16) % 16) / sizeof(float);
  }
  float* data() { return storage_.data() + offset_; }
  const float* data() const { return storage_.data() + offset_; }

 private:
  std::vector<float> storage_;
  std::size_t offset_ = 0;
};

}  // namespace mbcheck::sim
