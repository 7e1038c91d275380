// Adamax: PyTorch 1.13's _single_tensor_adamax as wick tensor ops (no fused kernel).
#include "wick/nn/optim/adamax.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

OptionValues AdamaxOptions::values() const {
  return {{"lr", lr_},
          {"beta1", beta1_},
          {"beta2", beta2_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay >= 0,
// betas in [0, 1)) and finite values (an inf eps freezes every parameter). eps = 0 is allowed,
// as PyTorch.
void check_options(const AdamaxOptions& o) {
  auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  WICK_CHECK(finite_nonneg(o.lr()), "Adamax: invalid learning rate {} (must be finite and >= 0)", o.lr());
  WICK_CHECK(finite_nonneg(o.eps()), "Adamax: invalid eps {} (must be finite and >= 0)", o.eps());
  WICK_CHECK(o.beta1() >= 0 && o.beta1() < 1, "Adamax: invalid beta1 {} (must be in [0, 1))", o.beta1());
  WICK_CHECK(o.beta2() >= 0 && o.beta2() < 1, "Adamax: invalid beta2 {} (must be in [0, 1))", o.beta2());
  WICK_CHECK(finite_nonneg(o.weight_decay()), "Adamax: invalid weight_decay {} (must be finite and >= 0)",
             o.weight_decay());
}

}  // namespace

void AdamaxOptions::set_values(const OptionValues& v) {
  auto m = detail::read_options(v, {"lr", "beta1", "beta2", "eps", "weight_decay", "maximize"}, "Adamax");
  AdamaxOptions o = *this;
  o.lr_ = m["lr"];
  o.beta1_ = m["beta1"];
  o.beta2_ = m["beta2"];
  o.eps_ = m["eps"];
  o.weight_decay_ = m["weight_decay"];
  o.maximize_ = m["maximize"] != 0;
  check_options(o);
  *this = o;
}

Adamax::Adamax(std::vector<Tensor> params, const AdamaxOptions& options)
    : Adamax(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adamax::Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& defaults)
    : Optimizer(std::move(groups), std::make_unique<AdamaxOptions>(defaults)) {
  check_options(defaults);  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_options(static_cast<const AdamaxOptions&>(g.options()));
}

void Adamax::check_group_options(const OptimizerOptions& o) const {
  check_options(static_cast<const AdamaxOptions&>(o));
}

void Adamax::step() {
  profiler::RecordScope trace_event("optimizer", "Adamax.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_state_fits("Adamax");
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const AdamaxOptions&>(group.options()));
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdamaxOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;  // the same TensorImpl: the in-place ops below write the parameter's storage
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      ParamState& st = state_for(p);
      if (!st.buffers.contains("exp_avg")) {
        st.step = 0;
        st.buffers.insert("exp_avg", wick::zeros_like(p));
        st.buffers.insert("exp_inf", wick::zeros_like(p));
      }
      const int64_t t = ++st.step;
      Tensor g = o.maximize() ? grad.neg() : grad;
      if (o.weight_decay() != 0) g = g.add(p, o.weight_decay());
      Tensor& exp_avg = st.buffers.at("exp_avg");
      Tensor& exp_inf = st.buffers.at("exp_inf");
      exp_avg.mul_(o.beta1());
      exp_avg.add_(g, 1 - o.beta1());
      // amax(cat([exp_inf * beta2, |g| + eps])) over the new dim: the elementwise maximum, NaN
      // propagating as amax does.
      exp_inf.mul_(o.beta2());
      exp_inf.copy_(wick::maximum(exp_inf, g.abs().add(o.eps())));
      const double clr = o.lr() / (1 - std::pow(o.beta1(), static_cast<double>(t)));
      // p.addcdiv_(exp_avg, exp_inf, value=-clr): (value * exp_avg) / exp_inf, as PyTorch's addcdiv.
      p.add_(exp_avg.mul(-clr).div(exp_inf));
    }
  }
}

}  // namespace wick::optim
