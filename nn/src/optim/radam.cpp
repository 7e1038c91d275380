// RAdam: PyTorch 1.13's _single_tensor_radam as wick tensor ops (no fused kernel).
#include "wick/nn/optim/radam.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

OptionValues RAdamOptions::values() const {
  return {{"lr", lr_}, {"beta1", beta1_}, {"beta2", beta2_}, {"eps", eps_}, {"weight_decay", weight_decay_}};
}

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay >= 0,
// betas in [0, 1)) and finite values. eps = 0 is allowed, as PyTorch.
void check_options(const RAdamOptions& o) {
  auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  WICK_CHECK(finite_nonneg(o.lr()), "RAdam: invalid learning rate {} (must be finite and >= 0)", o.lr());
  WICK_CHECK(finite_nonneg(o.eps()), "RAdam: invalid eps {} (must be finite and >= 0)", o.eps());
  WICK_CHECK(o.beta1() >= 0 && o.beta1() < 1, "RAdam: invalid beta1 {} (must be in [0, 1))", o.beta1());
  WICK_CHECK(o.beta2() >= 0 && o.beta2() < 1, "RAdam: invalid beta2 {} (must be in [0, 1))", o.beta2());
  WICK_CHECK(finite_nonneg(o.weight_decay()), "RAdam: invalid weight_decay {} (must be finite and >= 0)",
             o.weight_decay());
}

}  // namespace

void RAdamOptions::set_values(const OptionValues& v) {
  auto m = detail::read_options(v, {"lr", "beta1", "beta2", "eps", "weight_decay"}, "RAdam");
  RAdamOptions o = *this;
  o.lr_ = m["lr"];
  o.beta1_ = m["beta1"];
  o.beta2_ = m["beta2"];
  o.eps_ = m["eps"];
  o.weight_decay_ = m["weight_decay"];
  check_options(o);
  *this = o;
}

RAdam::RAdam(std::vector<Tensor> params, const RAdamOptions& options)
    : RAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, const RAdamOptions& defaults)
    : Optimizer(std::move(groups), std::make_unique<RAdamOptions>(defaults)) {
  check_options(defaults);  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_options(static_cast<const RAdamOptions&>(g.options()));
}

void RAdam::check_group_options(const OptimizerOptions& o) const { check_options(static_cast<const RAdamOptions&>(o)); }

void RAdam::step() {
  profiler::RecordScope trace_event("optimizer", "RAdam.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_state_fits("RAdam");
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const RAdamOptions&>(group.options()));
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const RAdamOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;  // the same TensorImpl: the in-place ops below write the parameter's storage
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      ParamState& st = state_for(p);
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
    }
  }
}

}  // namespace wick::optim
