// CUTLASS's tools/util CommandLine for host-compiled tests: --name=value flags.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace cutlass {

struct CommandLine {
  std::vector<std::string> keys, values;

  CommandLine(int argc, char const** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) continue;
      const auto eq = a.find('=');
      keys.push_back(a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
      values.push_back(eq == std::string::npos ? "" : a.substr(eq + 1));
    }
  }
  bool check_cmd_line_flag(const char* name) const {
    for (const auto& k : keys)
      if (k == name) return true;
    return false;
  }
  template <class T>
  void get_cmd_line_argument(const char* name, T& out, T const& fallback = T()) const {
    out = fallback;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == name) {
        if constexpr (std::is_same_v<T, bool>) {
          out = values[i].empty() || values[i] == "true" || values[i] == "1";
        } else {
          std::istringstream in(values[i]);
          in >> out;
        }
      }
  }
};

}  // namespace cutlass
