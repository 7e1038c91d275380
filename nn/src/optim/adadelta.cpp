// Adadelta: PyTorch 1.13's _single_tensor_adadelta as wick tensor ops (no fused kernel).
#include "wick/nn/optim/adadelta.h"

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay >= 0;
// 0 <= rho <= 1) and finite values.
void check_options(const AdadeltaOptions& o, const char* op) {
  detail::check_finite_nonneg(op, "learning rate", o.lr());
  WICK_CHECK(o.rho() >= 0 && o.rho() <= 1, "{}: invalid rho {} (must be in [0, 1])", op, o.rho());
  detail::check_finite_nonneg(op, "eps", o.eps());
  detail::check_finite_nonneg(op, "weight_decay", o.weight_decay());
}

}  // namespace

detail::OptionTable<AdadeltaOptions> AdadeltaOptions::table() {
  return {"Adadelta",
          {{"lr", &AdadeltaOptions::lr_},
           {"rho", &AdadeltaOptions::rho_},
           {"eps", &AdadeltaOptions::eps_},
           {"weight_decay", &AdadeltaOptions::weight_decay_},
           {"maximize", &AdadeltaOptions::maximize_}},
          [](const AdadeltaOptions& o) { check_options(o, "Adadelta"); }};
}
template struct OptionsBase<AdadeltaOptions>;

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options)
    : OptimizerBase(std::move(params), options, "Adadelta", check_options) {}
Adadelta::Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "Adadelta", check_options) {}

void Adadelta::step() {
  profiler::RecordScope trace_event("optimizer", "Adadelta.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const AdadeltaOptions& o, ParamState& st) {
    if (!st.buffers.contains("square_avg")) {
      st.step = 0;
      st.buffers.insert("square_avg", wick::zeros_like(p));
      st.buffers.insert("acc_delta", wick::zeros_like(p));
    }
    ++st.step;  // counted as PyTorch does; the update does not read it
    Tensor g = o.maximize() ? grad.neg() : grad;
    if (o.weight_decay() != 0) g = g.add(p, o.weight_decay());
    Tensor& square_avg = st.buffers.at("square_avg");
    Tensor& acc_delta = st.buffers.at("acc_delta");
    // square_avg.mul_(rho).addcmul_(g, g, value=1 - rho): PyTorch's addcmul computes
    // (value * g) * g, and so does this.
    square_avg.mul_(o.rho());
    square_avg.add_(g.mul(1 - o.rho()).mul(g));
    // std = square_avg.add(eps).sqrt_(); delta = acc_delta.add(eps).sqrt_().div_(std).mul_(g)
    Tensor std = square_avg.add(o.eps()).sqrt();
    Tensor delta = acc_delta.add(o.eps()).sqrt().div(std).mul(g);
    // acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
    acc_delta.mul_(o.rho());
    acc_delta.add_(delta.mul(1 - o.rho()).mul(delta));
    p.add_(delta, -o.lr());
  });
}

}  // namespace wick::optim
