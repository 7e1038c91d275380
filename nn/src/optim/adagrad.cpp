// Adagrad: PyTorch 1.13's _single_tensor_adagrad as wick tensor ops (no fused kernel).
#include "wick/nn/optim/adagrad.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

OptionValues AdagradOptions::values() const {
  return {{"lr", lr_},
          {"lr_decay", lr_decay_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"initial_accumulator_value", initial_accumulator_value_},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (every option >= 0), and
// finite values (an inf lr or accumulator turns parameters into NaN or freezes them; an inf eps
// makes every update a silent no-op). eps = 0 is allowed, as PyTorch.
void check_options(const AdagradOptions& o) {
  auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  WICK_CHECK(finite_nonneg(o.lr()), "Adagrad: invalid learning rate {} (must be finite and >= 0)", o.lr());
  WICK_CHECK(finite_nonneg(o.lr_decay()), "Adagrad: invalid lr_decay {} (must be finite and >= 0)", o.lr_decay());
  WICK_CHECK(finite_nonneg(o.weight_decay()), "Adagrad: invalid weight_decay {} (must be finite and >= 0)",
             o.weight_decay());
  WICK_CHECK(finite_nonneg(o.initial_accumulator_value()),
             "Adagrad: invalid initial_accumulator_value {} (must be finite and >= 0)", o.initial_accumulator_value());
  WICK_CHECK(finite_nonneg(o.eps()), "Adagrad: invalid eps {} (must be finite and >= 0)", o.eps());
}

}  // namespace

// Validates before changing anything (as AdamOptions::set_values).
void AdagradOptions::set_values(const OptionValues& v) {
  auto m = detail::read_options(v, {"lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value", "maximize"},
                                "Adagrad");
  AdagradOptions o = *this;
  o.lr_ = m["lr"];
  o.lr_decay_ = m["lr_decay"];
  o.eps_ = m["eps"];
  o.weight_decay_ = m["weight_decay"];
  o.initial_accumulator_value_ = m["initial_accumulator_value"];
  o.maximize_ = m["maximize"] != 0;
  check_options(o);
  *this = o;
}

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& options)
    : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults)
    : Optimizer(std::move(groups), std::make_unique<AdagradOptions>(defaults)) {
  check_options(defaults);  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_options(static_cast<const AdagradOptions&>(g.options()));
  // The base constructor added the groups before this class existed (its hook did nothing then).
  for (const auto& g : param_groups()) init_group_state(g);
}

void Adagrad::check_group_options(const OptimizerOptions& o) const {
  check_options(static_cast<const AdagradOptions&>(o));
}

void Adagrad::init_group_state(const ParamGroup& group) {
  const auto& o = static_cast<const AdagradOptions&>(group.options());
  for (const auto& p : group.params()) {
    ParamState& st = state_for(p);
    if (st.buffers.contains("sum")) continue;
    st.step = 0;
    st.buffers.insert("sum", wick::full_like(p, o.initial_accumulator_value()));
  }
}

void Adagrad::step() {
  profiler::RecordScope trace_event("optimizer", "Adagrad.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_state_fits("Adagrad");
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const AdagradOptions&>(group.options()));
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;  // the same TensorImpl: the in-place ops below write the parameter's storage
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      ParamState& st = state_for(p);
      if (!st.buffers.contains("sum")) {  // left without state by load_state_dict
        st.step = 0;
        st.buffers.insert("sum", wick::full_like(p, o.initial_accumulator_value()));
      }
      const int64_t t = ++st.step;
      Tensor g = o.maximize() ? grad.neg() : grad;
      if (o.weight_decay() != 0) g = g.add(p, o.weight_decay());
      const double clr = o.lr() / (1 + static_cast<double>(t - 1) * o.lr_decay());
      // sum.addcmul_(g, g, value=1); std = sum.sqrt().add_(eps); p.addcdiv_(g, std, value=-clr),
      // with PyTorch's addcdiv order: (value * g) / std.
      Tensor& sum = st.buffers.at("sum");
      sum.add_(g.mul(g));
      Tensor denom = sum.sqrt();
      denom.add_(o.eps());
      p.add_(g.mul(-clr).div(denom));
    }
  }
}

}  // namespace wick::optim
