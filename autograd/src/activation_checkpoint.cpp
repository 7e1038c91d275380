// The reentrant activation checkpoint (Note [Activation checkpoint] in
// wick/autograd/activation_checkpoint.h).
#include "wick/autograd/activation_checkpoint.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "checkpoint_internal.h"
#include "rng_fork.h"
#include "wick/autograd/engine.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/meta.h"
#include "wick/autograd/record.h"
#include "wick/autograd/saved_tensor.h"
#include "wick/core/error.h"
#include "wick/core/generator.h"
#include "wick/core/native.h"

namespace wick::autograd {

namespace {

constexpr const char* kName = "CheckpointBackward";

class CheckpointNode final : public Node {
 public:
  CheckpointNode(CheckpointFn fn, std::optional<RngState> rng, size_t num_outputs)
      : fn_(std::move(fn)), rng_(rng), num_outputs_(num_outputs) {}
  std::string name() const override { return kName; }
  void save_inputs(const std::vector<Tensor>& inputs) {
    for (const Tensor& t : inputs) saved_.emplace_back(t, false);
  }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);  // Note [Concurrent backward]
    for (SavedTensor& s : saved_) s.reset();
  }
  std::vector<const SavedTensor*> saved_tensors() const override {
    std::vector<const SavedTensor*> r;
    for (const SavedTensor& s : saved_) r.push_back(&s);
    return r;
  }
  variable_list apply(variable_list&& grads) override;

 private:
  CheckpointFn fn_;
  std::optional<RngState> rng_;
  size_t num_outputs_;
  std::vector<SavedTensor> saved_;
  mutable std::mutex mutex_;
};

variable_list CheckpointNode::apply(variable_list&& grads) {
  WICK_CHECK_STATE(is_checkpoint_valid(),
                   "checkpoint: backward through an activation checkpoint cannot run under autograd::grad (it "
                   "recomputes the segment with a reentrant backward that accumulates into .grad); use "
                   "Tensor::backward or autograd::backward and read the inputs' .grad");
  WICK_CHECK_NOT_IMPLEMENTED(!GradMode::is_enabled(),
                             "checkpoint: a backward with create_graph=true through an activation checkpoint is not "
                             "supported (the recomputed graph starts from detached inputs, so a second derivative "
                             "would miss the path to them); run the segment without checkpoint for double backward");
  std::vector<Tensor> inputs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const SavedTensor& s : saved_) inputs.push_back(s.unpack(kName));
  }
  std::vector<Tensor> detached;
  detached.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      detached.emplace_back();
      continue;
    }
    Tensor d = t.detach();
    if (t.requires_grad()) d.requires_grad_(true);
    detached.push_back(std::move(d));
  }
  std::vector<Tensor> outs;
  {
    detail::RngFork fork(rng_);
    AutoGradMode grad_on(true);
    outs = fn_(detached);
  }
  WICK_CHECK(outs.size() == num_outputs_,
             "checkpoint: the function returned {} tensor(s) when recomputed in backward but {} in forward; it must "
             "do the same computation each time it runs",
             outs.size(), num_outputs_);
  std::vector<Tensor> roots, root_grads;
  bool any_requires_grad = false;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined() || !outs[i].requires_grad()) continue;
    any_requires_grad = true;
    if (i >= grads.size() || !grads[i].defined()) continue;  // no gradient arrived: adds nothing
    WICK_CHECK(grads[i].sizes() == outs[i].sizes(),
               "checkpoint: output {} has shape [{}] when recomputed in backward but its gradient has shape [{}]; "
               "the function must do the same computation each time it runs",
               i, fmt::join(outs[i].sizes(), ", "), fmt::join(grads[i].sizes(), ", "));
    roots.push_back(outs[i]);
    root_grads.push_back(grads[i]);
  }
  WICK_CHECK(any_requires_grad,
             "checkpoint: none of the {} output(s) requires grad when the function is recomputed in backward, so no "
             "gradient can flow through it; the checkpoint is not needed there",
             outs.size());
  if (!roots.empty()) autograd::backward(roots, root_grads);
  variable_list result;
  result.reserve(detached.size());
  for (const Tensor& d : detached) result.push_back(d.defined() && d.requires_grad() ? d.grad() : Tensor());
  return result;
}

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs, bool preserve_rng_state) {
  WICK_CHECK(static_cast<bool>(fn), "checkpoint: the function is empty; pass a callable");
  if (!GradMode::is_enabled()) return fn(inputs);
  WICK_CHECK(needs_grad(inputs),
             "checkpoint: none of the {} input tensor(s) requires grad while grad mode is on, so the recomputation in "
             "backward could not reach the parameters the function uses and they would get no gradient; call "
             "requires_grad_() on an input, or run under NoGradGuard when no gradient is wanted",
             inputs.size());
  std::optional<RngState> rng;
  if (preserve_rng_state) rng = get_rng_state();
  std::vector<Tensor> outs;
  {
    NoGradGuard no_grad;
    outs = fn(inputs);
  }
  auto node = std::make_shared<CheckpointNode>(fn, rng, outs.size());
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(t.defined() && requires_grad(t) ? gradient_edge(t) : Edge{});
  node->set_next_edges(std::move(edges));
  const Tensor* first = nullptr;
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor& t = outs[i];
    if (!t.defined()) continue;
    bool is_input = false, shares = false;
    for (const Tensor& x : inputs) {
      if (!x.defined()) continue;
      is_input = is_input || x.impl() == t.impl();
      shares = shares || x.impl()->storage == t.impl()->storage;
    }
    // An input returned as it is comes back as an alias, so the input keeps its own history; an
    // output sharing an input's memory is a view the engine does not track, flagged as a custom
    // function's (Note [Custom functions]).
    if (is_input) t = native::alias(t);
    if (shares) t.impl()->view_made_without_grad = true;
    if (!is_floating(t.dtype())) continue;  // integer outputs get no history
    set_history(t, node, static_cast<uint32_t>(i));
    if (!first) first = &t;
  }
  if (!first) return outs;  // nothing to differentiate: the node is dropped
  // Undefined and integer outputs get metadata too, so that backward gets one gradient slot per
  // output and the node's device is that of its first differentiable output.
  for (size_t i = 0; i < outs.size(); ++i)
    if (!outs[i].defined() || !is_floating(outs[i].dtype())) node->set_output_meta(i, *first);
  node->save_inputs(inputs);
  return outs;
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input, bool preserve_rng_state) {
  return checkpoint(fn, input, CheckpointOptions{.use_reentrant = true, .preserve_rng_state = preserve_rng_state});
}

std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               const CheckpointOptions& options) {
  if (options.use_reentrant) return checkpoint(fn, inputs, options.preserve_rng_state);
  return detail::checkpoint_without_reentrant(fn, inputs, options.preserve_rng_state);
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input,
                  const CheckpointOptions& options) {
  WICK_CHECK(static_cast<bool>(fn), "checkpoint: the function is empty; pass a callable");
  CheckpointFn wrapped = [fn](const std::vector<Tensor>& xs) { return std::vector<Tensor>{fn(xs.at(0))}; };
  return checkpoint(wrapped, {input}, options)[0];
}

}  // namespace wick::autograd
