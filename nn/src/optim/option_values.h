#pragma once
// Reading OptionValues (optimizer options by name) with every missing or unknown name reported,
// OptionsBase's values() and set_values() (Note [Optimizer scaffolding]), and the range checks
// the optimizers' options share.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "wick/core/error.h"
#include "wick/nn/optim/optimizer_base.h"

namespace wick::optim {
namespace detail {

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

/// Throws ValueError "<what>: invalid <name> <v> (must be finite and >= 0)" unless v is.
inline void check_finite_nonneg(const char* what, const char* name, double v) {
  WICK_CHECK(std::isfinite(v) && v >= 0, "{}: invalid {} {} (must be finite and >= 0)", what, name, v);
}

/// Throws ValueError "<what>: invalid <name> <v> (must be in [0, 1))" unless v is (NaN is not).
inline void check_beta(const char* what, const char* name, double v) {
  WICK_CHECK(v >= 0 && v < 1, "{}: invalid {} {} (must be in [0, 1))", what, name, v);
}

/// The checks Adam, Adamax, NAdam and RAdam share, in their order: lr and eps finite and >= 0,
/// beta1 and beta2 in [0, 1), weight_decay finite and >= 0.
template <class O>
void check_adam_options(const char* what, const O& o) {
  check_finite_nonneg(what, "learning rate", o.lr());
  check_finite_nonneg(what, "eps", o.eps());
  check_beta(what, "beta1", o.beta1());
  check_beta(what, "beta2", o.beta2());
  check_finite_nonneg(what, "weight_decay", o.weight_decay());
}

}  // namespace detail

template <class Derived>
OptionValues OptionsBase<Derived>::values() const {
  OptionValues v;
  for (const auto& f : Derived::table().fields)
    v.emplace_back(f.name, f.number ? self().*f.number : (self().*f.flag ? 1.0 : 0.0));
  return v;
}

// Validates before changing anything: a loaded checkpoint with lr = -1 fails at load, not at the
// first step() (Note [Checkpoint files]).
template <class Derived>
void OptionsBase<Derived>::set_values(const OptionValues& v) {
  const auto table = Derived::table();
  std::vector<std::string> names;
  for (const auto& f : table.fields) names.emplace_back(f.name);
  auto m = detail::read_options(v, names, table.what);
  Derived o = self();
  for (const auto& f : table.fields) {
    if (f.number)
      o.*f.number = m[f.name];
    else
      o.*f.flag = m[f.name] != 0;
  }
  table.check(o);
  static_cast<Derived&>(*this) = o;
}

}  // namespace wick::optim
