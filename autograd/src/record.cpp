#include "wick/autograd/record.h"

#include "wick/core/error.h"

namespace wick::autograd {

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : inputs)
    if (requires_grad(*t)) return true;
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (requires_grad(t)) return true;
  return false;
}

// Note [Concurrent backward]
// Two backward() calls may run through one graph at once (losses that share a non-leaf
// subgraph, backpropagated from two threads). Each is its own graph task, so buffers and
// dependency counts are never shared; what is shared is the nodes. A FunctionNode's saved
// tensors are unpacked and released under its mutex: without retain_graph, the task that comes
// second gets the "second time" error instead of reading a tensor being freed. retain_grad
// entries and tensor pre-hooks are read as snapshots under hooks.cpp's mutex. Mirrored in
// docs/autograd.md ("Two backwards through one graph at once").
variable_list FunctionNode::apply(variable_list&& grads) {
  variable_list saved;
  saved.reserve(saved_.size());
  {
    // Note [Concurrent backward]: only the unpack is locked; fn_ works on the unpacked copies,
    // so two backwards through this node compute their gradients in parallel.
    std::lock_guard<std::mutex> lock(saved_mutex_);
    for (const SavedTensor& s : saved_) saved.push_back(s.unpack(name_));
  }
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = zeros_for_output(i);
  return fn_(grads, saved);
}

void FunctionNode::release_variables() {
  std::lock_guard<std::mutex> lock(saved_mutex_);
  for (SavedTensor& s : saved_) s.reset();
}

std::vector<const SavedTensor*> FunctionNode::saved_tensors() const {
  std::vector<const SavedTensor*> r;
  r.reserve(saved_.size());
  for (const SavedTensor& s : saved_) r.push_back(&s);
  return r;
}

std::shared_ptr<Node> record(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& outputs) {
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(requires_grad(t) ? gradient_edge(t) : Edge{});
  node->set_next_edges(std::move(edges));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].defined()) set_history(outputs[i], node, static_cast<uint32_t>(i));
  }
  return node;
}

void record_function(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                     FunctionNode::Backward fn, const std::vector<Tensor>& saved_inputs,
                     const std::vector<Tensor>& saved_outputs) {
  auto node = std::make_shared<FunctionNode>(name, std::move(fn));
  for (const Tensor& t : saved_inputs) node->save(t, false);
  record(node, inputs, outputs);  // set history before saving outputs (they need their grad_fn)
  for (const Tensor& t : saved_outputs) node->save(t, true);
}

}  // namespace wick::autograd
