#pragma once
// Reading OptionValues (optimizer options by name) with every missing or unknown name reported.
#include <fmt/format.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "wick/core/error.h"
#include "wick/nn/optim/optimizer.h"

namespace wick::optim::detail {

/// The values by name; throws wick::IndexError listing names that are missing or not in `names`.
inline std::unordered_map<std::string, double> read_options(const OptionValues& v,
                                                            const std::vector<std::string>& names, const char* what) {
  std::unordered_map<std::string, double> m;
  std::vector<std::string> unknown, missing;
  for (const auto& [k, x] : v) {
    if (std::find(names.begin(), names.end(), k) == names.end() && unknown.size() < 8)  // quote a few, briefly
      unknown.push_back(k.size() > 64 ? k.substr(0, 64) + "..." : k);
    m[k] = x;
  }
  for (const auto& n : names)
    if (!m.count(n)) missing.push_back(n);
  WICK_CHECK_INDEX(unknown.empty() && missing.empty(), "{} options: {}{}{}", what,
                   missing.empty() ? std::string() : fmt::format("missing {}", fmt::join(missing, ", ")),
                   !missing.empty() && !unknown.empty() ? "; " : "",
                   unknown.empty() ? std::string() : fmt::format("unknown {}", fmt::join(unknown, ", ")));
  return m;
}

}  // namespace wick::optim::detail
