// RMSprop: PyTorch 1.13's _single_tensor_rmsprop as wick tensor ops (no fused kernel).
#include "wick/nn/optim/rmsprop.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

OptionValues RMSpropOptions::values() const {
  return {{"lr", lr_},
          {"momentum", momentum_},
          {"alpha", alpha_},
          {"eps", eps_},
          {"centered", centered_ ? 1.0 : 0.0},
          {"weight_decay", weight_decay_},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, momentum,
// weight_decay, alpha >= 0), and finite values (an inf lr or momentum turns every parameter into
// inf or NaN; an inf eps makes every update a silent no-op). eps = 0 is allowed, as PyTorch.
void check_options(const RMSpropOptions& o) {
  auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  WICK_CHECK(finite_nonneg(o.lr()), "RMSprop: invalid learning rate {} (must be finite and >= 0)", o.lr());
  WICK_CHECK(finite_nonneg(o.eps()), "RMSprop: invalid eps {} (must be finite and >= 0)", o.eps());
  WICK_CHECK(finite_nonneg(o.momentum()), "RMSprop: invalid momentum {} (must be finite and >= 0)", o.momentum());
  WICK_CHECK(finite_nonneg(o.weight_decay()), "RMSprop: invalid weight_decay {} (must be finite and >= 0)",
             o.weight_decay());
  WICK_CHECK(finite_nonneg(o.alpha()), "RMSprop: invalid alpha {} (must be finite and >= 0)", o.alpha());
}

}  // namespace

// Validates before changing anything (as AdamOptions::set_values).
void RMSpropOptions::set_values(const OptionValues& v) {
  auto m =
      detail::read_options(v, {"lr", "momentum", "alpha", "eps", "centered", "weight_decay", "maximize"}, "RMSprop");
  RMSpropOptions o = *this;
  o.lr_ = m["lr"];
  o.momentum_ = m["momentum"];
  o.alpha_ = m["alpha"];
  o.eps_ = m["eps"];
  o.centered_ = m["centered"] != 0;
  o.weight_decay_ = m["weight_decay"];
  o.maximize_ = m["maximize"] != 0;
  check_options(o);
  *this = o;
}

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& options)
    : RMSprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults)
    : Optimizer(std::move(groups), std::make_unique<RMSpropOptions>(defaults)) {
  check_options(defaults);  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_options(static_cast<const RMSpropOptions&>(g.options()));
}

std::vector<std::string> RMSprop::state_names(const OptimizerOptions& options) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  std::vector<std::string> names = {"square_avg"};
  if (o.momentum() > 0) names.emplace_back("momentum_buffer");
  if (o.centered()) names.emplace_back("grad_avg");
  return names;
}

void RMSprop::check_group_options(const OptimizerOptions& o) const {
  check_options(static_cast<const RMSpropOptions&>(o));
}

void RMSprop::step() {
  profiler::RecordScope trace_event("optimizer", "RMSprop.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_state_fits("RMSprop");
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const RMSpropOptions&>(group.options()));
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;  // the same TensorImpl: the in-place ops below write the parameter's storage
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      ParamState& st = state_for(p);
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
    }
  }
}

}  // namespace wick::optim
