// Adam and AdamW: PyTorch 1.13's _single_tensor_adam, as one fused pass (stubs::adam_step) over
// all the contiguous tensors on a device that has the kernel, and as tensor ops everywhere else.
#include "wick/nn/optim/adam.h"

#include <cmath>

#include "fused_steps.h"
#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/stubs.h"
#include "wick/core/trace.h"

namespace wick::optim {

OptionValues AdamOptions::values() const {
  return {{"lr", lr_},
          {"beta1", beta1_},
          {"beta2", beta2_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"amsgrad", amsgrad_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay >= 0,
// betas in [0, 1), which excludes NaN and inf), and finite values (an inf eps makes every update a
// silent no-op). eps = 0 is allowed, as PyTorch (a gradient that is 0 from the first step then
// gives 0/0).
void check_options(const AdamOptions& o, const char* name) {
  WICK_CHECK(std::isfinite(o.lr()) && o.lr() >= 0, "{}: invalid learning rate {} (must be finite and >= 0)", name,
             o.lr());
  WICK_CHECK(std::isfinite(o.eps()) && o.eps() >= 0, "{}: invalid eps {} (must be finite and >= 0)", name, o.eps());
  WICK_CHECK(o.beta1() >= 0 && o.beta1() < 1, "{}: invalid beta1 {} (must be in [0, 1))", name, o.beta1());
  WICK_CHECK(o.beta2() >= 0 && o.beta2() < 1, "{}: invalid beta2 {} (must be in [0, 1))", name, o.beta2());
  WICK_CHECK(std::isfinite(o.weight_decay()) && o.weight_decay() >= 0,
             "{}: invalid weight_decay {} (must be finite and >= 0)", name, o.weight_decay());
}

}  // namespace

// Validates before changing anything: a loaded checkpoint with lr = -1 fails at load, not at the
// first step() (Note [Checkpoint files]).
void AdamOptions::set_values(const OptionValues& v) {
  auto m = detail::read_options(v, {"lr", "beta1", "beta2", "eps", "weight_decay", "amsgrad", "maximize"}, "Adam");
  AdamOptions o = *this;
  o.lr_ = m["lr"];
  o.beta1_ = m["beta1"];
  o.beta2_ = m["beta2"];
  o.eps_ = m["eps"];
  o.weight_decay_ = m["weight_decay"];
  o.amsgrad_ = m["amsgrad"] != 0;
  o.maximize_ = m["maximize"] != 0;
  check_options(o, "Adam options");
  *this = o;
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults) : Adam(std::move(groups), defaults, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled)
    : Optimizer(std::move(groups), defaults.clone()), decoupled_(decoupled) {
  check_options(defaults, name().c_str());  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_group_options(g.options());
}

void Adam::check_group_options(const OptimizerOptions& o) const {
  check_options(static_cast<const AdamOptions&>(o), decoupled_ ? "AdamW" : "Adam");
}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options, true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults) : Adam(std::move(groups), defaults, true) {}

std::vector<std::string> Adam::state_names(const OptimizerOptions& o) const {
  if (static_cast<const AdamOptions&>(o).amsgrad()) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

void Adam::step() {
  profiler::RecordScope trace_event("optimizer", "Adam.step");  // Note [Tracer]
  NoGradGuard no_grad;
  const char* nm = decoupled_ ? "AdamW" : "Adam";
  check_state_fits(nm);
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const AdamOptions&>(group.options()), nm);
  detail::FusedSteps<stubs::AdamStepTensor> fused;  // run together after the loop
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;
      const Tensor& g = p.grad();
      if (!g.defined()) continue;
      ParamState& st = state_for(p);
      if (!st.buffers.contains("exp_avg")) {
        st.step = 0;
        st.buffers.insert("exp_avg", wick::zeros_like(p));
        st.buffers.insert("exp_avg_sq", wick::zeros_like(p));
      }
      if (o.amsgrad() && !st.buffers.contains("max_exp_avg_sq"))
        st.buffers.insert("max_exp_avg_sq", wick::zeros_like(p));
      Tensor& m = st.buffers.at("exp_avg");
      Tensor& v = st.buffers.at("exp_avg_sq");
      Tensor* vmax = o.amsgrad() ? &st.buffers.at("max_exp_avg_sq") : nullptr;
      const int64_t t = ++st.step;
      // This step's settings, for the fused kernel and the tensor-op path alike.
      math::AdamStepArgs a;
      a.beta1 = o.beta1();
      a.beta2 = o.beta2();
      a.eps = o.eps();
      a.weight_decay = o.weight_decay();
      a.decay = 1 - o.lr() * o.weight_decay();
      a.step_size = o.lr() / (1 - std::pow(o.beta1(), static_cast<double>(t)));
      a.bias_correction2_sqrt = std::sqrt(1 - std::pow(o.beta2(), static_cast<double>(t)));
      a.decoupled = decoupled_;
      a.maximize = o.maximize();
      if (fused_ && stubs::adam_step.find(p.device().type) && fusable({&p, &g, &m, &v}, p) &&
          (!vmax || fusable({vmax}, p)) && !detail::shares_memory(p, g)) {
        stubs::AdamStepTensor slot;
        slot.exp_avg = m.data_ptr();
        slot.exp_avg_sq = v.data_ptr();
        slot.max_exp_avg_sq = vmax ? vmax->data_ptr() : nullptr;
        slot.args = a;
        fused.add(p, g, slot, {&m, &v, vmax});
        continue;
      }
      // The updates queued so far first: p may share memory with one of them.
      fused.run(stubs::adam_step);
      Tensor gi = o.maximize() ? g.neg() : g;
      if (o.weight_decay() != 0) {
        if (decoupled_)
          p.mul_(a.decay);
        else
          gi = gi.add(p, o.weight_decay());
      }
      m.mul_(o.beta1());
      m.add_(gi, 1 - o.beta1());
      v.mul_(o.beta2());
      v.add_(gi.mul(gi), 1 - o.beta2());
      Tensor denom;
      if (vmax) {
        vmax->copy_(wick::maximum(*vmax, v));
        denom = vmax->sqrt().div(a.bias_correction2_sqrt).add(o.eps());
      } else {
        denom = v.sqrt().div(a.bias_correction2_sqrt).add(o.eps());
      }
      p.add_(m.div(denom), -a.step_size);
    }
  }
  fused.run(stubs::adam_step);
}

}  // namespace wick::optim
