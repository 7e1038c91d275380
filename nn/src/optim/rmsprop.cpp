// RMSprop: PyTorch 1.13's _single_tensor_rmsprop as wick tensor ops (no fused kernel).
#include "wick/nn/optim/rmsprop.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, momentum,
// weight_decay, alpha >= 0), and finite values (an inf lr or momentum turns every parameter into
// inf or NaN; an inf eps makes every update a silent no-op). eps = 0 is allowed, as PyTorch.
void check_options(const RMSpropOptions& o, const char* op) {
  detail::check_finite_nonneg(op, "learning rate", o.lr());
  detail::check_finite_nonneg(op, "eps", o.eps());
  detail::check_finite_nonneg(op, "momentum", o.momentum());
  detail::check_finite_nonneg(op, "weight_decay", o.weight_decay());
  detail::check_finite_nonneg(op, "alpha", o.alpha());
}

}  // namespace

detail::OptionTable<RMSpropOptions> RMSpropOptions::table() {
  return {"RMSprop",
          {{"lr", &RMSpropOptions::lr_},
           {"momentum", &RMSpropOptions::momentum_},
           {"alpha", &RMSpropOptions::alpha_},
           {"eps", &RMSpropOptions::eps_},
           {"centered", &RMSpropOptions::centered_},
           {"weight_decay", &RMSpropOptions::weight_decay_},
           {"maximize", &RMSpropOptions::maximize_}},
          [](const RMSpropOptions& o) { check_options(o, "RMSprop"); }};
}
template struct OptionsBase<RMSpropOptions>;

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& options)
    : OptimizerBase(std::move(params), options, "RMSprop", check_options) {}
RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "RMSprop", check_options) {}

std::vector<std::string> RMSprop::state_names(const OptimizerOptions& options) const {
  const auto& o = options_of(options);
  std::vector<std::string> names = {"square_avg"};
  if (o.momentum() > 0) names.emplace_back("momentum_buffer");
  if (o.centered()) names.emplace_back("grad_avg");
  return names;
}

void RMSprop::step() {
  profiler::RecordScope trace_event("optimizer", "RMSprop.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const RMSpropOptions& o, ParamState& st) {
    if (!st.buffers.contains("square_avg")) {
      st.step = 0;
      st.buffers.insert("square_avg", wick::zeros_like(p));
    }
    if (o.momentum() > 0 && !st.buffers.contains("momentum_buffer"))
      st.buffers.insert("momentum_buffer", wick::zeros_like(p));
    if (o.centered() && !st.buffers.contains("grad_avg")) st.buffers.insert("grad_avg", wick::zeros_like(p));
    ++st.step;  // counted as PyTorch does; the update does not read it

    Tensor g = o.maximize() ? grad.neg() : grad;
    if (o.weight_decay() != 0) g = g.add(p, o.weight_decay());
    // square_avg.mul_(alpha).addcmul_(g, g, value=1 - alpha): PyTorch's addcmul computes
    // (value * g) * g, and so does this.
    Tensor& square_avg = st.buffers.at("square_avg");
    square_avg.mul_(o.alpha());
    square_avg.add_(g.mul(1 - o.alpha()).mul(g));
    Tensor avg;
    if (o.centered()) {
      Tensor& grad_avg = st.buffers.at("grad_avg");
      grad_avg.mul_(o.alpha());
      grad_avg.add_(g, 1 - o.alpha());
      // square_avg.addcmul(grad_avg, grad_avg, value=-1): (-ga) * ga = -(ga * ga) exactly.
      avg = square_avg.sub(grad_avg.mul(grad_avg)).sqrt();
    } else {
      avg = square_avg.sqrt();
    }
    avg.add_(o.eps());
    if (o.momentum() > 0) {
      // buf.mul_(momentum).addcdiv_(g, avg); p.add_(buf, alpha=-lr)
      Tensor& buf = st.buffers.at("momentum_buffer");
      buf.mul_(o.momentum());
      buf.add_(g.div(avg));
      p.add_(buf, -o.lr());
    } else {
      // p.addcdiv_(g, avg, value=-lr): PyTorch's addcdiv computes (value * g) / avg.
      p.add_(g.mul(-o.lr()).div(avg));
    }
  });
}

}  // namespace wick::optim
