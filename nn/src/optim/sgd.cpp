// SGD: PyTorch 1.13's _single_tensor_sgd, as one fused pass (stubs::sgd_step) over all the contiguous
// tensors on a device that has the kernel, and as tensor ops everywhere else.
#include "wick/nn/optim/sgd.h"

#include <cmath>

#include "fused_steps.h"
#include "option_values.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/stubs.h"
#include "wick/core/trace.h"

namespace wick::optim {

namespace {
// Throws ValueError naming the first invalid option. PyTorch checks lr, momentum and weight_decay
// >= 0; wick also refuses non-finite values (inf or NaN would make every parameter NaN or inf).
// dampening has no range in PyTorch (a dampening above 1 flips the gradient's sign): finite only.
void check_options(const SGDOptions& o, const char* op) {
  detail::check_finite_nonneg(op, "learning rate", o.lr());
  detail::check_finite_nonneg(op, "momentum", o.momentum());
  WICK_CHECK(std::isfinite(o.dampening()), "{}: invalid dampening {} (must be finite)", op, o.dampening());
  detail::check_finite_nonneg(op, "weight_decay", o.weight_decay());
  WICK_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
             "{}: Nesterov momentum requires a momentum > 0 and zero dampening (got momentum {}, dampening {})", op,
             o.momentum(), o.dampening());
}

}  // namespace

detail::OptionTable<SGDOptions> SGDOptions::table() {
  return {"SGD",
          {{"lr", &SGDOptions::lr_},
           {"momentum", &SGDOptions::momentum_},
           {"dampening", &SGDOptions::dampening_},
           {"weight_decay", &SGDOptions::weight_decay_},
           {"nesterov", &SGDOptions::nesterov_},
           {"maximize", &SGDOptions::maximize_}},
          [](const SGDOptions& o) { check_options(o, "SGD"); }};
}
template struct OptionsBase<SGDOptions>;

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options)
    : OptimizerBase(std::move(params), options, "SGD", check_options) {}
SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults)
    : OptimizerBase(std::move(groups), defaults, "SGD", check_options) {}

std::vector<std::string> SGD::state_names(const OptimizerOptions& o) const {
  if (options_of(o).momentum() != 0) return {"momentum_buffer"};
  return {};
}

void SGD::step() {
  profiler::RecordScope trace_event("optimizer", "SGD.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_step();
  detail::FusedSteps<stubs::SgdStepTensor> fused;  // run together after the loop
  for_each_update([&](Tensor& p, const Tensor& g, const SGDOptions& o, ParamState& st) {
    Tensor* buf = o.momentum() != 0 ? st.buffers.find("momentum_buffer") : nullptr;
    const bool first = o.momentum() != 0 && buf == nullptr;
    if (first) buf = &st.buffers.insert("momentum_buffer", wick::empty_like(p));
    ++st.step;
    if (fused_ && stubs::sgd_step.find(p.device().type) && fusable({&p, &g}, p) && (!buf || fusable({buf}, p)) &&
        !detail::shares_memory(p, g)) {
      math::SgdStepArgs a;
      a.lr = o.lr();
      a.momentum = o.momentum();
      a.dampening = o.dampening();
      a.weight_decay = o.weight_decay();
      a.nesterov = o.nesterov();
      a.maximize = o.maximize();
      a.first = first;
      stubs::SgdStepTensor slot;
      slot.momentum_buffer = buf ? buf->data_ptr() : nullptr;
      slot.args = a;
      fused.add(p, g, slot, {buf});
      return;
    }
    // The updates queued so far first: p may share memory with one of them.
    fused.run(stubs::sgd_step);
    Tensor d = o.maximize() ? g.neg() : g;
    if (o.weight_decay() != 0) d = d.add(p, o.weight_decay());
    if (o.momentum() != 0) {
      if (first) {
        buf->copy_(d);
      } else {
        buf->mul_(o.momentum());
        buf->add_(d, 1 - o.dampening());
      }
      d = o.nesterov() ? d.add(*buf, o.momentum()) : *buf;
    }
    p.add_(d, -o.lr());
  });
  fused.run(stubs::sgd_step);
}

}  // namespace wick::optim
