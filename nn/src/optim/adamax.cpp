// Adamax: PyTorch 1.13's _single_tensor_adamax as wick tensor ops (no fused kernel).
#include "wick/nn/optim/adamax.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay >= 0,
// betas in [0, 1)) and finite values (an inf eps freezes every parameter). eps = 0 is allowed,
// as PyTorch.
void check_options(const AdamaxOptions& o, const char* op) { detail::check_adam_options(op, o); }

}  // namespace

detail::OptionTable<AdamaxOptions> AdamaxOptions::table() {
  return {"Adamax",
          {{"lr", &AdamaxOptions::lr_},
           {"beta1", &AdamaxOptions::beta1_},
           {"beta2", &AdamaxOptions::beta2_},
           {"eps", &AdamaxOptions::eps_},
           {"weight_decay", &AdamaxOptions::weight_decay_},
           {"maximize", &AdamaxOptions::maximize_}},
          [](const AdamaxOptions& o) { check_options(o, "Adamax"); }};
}
template struct OptionsBase<AdamaxOptions>;

Adamax::Adamax(std::vector<Tensor> params, const AdamaxOptions& options)
    : OptimizerBase(std::move(params), options, "Adamax", check_options) {}
Adamax::Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "Adamax", check_options) {}

void Adamax::step() {
  profiler::RecordScope trace_event("optimizer", "Adamax.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const AdamaxOptions& o, ParamState& st) {
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
  });
}

}  // namespace wick::optim
