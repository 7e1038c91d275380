// Rprop: PyTorch 1.13's _single_tensor_rprop as wick tensor ops (no fused kernel).
#include "wick/nn/optim/rprop.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr >= 0,
// 0 < etaminus < 1 < etaplus) plus finite values and ordered, non-negative step sizes, which
// PyTorch does not check (a negative bound would flip the update's direction).
void check_options(const RpropOptions& o, const char* op) {
  detail::check_finite_nonneg(op, "learning rate", o.lr());
  WICK_CHECK(o.etaminus() > 0 && o.etaminus() < 1, "{}: invalid etaminus {} (must be in (0, 1))", op, o.etaminus());
  WICK_CHECK(std::isfinite(o.etaplus()) && o.etaplus() > 1, "{}: invalid etaplus {} (must be finite and > 1)", op,
             o.etaplus());
  detail::check_finite_nonneg(op, "step_size_min", o.step_size_min());
  WICK_CHECK(std::isfinite(o.step_size_max()) && o.step_size_max() >= o.step_size_min(),
             "{}: invalid step_size_max {} (must be finite and >= step_size_min {})", op, o.step_size_max(),
             o.step_size_min());
}

}  // namespace

detail::OptionTable<RpropOptions> RpropOptions::table() {
  return {"Rprop",
          {{"lr", &RpropOptions::lr_},
           {"etaminus", &RpropOptions::etaminus_},
           {"etaplus", &RpropOptions::etaplus_},
           {"step_size_min", &RpropOptions::step_size_min_},
           {"step_size_max", &RpropOptions::step_size_max_},
           {"maximize", &RpropOptions::maximize_}},
          [](const RpropOptions& o) { check_options(o, "Rprop"); }};
}
template struct OptionsBase<RpropOptions>;

Rprop::Rprop(std::vector<Tensor> params, const RpropOptions& options)
    : OptimizerBase(std::move(params), options, "Rprop", check_options) {}
Rprop::Rprop(std::vector<ParamGroup> groups, const RpropOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "Rprop", check_options) {}

void Rprop::step() {
  profiler::RecordScope trace_event("optimizer", "Rprop.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const RpropOptions& o, ParamState& st) {
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
  });
}

}  // namespace wick::optim
