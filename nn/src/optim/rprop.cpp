// Rprop: PyTorch 1.13's _single_tensor_rprop as wick tensor ops (no fused kernel).
#include "wick/nn/optim/rprop.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

OptionValues RpropOptions::values() const {
  return {{"lr", lr_},
          {"etaminus", etaminus_},
          {"etaplus", etaplus_},
          {"step_size_min", step_size_min_},
          {"step_size_max", step_size_max_},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr >= 0,
// 0 < etaminus < 1 < etaplus) plus finite values and ordered, non-negative step sizes, which
// PyTorch does not check (a negative bound would flip the update's direction).
void check_options(const RpropOptions& o) {
  WICK_CHECK(std::isfinite(o.lr()) && o.lr() >= 0, "Rprop: invalid learning rate {} (must be finite and >= 0)", o.lr());
  WICK_CHECK(o.etaminus() > 0 && o.etaminus() < 1, "Rprop: invalid etaminus {} (must be in (0, 1))", o.etaminus());
  WICK_CHECK(std::isfinite(o.etaplus()) && o.etaplus() > 1, "Rprop: invalid etaplus {} (must be finite and > 1)",
             o.etaplus());
  WICK_CHECK(std::isfinite(o.step_size_min()) && o.step_size_min() >= 0,
             "Rprop: invalid step_size_min {} (must be finite and >= 0)", o.step_size_min());
  WICK_CHECK(std::isfinite(o.step_size_max()) && o.step_size_max() >= o.step_size_min(),
             "Rprop: invalid step_size_max {} (must be finite and >= step_size_min {})", o.step_size_max(),
             o.step_size_min());
}

}  // namespace

void RpropOptions::set_values(const OptionValues& v) {
  auto m =
      detail::read_options(v, {"lr", "etaminus", "etaplus", "step_size_min", "step_size_max", "maximize"}, "Rprop");
  RpropOptions o = *this;
  o.lr_ = m["lr"];
  o.etaminus_ = m["etaminus"];
  o.etaplus_ = m["etaplus"];
  o.step_size_min_ = m["step_size_min"];
  o.step_size_max_ = m["step_size_max"];
  o.maximize_ = m["maximize"] != 0;
  check_options(o);
  *this = o;
}

Rprop::Rprop(std::vector<Tensor> params, const RpropOptions& options)
    : Rprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Rprop::Rprop(std::vector<ParamGroup> groups, const RpropOptions& defaults)
    : Optimizer(std::move(groups), std::make_unique<RpropOptions>(defaults)) {
  check_options(defaults);  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_options(static_cast<const RpropOptions&>(g.options()));
}

void Rprop::check_group_options(const OptimizerOptions& o) const { check_options(static_cast<const RpropOptions&>(o)); }

void Rprop::step() {
  profiler::RecordScope trace_event("optimizer", "Rprop.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_state_fits("Rprop");
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const RpropOptions&>(group.options()));
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const RpropOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;  // the same TensorImpl: the in-place ops below write the parameter's storage
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      ParamState& st = state_for(p);
      if (!st.buffers.contains("prev")) {
        st.step = 0;
        st.buffers.insert("prev", wick::zeros_like(p));
        st.buffers.insert("step_size", wick::full_like(p, o.lr()));
      }
      ++st.step;  // counted as PyTorch does; the update does not read it
      Tensor g = o.maximize() ? grad.neg() : grad;
      Tensor& prev = st.buffers.at("prev");
      Tensor& step_size = st.buffers.at("step_size");
      // sign = (g * prev).sign(), then sign[sign > 0] = etaplus, sign[sign < 0] = etaminus,
      // sign[sign == 0] = 1, in PyTorch's order (a NaN stays NaN).
      Tensor factor = g.mul(prev).sign();
      factor.masked_fill_(factor.gt(0), o.etaplus());
      factor.masked_fill_(factor.lt(0), o.etaminus());
      factor.masked_fill_(factor.eq(0), 1);
      step_size.mul_(factor);
      step_size.clamp_(o.step_size_min(), o.step_size_max());
      // Where the gradient changed sign, no step and no memory of it: grad[sign == etaminus] = 0.
      g = g.masked_fill(factor.eq(o.etaminus()), 0);
      // p.addcmul_(g.sign(), step_size, value=-1)
      p.add_(g.sign().mul(-1).mul(step_size));
      prev.copy_(g);
    }
  }
}

}  // namespace wick::optim
