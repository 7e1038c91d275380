// Adagrad: PyTorch 1.13's _single_tensor_adagrad as wick tensor ops (no fused kernel).
#include "wick/nn/optim/adagrad.h"

#include <cmath>

#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (every option >= 0), and
// finite values (an inf lr or accumulator turns parameters into NaN or freezes them; an inf eps
// makes every update a silent no-op). eps = 0 is allowed, as PyTorch.
void check_options(const AdagradOptions& o, const char* op) {
  detail::check_finite_nonneg(op, "learning rate", o.lr());
  detail::check_finite_nonneg(op, "lr_decay", o.lr_decay());
  detail::check_finite_nonneg(op, "weight_decay", o.weight_decay());
  detail::check_finite_nonneg(op, "initial_accumulator_value", o.initial_accumulator_value());
  detail::check_finite_nonneg(op, "eps", o.eps());
}

}  // namespace

detail::OptionTable<AdagradOptions> AdagradOptions::table() {
  return {"Adagrad",
          {{"lr", &AdagradOptions::lr_},
           {"lr_decay", &AdagradOptions::lr_decay_},
           {"eps", &AdagradOptions::eps_},
           {"weight_decay", &AdagradOptions::weight_decay_},
           {"initial_accumulator_value", &AdagradOptions::initial_accumulator_value_},
           {"maximize", &AdagradOptions::maximize_}},
          [](const AdagradOptions& o) { check_options(o, "Adagrad"); }};
}
template struct OptionsBase<AdagradOptions>;

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& options)
    : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}
Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "Adagrad", check_options) {
  // The base constructor added the groups before this class existed (its hook did nothing then).
  for (const auto& g : param_groups()) init_group_state(g);
}

void Adagrad::init_group_state(const ParamGroup& group) {
  const auto& o = options_of(group.options());
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
  check_step();
  for_each_update([](Tensor& p, const Tensor& grad, const AdagradOptions& o, ParamState& st) {
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
  });
}

}  // namespace wick::optim
