#pragma once
// RMSprop and Adagrad configurations and their float64 reference (PyTorch 1.13's documented
// update formulas, element by element in plain double arithmetic), for
// tests/nn/optim_rmsprop_adagrad*_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support/optim_reference_common.h"
#include "wick/autograd/functions.h"
#include "wick/nn/optim/optim.h"

namespace wick::test::rmsprop_adagrad_reference {

using namespace wick::optim;

struct Config {
  std::string kind;  // "RMSprop", "Adagrad"
  double lr = 0.01, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
  double lr_decay = 0, initial_accumulator_value = 0;  // Adagrad
  std::string label() const {
    return kind + " lr=" + std::to_string(lr) + " alpha=" + std::to_string(alpha) + " eps=" + std::to_string(eps) +
           " wd=" + std::to_string(weight_decay) + " mom=" + std::to_string(momentum) +
           " lr_decay=" + std::to_string(lr_decay) + " iav=" + std::to_string(initial_accumulator_value) +
           (centered ? " centered" : "") + (maximize ? " maximize" : "");
  }
};

inline Config adagrad_config(double eps = 1e-10) {
  Config c{"Adagrad"};
  c.eps = eps;
  return c;
}

// One parameter with loss = sum(0.5 * c * p^2 + d * p) (so grad = c * p + d) and its state,
// updated by PyTorch 1.13's documented formulas in plain double arithmetic. The state starts at
// zero (Adagrad's sum at initial_accumulator_value) and each part is only touched when the options
// use it, as wick keeps it.
struct RefParam {
  std::vector<double> p, c, d;
  std::vector<double> v, grad_avg, buf;  // square_avg or sum; RMSprop's grad_avg, momentum_buffer
  int64_t t = 0;

  void init(const Config& cf) {
    v.assign(p.size(), cf.kind == "Adagrad" ? cf.initial_accumulator_value : 0.0);
    grad_avg.assign(p.size(), 0.0);
    buf.assign(p.size(), 0.0);
  }

  void step(const Config& cf) {
    ++t;
    const double clr = cf.lr / (1 + static_cast<double>(t - 1) * cf.lr_decay);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = c[i] * p[i] + d[i];
      if (cf.maximize) g = -g;
      g += cf.weight_decay * p[i];
      if (cf.kind == "Adagrad") {
        v[i] += g * g;
        p[i] -= clr * g / (std::sqrt(v[i]) + cf.eps);
        continue;
      }
      v[i] = cf.alpha * v[i] + (1 - cf.alpha) * g * g;
      double avg;
      if (cf.centered) {
        grad_avg[i] = cf.alpha * grad_avg[i] + (1 - cf.alpha) * g;
        avg = std::sqrt(v[i] - grad_avg[i] * grad_avg[i]) + cf.eps;
      } else {
        avg = std::sqrt(v[i]) + cf.eps;
      }
      if (cf.momentum > 0) {
        buf[i] = cf.momentum * buf[i] + g / avg;
        p[i] -= cf.lr * buf[i];
      } else {
        p[i] -= cf.lr * g / avg;
      }
    }
  }
};

inline std::unique_ptr<OptimizerOptions> options_of(const Config& cf) {
  if (cf.kind == "RMSprop") {
    auto o = std::make_unique<RMSpropOptions>(cf.lr);
    o->alpha(cf.alpha)
        .eps(cf.eps)
        .weight_decay(cf.weight_decay)
        .momentum(cf.momentum)
        .centered(cf.centered)
        .maximize(cf.maximize);
    return o;
  }
  auto o = std::make_unique<AdagradOptions>(cf.lr);
  o->lr_decay(cf.lr_decay)
      .weight_decay(cf.weight_decay)
      .initial_accumulator_value(cf.initial_accumulator_value)
      .eps(cf.eps)
      .maximize(cf.maximize);
  return o;
}

inline std::unique_ptr<Optimizer> make(const Config& cf, std::vector<ParamGroup> groups) {
  auto o = options_of(cf);
  if (cf.kind == "RMSprop") return std::make_unique<RMSprop>(std::move(groups), static_cast<const RMSpropOptions&>(*o));
  return std::make_unique<Adagrad>(std::move(groups), static_cast<const AdagradOptions&>(*o));
}

using optim_common::check_close;
using optim_common::compute_grads;
using optim_common::to_tensor;
inline std::vector<RefParam> make_refs() { return optim_common::make_refs<RefParam>(); }

// `steps` steps with both parameters in one group (configs.size() == 1) or each in its own group
// with its own options, compared with the reference after every step. `change` (when set) is
// applied to the configs and to the optimizer's groups before step `change_at` (0-based).
inline void run_against_reference(std::vector<Config> configs, int steps, double rtol,
                                  const std::function<void(Config&, OptimizerOptions&)>& change = nullptr,
                                  int change_at = -1) {
  auto refs = make_refs();
  std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, kFloat64), to_tensor(refs[1].p, {4}, kFloat64)};
  std::vector<ParamGroup> groups;
  if (configs.size() == 1) {
    groups.emplace_back(ps);
  } else {
    groups.emplace_back(std::vector<Tensor>{ps[0]}, options_of(configs[0]));
    groups.emplace_back(std::vector<Tensor>{ps[1]}, options_of(configs[1]));
  }
  auto opt = make(configs[0], std::move(groups));
  for (size_t i = 0; i < refs.size(); ++i) refs[i].init(configs.size() == 1 ? configs[0] : configs[i]);
  for (int s = 0; s < steps; ++s) {
    if (s == change_at) {
      for (size_t gi = 0; gi < opt->param_groups().size(); ++gi) change(configs[gi], opt->param_groups()[gi].options());
    }
    opt->zero_grad();
    compute_grads(ps, refs);
    opt->step();
    for (size_t i = 0; i < ps.size(); ++i) {
      const Config& cf = configs.size() == 1 ? configs[0] : configs[i];
      refs[i].step(cf);
      check_close(ps[i], refs[i].p, rtol,
                  cf.label() + " step " + std::to_string(s + 1) + " param " + std::to_string(i));
    }
  }
}

inline std::vector<Config> rmsprop_configs() {
  std::vector<Config> cs;
  Config c{"RMSprop"};
  cs.push_back(c);  // PyTorch's defaults
  c.momentum = 0.9;
  cs.push_back(c);
  c.weight_decay = 0.05;
  cs.push_back(c);
  Config cen{"RMSprop"};
  cen.centered = true;
  cs.push_back(cen);
  cen.momentum = 0.5;
  cen.maximize = true;
  cen.weight_decay = 0.1;
  cs.push_back(cen);
  Config a{"RMSprop"};
  a.alpha = 0.5;
  a.eps = 1e-3;
  a.lr = 0.05;
  cs.push_back(a);
  return cs;
}

inline std::vector<Config> adagrad_configs() {
  std::vector<Config> cs;
  Config c = adagrad_config();
  cs.push_back(c);  // PyTorch's defaults
  c.lr = 0.1;
  c.lr_decay = 0.2;
  cs.push_back(c);
  c.weight_decay = 0.1;
  cs.push_back(c);
  Config i = adagrad_config(1e-3);
  i.initial_accumulator_value = 0.3;
  i.maximize = true;
  i.lr = 0.05;
  cs.push_back(i);
  return cs;
}

}  // namespace wick::test::rmsprop_adagrad_reference
