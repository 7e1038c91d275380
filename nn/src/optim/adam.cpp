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

namespace {
// Throws ValueError naming the first invalid option: PyTorch's ranges (lr, eps, weight_decay >= 0,
// betas in [0, 1), which excludes NaN and inf), and finite values (an inf eps makes every update a
// silent no-op). eps = 0 is allowed, as PyTorch (a gradient that is 0 from the first step then
// gives 0/0).
void check_options(const AdamOptions& o, const char* op) { detail::check_adam_options(op, o); }

}  // namespace

detail::OptionTable<AdamOptions> AdamOptions::table() {
  return {"Adam",
          {{"lr", &AdamOptions::lr_},
           {"beta1", &AdamOptions::beta1_},
           {"beta2", &AdamOptions::beta2_},
           {"eps", &AdamOptions::eps_},
           {"weight_decay", &AdamOptions::weight_decay_},
           {"amsgrad", &AdamOptions::amsgrad_},
           {"maximize", &AdamOptions::maximize_}},
          [](const AdamOptions& o) { check_options(o, "Adam options"); }};
}
template struct OptionsBase<AdamOptions>;

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults) : Adam(std::move(groups), defaults, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled)
    : OptimizerBase(std::move(groups), defaults, decoupled ? "AdamW" : "Adam", check_options), decoupled_(decoupled) {}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options, true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults) : Adam(std::move(groups), defaults, true) {}

std::vector<std::string> Adam::state_names(const OptimizerOptions& o) const {
  if (options_of(o).amsgrad()) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

void Adam::step() {
  profiler::RecordScope trace_event("optimizer", "Adam.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  detail::FusedSteps<stubs::AdamStepTensor> fused;  // run together after the loop
  for_each_update([&](Tensor& p, const Tensor& g, const AdamOptions& o, ParamState& st) {
    if (!st.buffers.contains("exp_avg")) {
      st.step = 0;
      st.buffers.insert("exp_avg", wick::zeros_like(p));
      st.buffers.insert("exp_avg_sq", wick::zeros_like(p));
    }
    if (o.amsgrad() && !st.buffers.contains("max_exp_avg_sq")) st.buffers.insert("max_exp_avg_sq", wick::zeros_like(p));
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
      return;
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
  });
  fused.run(stubs::adam_step);
}

}  // namespace wick::optim
