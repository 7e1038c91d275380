#pragma once
// The optimizer configurations and their float64 reference (PyTorch 1.13's documented update
// formulas, element by element in std::vector<double>) of the optimizer tests
// (tests/nn/optim*_test.cpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "support/optim_reference_common.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/optim/optim.h"

namespace wick::test::optim_reference {

using namespace wick::optim;

struct Config {
  std::string kind;  // "SGD", "Adam", "AdamW"
  double lr = 0.1, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, amsgrad = false, maximize = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  std::string label() const {
    return kind + " lr=" + std::to_string(lr) + " mom=" + std::to_string(momentum) +
           " damp=" + std::to_string(dampening) + " wd=" + std::to_string(weight_decay) +
           (nesterov ? " nesterov" : "") + (amsgrad ? " amsgrad" : "") + (maximize ? " maximize" : "") +
           " betas=" + std::to_string(beta1) + "," + std::to_string(beta2);
  }
};

// The float64 reference: one parameter's values and state, updated with the formulas of
// PyTorch 1.13's documentation, written out element by element.
struct RefParam {
  std::vector<double> p, c, d;  // loss = sum(0.5 * c * p^2 + d * p)  =>  grad = c * p + d
  std::vector<double> buf, m, v, vmax;
  int64_t t = 0;
  bool has_buf = false;

  void step(const Config& cf) {
    const size_t n = p.size();
    if (m.empty()) m.assign(n, 0), v.assign(n, 0), vmax.assign(n, 0), buf.assign(n, 0);
    ++t;
    for (size_t i = 0; i < n; ++i) {
      double g = c[i] * p[i] + d[i];
      if (cf.maximize) g = -g;
      if (cf.kind == "SGD") {
        if (cf.weight_decay != 0) g += cf.weight_decay * p[i];
        if (cf.momentum != 0) {
          buf[i] = has_buf ? cf.momentum * buf[i] + (1 - cf.dampening) * g : g;
          g = cf.nesterov ? g + cf.momentum * buf[i] : buf[i];
        }
        p[i] -= cf.lr * g;
      } else {
        if (cf.kind == "AdamW")
          p[i] *= 1 - cf.lr * cf.weight_decay;
        else
          g += cf.weight_decay * p[i];
        m[i] = cf.beta1 * m[i] + (1 - cf.beta1) * g;
        v[i] = cf.beta2 * v[i] + (1 - cf.beta2) * g * g;
        const double mhat = m[i] / (1 - std::pow(cf.beta1, double(t)));
        vmax[i] = std::max(vmax[i], v[i]);
        const double vv = cf.amsgrad ? vmax[i] : v[i];
        // PyTorch's form: lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)
        const double denom = std::sqrt(vv) / std::sqrt(1 - std::pow(cf.beta2, double(t))) + cf.eps;
        p[i] -= cf.lr * mhat / denom;
      }
    }
    has_buf = true;
  }
};

inline std::unique_ptr<Optimizer> make(const Config& cf, std::vector<ParamGroup> groups) {
  if (cf.kind == "SGD")
    return std::make_unique<SGD>(std::move(groups), SGDOptions(cf.lr)
                                                        .momentum(cf.momentum)
                                                        .dampening(cf.dampening)
                                                        .weight_decay(cf.weight_decay)
                                                        .nesterov(cf.nesterov)
                                                        .maximize(cf.maximize));
  AdamWOptions o(cf.lr);
  o.beta1(cf.beta1).beta2(cf.beta2).eps(cf.eps).weight_decay(cf.weight_decay).amsgrad(cf.amsgrad).maximize(cf.maximize);
  if (cf.kind == "Adam") return std::make_unique<Adam>(std::move(groups), static_cast<const AdamOptions&>(o));
  return std::make_unique<AdamW>(std::move(groups), o);
}

inline std::unique_ptr<OptimizerOptions> options_of(const Config& cf) {
  if (cf.kind == "SGD") {
    auto o = std::make_unique<SGDOptions>(cf.lr);
    o->momentum(cf.momentum)
        .dampening(cf.dampening)
        .weight_decay(cf.weight_decay)
        .nesterov(cf.nesterov)
        .maximize(cf.maximize);
    return o;
  }
  auto o = std::make_unique<AdamOptions>(cf.lr);
  o->beta1(cf.beta1)
      .beta2(cf.beta2)
      .eps(cf.eps)
      .weight_decay(cf.weight_decay)
      .amsgrad(cf.amsgrad)
      .maximize(cf.maximize);
  return o;
}

using optim_common::check_close;
using optim_common::compute_grads;
using optim_common::to_tensor;
inline std::vector<RefParam> make_refs() { return optim_common::make_refs<RefParam>(); }

// Runs `steps` steps with each param in its own group (configs[i]) and compares with the
// reference after each step.
inline void run_against_reference(const std::vector<Config>& configs, DType dt, bool fused, int steps, double rtol) {
  auto refs = make_refs();
  std::vector<Tensor> ps = {to_tensor(refs[0].p, {2, 3}, dt), to_tensor(refs[1].p, {4}, dt)};
  std::vector<ParamGroup> groups;
  if (configs.size() == 1) {
    groups.emplace_back(ps);
  } else {
    groups.emplace_back(std::vector<Tensor>{ps[0]}, options_of(configs[0]));
    groups.emplace_back(std::vector<Tensor>{ps[1]}, options_of(configs[1]));
  }
  auto opt = make(configs[0], std::move(groups));
  opt->set_fused(fused);
  for (int s = 0; s < steps; ++s) {
    opt->zero_grad();
    compute_grads(ps, refs);
    opt->step();
    for (size_t i = 0; i < ps.size(); ++i) {
      const Config& cf = configs.size() == 1 ? configs[0] : configs[i];
      refs[i].step(cf);
      check_close(ps[i], refs[i].p, rtol,
                  cf.label() + (fused ? " fused" : " generic") + " step " + std::to_string(s + 1) + " param " +
                      std::to_string(i));
    }
  }
}

inline std::vector<Config> sgd_configs() {
  std::vector<Config> cs;
  Config c{"SGD"};
  cs.push_back(c);
  c.momentum = 0.9;
  cs.push_back(c);
  c.dampening = 0.3;
  cs.push_back(c);
  c.dampening = 0;
  c.nesterov = true;
  cs.push_back(c);
  c.weight_decay = 0.05;
  cs.push_back(c);
  c.nesterov = false;
  c.maximize = true;
  c.lr = 0.01;
  cs.push_back(c);
  Config w{"SGD"};
  w.weight_decay = 0.1;
  cs.push_back(w);
  return cs;
}

inline std::vector<Config> adam_configs() {
  std::vector<Config> cs;
  for (const char* kind : {"Adam", "AdamW"}) {
    Config c{kind};
    c.lr = 0.01;
    cs.push_back(c);
    c.weight_decay = 0.1;
    cs.push_back(c);
    c.amsgrad = true;
    cs.push_back(c);
    c.beta1 = 0.5;
    c.beta2 = 0.9;
    c.eps = 1e-3;
    cs.push_back(c);
    c.maximize = true;
    c.amsgrad = false;
    cs.push_back(c);
  }
  return cs;
}

}  // namespace wick::test::optim_reference
