// ASGD: PyTorch 1.13's _single_tensor_asgd as wick tensor ops (no fused kernel).
#include "wick/nn/optim/asgd.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, weight_decay >= 0) plus
// finite values and lambd, alpha, t0 >= 0, which PyTorch does not check.
void check_options(const ASGDOptions& o, const char* op) {
  detail::check_finite_nonneg(op, "learning rate", o.lr());
  detail::check_finite_nonneg(op, "lambd", o.lambd());
  detail::check_finite_nonneg(op, "alpha", o.alpha());
  detail::check_finite_nonneg(op, "t0", o.t0());
  detail::check_finite_nonneg(op, "weight_decay", o.weight_decay());
}

// PyTorch's torch.tensor(x): a 0-dim float32 tensor, read back with item().
double as_float32(double x) { return static_cast<double>(static_cast<float>(x)); }

}  // namespace

detail::OptionTable<ASGDOptions> ASGDOptions::table() {
  return {"ASGD",
          {{"lr", &ASGDOptions::lr_},
           {"lambd", &ASGDOptions::lambd_},
           {"alpha", &ASGDOptions::alpha_},
           {"t0", &ASGDOptions::t0_},
           {"weight_decay", &ASGDOptions::weight_decay_},
           {"maximize", &ASGDOptions::maximize_}},
          [](const ASGDOptions& o) { check_options(o, "ASGD"); }};
}
template struct OptionsBase<ASGDOptions>;

ASGD::ASGD(std::vector<Tensor> params, const ASGDOptions& options)
    : OptimizerBase(std::move(params), options, "ASGD", check_options) {}
ASGD::ASGD(std::vector<ParamGroup> groups, const ASGDOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "ASGD", check_options) {}

double ASGD::scalar_state_max(const std::string& name) const {
  return name == "eta" ? std::numeric_limits<double>::infinity() : 1.0;
}

void ASGD::step() {
  profiler::RecordScope trace_event("optimizer", "ASGD.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const ASGDOptions& o, ParamState& st) {
    if (!st.buffers.contains("ax")) {
      st.step = 0;
      st.scalars.insert_or_assign("eta", as_float32(o.lr()));
      st.scalars.insert_or_assign("mu", 1.0);
      st.buffers.insert("ax", wick::zeros_like(p));
    }
    ++st.step;
    // PyTorch keeps step as a float32 tensor and reads it back with item().
    const double step = as_float32(static_cast<double>(st.step));
    Tensor g = o.maximize() ? grad.neg() : grad;
    if (o.weight_decay() != 0) g = g.add(p, o.weight_decay());
    double& eta = st.scalars.at("eta");
    double& mu = st.scalars.at("mu");
    p.mul_(1 - o.lambd() * eta);
    p.add_(g, -eta);
    Tensor& ax = st.buffers.at("ax");
    if (mu != 1)
      ax.add_(p.sub(ax).mul(mu));
    else
      ax.copy_(p);
    eta = as_float32(o.lr() / std::pow(1 + o.lambd() * o.lr() * step, o.alpha()));
    mu = as_float32(1 / std::max(1.0, step - o.t0()));
  });
}

}  // namespace wick::optim
