// NAdam: PyTorch 1.13's _single_tensor_nadam as wick tensor ops (no fused kernel).
#include "wick/nn/optim/nadam.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

OptionValues NAdamOptions::values() const {
  return {{"lr", lr_},
          {"beta1", beta1_},
          {"beta2", beta2_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"momentum_decay", momentum_decay_}};
}

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay,
// momentum_decay >= 0, betas in [0, 1)) and finite values. eps = 0 is allowed, as PyTorch.
void check_options(const NAdamOptions& o) {
  auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  WICK_CHECK(finite_nonneg(o.lr()), "NAdam: invalid learning rate {} (must be finite and >= 0)", o.lr());
  WICK_CHECK(finite_nonneg(o.eps()), "NAdam: invalid eps {} (must be finite and >= 0)", o.eps());
  WICK_CHECK(o.beta1() >= 0 && o.beta1() < 1, "NAdam: invalid beta1 {} (must be in [0, 1))", o.beta1());
  WICK_CHECK(o.beta2() >= 0 && o.beta2() < 1, "NAdam: invalid beta2 {} (must be in [0, 1))", o.beta2());
  WICK_CHECK(finite_nonneg(o.weight_decay()), "NAdam: invalid weight_decay {} (must be finite and >= 0)",
             o.weight_decay());
  WICK_CHECK(finite_nonneg(o.momentum_decay()), "NAdam: invalid momentum_decay {} (must be finite and >= 0)",
             o.momentum_decay());
}

// PyTorch's `mu_product * x` on its 0-dim float32 tensor: both rounded to float32, and the product.
double f32_mul(double a, double b) { return static_cast<double>(static_cast<float>(a) * static_cast<float>(b)); }

}  // namespace

void NAdamOptions::set_values(const OptionValues& v) {
  auto m = detail::read_options(v, {"lr", "beta1", "beta2", "eps", "weight_decay", "momentum_decay"}, "NAdam");
  NAdamOptions o = *this;
  o.lr_ = m["lr"];
  o.beta1_ = m["beta1"];
  o.beta2_ = m["beta2"];
  o.eps_ = m["eps"];
  o.weight_decay_ = m["weight_decay"];
  o.momentum_decay_ = m["momentum_decay"];
  check_options(o);
  *this = o;
}

NAdam::NAdam(std::vector<Tensor> params, const NAdamOptions& options)
    : NAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

NAdam::NAdam(std::vector<ParamGroup> groups, const NAdamOptions& defaults)
    : Optimizer(std::move(groups), std::make_unique<NAdamOptions>(defaults)) {
  check_options(defaults);  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_options(static_cast<const NAdamOptions&>(g.options()));
}

void NAdam::check_group_options(const OptimizerOptions& o) const { check_options(static_cast<const NAdamOptions&>(o)); }

void NAdam::step() {
  profiler::RecordScope trace_event("optimizer", "NAdam.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_state_fits("NAdam");
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const NAdamOptions&>(group.options()));
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const NAdamOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;  // the same TensorImpl: the in-place ops below write the parameter's storage
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      ParamState& st = state_for(p);
      if (!st.buffers.contains("exp_avg")) {
        st.step = 0;
        st.buffers.insert("exp_avg", wick::zeros_like(p));
        st.buffers.insert("exp_avg_sq", wick::zeros_like(p));
        st.scalars.insert_or_assign("mu_product", 1.0);
      }
      const auto t = static_cast<double>(++st.step);
      const double bias_correction2 = 1 - std::pow(o.beta2(), t);
      Tensor g = grad;
      if (o.weight_decay() != 0) g = g.add(p, o.weight_decay());
      const double mu = o.beta1() * (1. - 0.5 * std::pow(0.96, t * o.momentum_decay()));
      const double mu_next = o.beta1() * (1. - 0.5 * std::pow(0.96, (t + 1) * o.momentum_decay()));
      double& mu_product = st.scalars.at("mu_product");
      mu_product = f32_mul(mu_product, mu);
      const double mu_product_next = f32_mul(f32_mul(mu_product, mu), mu_next);
      Tensor& exp_avg = st.buffers.at("exp_avg");
      Tensor& exp_avg_sq = st.buffers.at("exp_avg_sq");
      exp_avg.mul_(o.beta1());
      exp_avg.add_(g, 1 - o.beta1());
      // addcmul_(g, g, value=1 - beta2): (value * g) * g, as PyTorch's addcmul.
      exp_avg_sq.mul_(o.beta2());
      exp_avg_sq.add_(g.mul(1 - o.beta2()).mul(g));
      Tensor denom = exp_avg_sq.div(bias_correction2).sqrt();
      denom.add_(o.eps());
      // Two addcdiv_ calls, each (value * t1) / denom, in PyTorch's order.
      p.add_(g.mul(-o.lr() * (1. - mu) / (1. - mu_product)).div(denom));
      p.add_(exp_avg.mul(-o.lr() * mu_next / (1. - mu_product_next)).div(denom));
    }
  }
}

}  // namespace wick::optim
