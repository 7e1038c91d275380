#pragma once
// What OneCycleLR and CyclicLR share: options given as one value for every group or one per group,
// and the momentum they cycle, a group option named "momentum" (SGD, RMSprop) or "beta1" (Adam
// and AdamW: PyTorch's betas[0]).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "wick/core/error.h"
#include "wick/nn/optim/optimizer.h"

namespace wick::optim::detail {

/// `values` for `groups` groups: one value (for every group) or one per group, each finite, >= 0
/// and, when `below_one`, < 1. wick::ValueError naming the scheduler and the option otherwise.
inline std::vector<double> per_group(const std::vector<double>& values, size_t groups, const char* scheduler,
                                     const char* option, bool below_one = false) {
  WICK_CHECK(values.size() == 1 || values.size() == groups,
             "{}: {} needs one value for every group or one per group ({}), got {} values", scheduler, option, groups,
             values.size());
  for (size_t i = 0; i < values.size(); ++i)
    WICK_CHECK(std::isfinite(values[i]) && values[i] >= 0 && (!below_one || values[i] < 1),
               "{}: {} {} must be finite and {}, got {}", scheduler, option, i,
               below_one ? "in [0, 1) (it becomes Adam's beta1)" : ">= 0", values[i]);
  return values.size() == groups ? values : std::vector<double>(groups, values[0]);
}

/// Whether the optimizer's options have an option named `name` (its defaults' values()).
inline bool has_option(const Optimizer& o, const std::string& name) {
  for (const auto& [k, v] : o.defaults().values())
    if (k == name) return true;
  return false;
}

/// Sets option `option` of every group to values[i]. Each group's new options are checked first,
/// by their own set_values on a copy, so that a refused value changes nothing; the error (of the
/// options' class) then starts with `who`, the group and the value.
inline void set_group_option(Optimizer& o, const std::string& option, const std::vector<double>& values,
                             const std::string& who) {
  auto& groups = o.param_groups();
  std::vector<OptionValues> next;
  for (size_t i = 0; i < groups.size(); ++i) {
    OptionValues v = groups[i].options().values();
    for (auto& [k, x] : v)
      if (k == option) x = values[i];
    try {
      groups[i].options().clone()->set_values(v);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("{}: setting group {}'s {} to {}: ", who, i, option, values[i]));
    }
    next.push_back(std::move(v));
  }
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_values(next[i]);
}

}  // namespace wick::optim::detail
