#pragma once
// The two-group optimizers of tests/data/lr_scheduler_cycles.py and a group's lr and momentum row,
// for lr_scheduler_cycles_test.cpp and lr_scheduler_cycles_refusals_test.cpp.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "lr_scheduler_runs.h"
#include "wick/autograd/functions.h"
#include "wick/nn/optim/optim.h"

namespace wick::optim::testing::two_groups {

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The optimizers of lr_scheduler_cycles.py: two groups at lr 0.1 and 0.03 (the second with options
// of its own, which wick's groups give in full).
enum class Opt { sgd, sgd_momentum, adam };

inline std::unique_ptr<Optimizer> make_optimizer(Opt kind, const Tensor& p, const Tensor& q) {
  std::vector<ParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{p});
  if (kind == Opt::adam) {
    groups.emplace_back(std::vector<Tensor>{q}, std::make_unique<AdamOptions>(0.03));
    return std::make_unique<Adam>(std::move(groups), AdamOptions(0.1));
  }
  const double momentum = kind == Opt::sgd_momentum ? 0.9 : 0.0;
  groups.emplace_back(std::vector<Tensor>{q}, std::make_unique<SGDOptions>(SGDOptions(0.03).momentum(momentum)));
  return std::make_unique<SGD>(std::move(groups), SGDOptions(0.1).momentum(momentum));
}

// A group's momentum as the tables hold it: Adam's beta1, SGD's momentum.
inline double momentum_of(const OptimizerOptions& o) {
  double momentum = kNaN;
  for (const auto& [k, v] : o.values()) {
    if (k == "beta1") return v;
    if (k == "momentum") momentum = v;
  }
  return momentum;
}

inline std::vector<double> row(const Optimizer& o, bool with_momentum) {
  std::vector<double> r = group_lrs(o);
  if (with_momentum)
    for (const auto& g : o.param_groups()) r.push_back(momentum_of(g.options()));
  return r;
}

}  // namespace wick::optim::testing::two_groups
