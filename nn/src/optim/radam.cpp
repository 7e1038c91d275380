// RAdam: PyTorch 1.13's _single_tensor_radam as wick tensor ops (no fused kernel).
#include "wick/nn/optim/radam.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay >= 0,
// betas in [0, 1)) and finite values. eps = 0 is allowed, as PyTorch.
void check_options(const RAdamOptions& o, const char* op) { detail::check_adam_options(op, o); }

}  // namespace

detail::OptionTable<RAdamOptions> RAdamOptions::table() {
  return {"RAdam",
          {{"lr", &RAdamOptions::lr_},
           {"beta1", &RAdamOptions::beta1_},
           {"beta2", &RAdamOptions::beta2_},
           {"eps", &RAdamOptions::eps_},
           {"weight_decay", &RAdamOptions::weight_decay_}},
          [](const RAdamOptions& o) { check_options(o, "RAdam"); }};
}
template struct OptionsBase<RAdamOptions>;

RAdam::RAdam(std::vector<Tensor> params, const RAdamOptions& options)
    : OptimizerBase(std::move(params), options, "RAdam", check_options) {}
RAdam::RAdam(std::vector<ParamGroup> groups, const RAdamOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "RAdam", check_options) {}

void RAdam::step() {
  profiler::RecordScope trace_event("optimizer", "RAdam.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const RAdamOptions& o, ParamState& st) {
    if (!st.buffers.contains("exp_avg")) {
      st.step = 0;
      st.buffers.insert("exp_avg", wick::zeros_like(p));
      st.buffers.insert("exp_avg_sq", wick::zeros_like(p));
    }
    const auto t = static_cast<double>(++st.step);
    const double bias_correction1 = 1 - std::pow(o.beta1(), t);
    const double bias_correction2 = 1 - std::pow(o.beta2(), t);
    Tensor g = grad;
    if (o.weight_decay() != 0) g = g.add(p, o.weight_decay());
    Tensor& exp_avg = st.buffers.at("exp_avg");
    Tensor& exp_avg_sq = st.buffers.at("exp_avg_sq");
    exp_avg.mul_(o.beta1());
    exp_avg.add_(g, 1 - o.beta1());
    // addcmul_(g, g, value=1 - beta2): (value * g) * g, as PyTorch's addcmul.
    exp_avg_sq.mul_(o.beta2());
    exp_avg_sq.add_(g.mul(1 - o.beta2()).mul(g));
    const Tensor bias_corrected_exp_avg = exp_avg.div(bias_correction1);
    // The length of the approximated simple moving average, and its limit.
    const double rho_inf = 2 / (1 - o.beta2()) - 1;
    const double rho_t = rho_inf - 2 * t * std::pow(o.beta2(), t) / bias_correction2;
    if (rho_t > 5.) {
      const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
      // sqrt(bc2) / (sqrt(v) + eps): PyTorch's scalar / tensor is reciprocal() * scalar.
      Tensor denom = exp_avg_sq.sqrt();
      denom.add_(o.eps());
      const Tensor adaptive_lr = denom.reciprocal().mul(std::sqrt(bias_correction2));
      p.sub_(bias_corrected_exp_avg.mul(o.lr()).mul(adaptive_lr).mul(rect));
    } else {
      p.sub_(bias_corrected_exp_avg.mul(o.lr()));
    }
  });
}

}  // namespace wick::optim
