// NAdam: PyTorch 1.13's _single_tensor_nadam as wick tensor ops (no fused kernel).
#include "wick/nn/optim/nadam.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay,
// momentum_decay >= 0, betas in [0, 1)) and finite values. eps = 0 is allowed, as PyTorch.
void check_options(const NAdamOptions& o, const char* op) {
  detail::check_adam_options(op, o);
  detail::check_finite_nonneg(op, "momentum_decay", o.momentum_decay());
}

// PyTorch's `mu_product * x` on its 0-dim float32 tensor: both rounded to float32, and the product.
double f32_mul(double a, double b) { return static_cast<double>(static_cast<float>(a) * static_cast<float>(b)); }

}  // namespace

detail::OptionTable<NAdamOptions> NAdamOptions::table() {
  return {"NAdam",
          {{"lr", &NAdamOptions::lr_},
           {"beta1", &NAdamOptions::beta1_},
           {"beta2", &NAdamOptions::beta2_},
           {"eps", &NAdamOptions::eps_},
           {"weight_decay", &NAdamOptions::weight_decay_},
           {"momentum_decay", &NAdamOptions::momentum_decay_}},
          [](const NAdamOptions& o) { check_options(o, "NAdam"); }};
}
template struct OptionsBase<NAdamOptions>;

NAdam::NAdam(std::vector<Tensor> params, const NAdamOptions& options)
    : OptimizerBase(std::move(params), options, "NAdam", check_options) {}
NAdam::NAdam(std::vector<ParamGroup> groups, const NAdamOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "NAdam", check_options) {}

void NAdam::step() {
  profiler::RecordScope trace_event("optimizer", "NAdam.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const NAdamOptions& o, ParamState& st) {
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
  });
}

}  // namespace wick::optim
