// CustomFunctionNode: the node of a custom function (Note [Custom functions] in
// wick/autograd/custom_function.h).
#include "wick/autograd/custom_function.h"

#include <cxxabi.h>

#include <cstdlib>

#include "view_tracking.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::autograd {

std::string detail::demangle(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string r = status == 0 && d ? d : mangled;
  std::free(d);
  return r;
}

CustomFunctionNode::CustomFunctionNode(std::string name, BackwardFn fn, std::vector<bool> is_tensor_input)
    : fn_(fn), is_tensor_input_(std::move(is_tensor_input)) {
  ctx_.name_ = std::move(name);
  for (bool b : is_tensor_input_) ctx_.num_tensor_inputs_ += b ? 1 : 0;
}

void CustomFunctionNode::begin(const detail::ForwardInputs& inputs, bool recording) {
  ctx_.grad_fn_ = weak_from_this();
  ctx_.recording_ = recording;
  if (!recording) return;
  std::vector<Edge> edges;
  edges.reserve(inputs.tensors.size());
  for (const Tensor& t : inputs.tensors) edges.push_back(requires_grad(t) ? gradient_edge(t) : Edge{});
  set_next_edges(std::move(edges));
}

namespace {
bool contains(const variable_list& ts, const TensorImpl* impl) {
  for (const Tensor& t : ts)
    if (t.defined() && t.impl() == impl) return true;
  return false;
}
bool shares_memory(const variable_list& ts, const Tensor& t) {
  for (const Tensor& x : ts)
    if (x.defined() && x.impl()->storage == t.impl()->storage) return true;
  return false;
}
}  // namespace

void CustomFunctionNode::finish(const detail::ForwardInputs& inputs, variable_list& outputs) {
  const std::string& name = ctx_.name_;
  const bool recording = ctx_.recording_;
  // Every check first, so that a refusal changes nothing but what forward itself wrote.
  for (const Tensor& d : ctx_.dirty_tensors_) {
    WICK_CHECK(contains(outputs, d.impl()),
               "{}: a tensor of shape [{}] was marked dirty (mark_dirty) but not returned by forward; the inputs that "
               "forward modifies in place must all be outputs",
               name, fmt::join(d.sizes(), ", "));
    if (!recording) continue;
    const AutogradMeta* m = get_meta(d);
    WICK_CHECK_STATE(!(m && m->requires_grad && !m->grad_fn),
                     "{}: a leaf tensor that requires grad was modified in place (mark_dirty); clone() it first, or "
                     "modify it under wick::NoGradGuard outside the function",
                     name);
    detail::check_untracked_view(d, fmt::format("{}: mark_dirty", name));  // as an in-place op does
    WICK_CHECK_NOT_IMPLEMENTED(!(m && m->is_view && m->view_base.defined()),
                               "{}: a view of another tensor was marked dirty (mark_dirty); rebasing the view's base "
                               "onto a custom function is not supported. clone() the view before the call",
                               name);
  }
  for (const Tensor& d : ctx_.dirty_tensors_) d.bump_version();

  output_defined_.assign(outputs.size(), false);
  const Tensor* first_defined = nullptr;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& t = outputs[i];
    if (!t.defined()) continue;
    output_defined_[i] = true;
    const bool is_input = contains(inputs.tensors, t.impl());
    const bool dirty = ctx_.dirty_.count(t.impl()) > 0;
    // Only floating outputs are differentiable (PyTorch's isDifferentiableType): an integer output
    // gets no history, as a non-differentiable one.
    const bool differentiable = ctx_.non_differentiable_.count(t.impl()) == 0 && is_floating(t.dtype());
    // An output that shares memory with an input, other than a dirty input itself, is a view the
    // engine does not track: a recorded in-place op on it is refused (Note [Custom functions]).
    bool untracked_view = !dirty && shares_memory(inputs.tensors, t);
    const auto nr = static_cast<uint32_t>(i);
    if (!recording || !differentiable) {
      if (recording) set_output_meta(i, t);  // its gradient may still be materialized as zeros
      // An input returned unchanged comes back as an alias: the input keeps its own history. Of a
      // tensor that requires grad the alias is a detached one, which is not flagged (PyTorch
      // returns input.detach() there, and a view of the input otherwise).
      if (is_input && !dirty) {
        if (requires_grad(t)) untracked_view = false;
        t = native::alias(t);
      } else if (recording && requires_grad(t)) {
        t = t.detach();
        untracked_view = false;
      }
    } else if (dirty) {
      set_history(t, shared_from_this(), nr);  // the input itself now comes from this node
    } else if (is_input) {
      t = native::alias(t);
      set_history(t, shared_from_this(), nr);
    } else {
      set_history(t, shared_from_this(), nr);
    }
    if (untracked_view) t.impl()->view_made_without_grad = true;
    if (!first_defined) first_defined = &t;
  }
  // Undefined outputs get metadata too, so the engine hands backward one gradient per output, and
  // the node's device (that of its output 0) is the first defined output's. Only the device
  // matters there: an undefined output's gradient is never materialized.
  if (recording && first_defined)
    for (size_t i = 0; i < outputs.size(); ++i)
      if (!output_defined_[i]) set_output_meta(i, *first_defined);

  variable_list to_save = std::move(ctx_.to_save_);
  ctx_.to_save_.clear();
  // Forward's marks are used up: the dirty tensors would otherwise keep themselves and this node
  // alive (a dirty tensor's grad_fn is this node).
  ctx_.dirty_.clear();
  ctx_.dirty_tensors_.clear();
  ctx_.non_differentiable_.clear();
  if (!recording) return;
  std::lock_guard<std::mutex> lock(ctx_.mutex_);
  for (const Tensor& t : to_save) {
    const AutogradMeta* m = get_meta(t);
    ctx_.saved_.emplace_back(t, m && m->grad_fn.get() == this);  // Note [Saved tensors and cycles]
  }
}

variable_list CustomFunctionNode::apply(variable_list&& grads) {
  // One gradient per forward output, also for trailing undefined outputs; an undefined output's
  // gradient stays undefined, materialized or not (LibTorch).
  if (grads.size() < output_defined_.size()) grads.resize(output_defined_.size());
  if (ctx_.materialize_grads_) {
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined() && i < output_defined_.size() && output_defined_[i]) grads[i] = zeros_for_output(i);
  }
  variable_list out;
  try {
    out = fn_(&ctx_, std::move(grads));
  } catch (const Error&) {
    throw;  // the engine adds the node and device
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: backward threw {}: {}", name(), detail::demangle(typeid(e).name()), e.what()));
  }
  const size_t want = is_tensor_input_.size();
  // Extra trailing gradients are accepted when all undefined, as LibTorch.
  if (out.size() > want) {
    bool all_undefined = true;
    for (size_t i = want; i < out.size(); ++i) all_undefined = all_undefined && !out[i].defined();
    if (all_undefined) out.resize(want);
  }
  WICK_CHECK(out.size() == want,
             "{}: backward returned {} gradient(s), but forward takes {} argument(s), counting each element of a "
             "std::vector<Tensor> argument as one; return one per argument, an undefined Tensor() for a non-tensor "
             "argument or an input without gradient",
             name(), out.size(), want);
  variable_list result;
  result.reserve(ctx_.num_tensor_inputs_);
  for (size_t i = 0; i < want; ++i) {
    if (is_tensor_input_[i]) {
      result.push_back(std::move(out[i]));
      continue;
    }
    WICK_CHECK(!out[i].defined(),
               "{}: backward returned a defined gradient at position {}, but argument {} of forward is not a tensor; "
               "return an undefined Tensor() there",
               name(), i, i);
  }
  return result;
}

void CustomFunctionNode::release_variables() {
  std::lock_guard<std::mutex> lock(ctx_.mutex_);  // Note [Concurrent backward]
  for (SavedTensor& s : ctx_.saved_) s.reset();
  ctx_.freed_ = true;
}

std::vector<const SavedTensor*> CustomFunctionNode::saved_tensors() const {
  std::vector<const SavedTensor*> r;
  r.reserve(ctx_.saved_.size());
  for (const SavedTensor& s : ctx_.saved_) r.push_back(&s);
  return r;
}

}  // namespace wick::autograd
