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

OptionValues SGDOptions::values() const {
  return {{"lr", lr_},
          {"momentum", momentum_},
          {"dampening", dampening_},
          {"weight_decay", weight_decay_},
          {"nesterov", nesterov_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

namespace {
// Throws ValueError naming the first invalid option. PyTorch checks lr, momentum and weight_decay
// >= 0; wick also refuses non-finite values (inf or NaN would make every parameter NaN or inf).
// dampening has no range in PyTorch (a dampening above 1 flips the gradient's sign): finite only.
void check_options(const SGDOptions& o) {
  WICK_CHECK(std::isfinite(o.lr()) && o.lr() >= 0, "SGD: invalid learning rate {} (must be finite and >= 0)", o.lr());
  WICK_CHECK(std::isfinite(o.momentum()) && o.momentum() >= 0, "SGD: invalid momentum {} (must be finite and >= 0)",
             o.momentum());
  WICK_CHECK(std::isfinite(o.dampening()), "SGD: invalid dampening {} (must be finite)", o.dampening());
  WICK_CHECK(std::isfinite(o.weight_decay()) && o.weight_decay() >= 0,
             "SGD: invalid weight_decay {} (must be finite and >= 0)", o.weight_decay());
  WICK_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
             "SGD: Nesterov momentum requires a momentum > 0 and zero dampening (got momentum {}, dampening {})",
             o.momentum(), o.dampening());
}

}  // namespace

// Validates before changing anything (as AdamOptions::set_values).
void SGDOptions::set_values(const OptionValues& v) {
  auto m = detail::read_options(v, {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"}, "SGD");
  SGDOptions o = *this;
  o.lr_ = m["lr"];
  o.momentum_ = m["momentum"];
  o.dampening_ = m["dampening"];
  o.weight_decay_ = m["weight_decay"];
  o.nesterov_ = m["nesterov"] != 0;
  o.maximize_ = m["maximize"] != 0;
  check_options(o);
  *this = o;
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults)
    : Optimizer(std::move(groups), std::make_unique<SGDOptions>(defaults)) {
  check_options(defaults);  // as PyTorch; a group added later may take them
  for (const auto& g : param_groups()) check_options(static_cast<const SGDOptions&>(g.options()));
}

std::vector<std::string> SGD::state_names(const OptimizerOptions& o) const {
  if (static_cast<const SGDOptions&>(o).momentum() != 0) return {"momentum_buffer"};
  return {};
}

void SGD::check_group_options(const OptimizerOptions& o) const { check_options(static_cast<const SGDOptions&>(o)); }

void SGD::step() {
  profiler::RecordScope trace_event("optimizer", "SGD.step");  // Note [Tracer]
  NoGradGuard no_grad;
  check_state_fits("SGD");
  // Every group's settings are checked before any parameter changes: nothing is half-applied.
  for (const auto& group : param_groups()) check_options(static_cast<const SGDOptions&>(group.options()));
  detail::FusedSteps<stubs::SgdStepTensor> fused;  // run together after the loop
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    for (const auto& p0 : group.params()) {
      Tensor p = p0;
      const Tensor& g = p.grad();
      if (!g.defined()) continue;
      ParamState& st = state_for(p);
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
        continue;
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
    }
  }
  fused.run(stubs::sgd_step);
}

}  // namespace wick::optim
