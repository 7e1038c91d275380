#pragma once
// Recording helpers used by the op definitions (autograd/src/ops_*.cpp) and by other layers
// that define their own differentiable functions (nn's conv2d, parallel's Broadcast).
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "wick/autograd/grad_mode.h"
#include "wick/autograd/meta.h"
#include "wick/autograd/saved_tensor.h"

namespace wick::autograd {

/// True when grad mode is on and any defined input requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

/// A node whose backward is a function of the incoming gradients and the saved tensors.
/// apply and release_variables may run at once on two threads (two backwards through one
/// graph): the saved tensors are read and freed under a per-node mutex (Note [Concurrent
/// backward]).
class FunctionNode final : public Node {
 public:
  using Backward = std::function<variable_list(const variable_list& grads, const variable_list& saved)>;
  FunctionNode(std::string name, Backward fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return name_; }
  void release_variables() override;
  void save(const Tensor& t, bool is_output) { saved_.emplace_back(t, is_output); }
  std::vector<const SavedTensor*> saved_tensors() const override;

 private:
  std::string name_;
  Backward fn_;
  std::vector<SavedTensor> saved_;
  mutable std::mutex saved_mutex_;  // guards saved_ against release during another task's unpack
};

/// Records `node` as the grad_fn of `outputs`, with edges to `inputs` (in the order the node's
/// apply returns their gradients). Returns the node.
std::shared_ptr<Node> record(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& outputs);

/// Convenience: records a FunctionNode named `name` with backward `fn`; `saved_inputs` are
/// saved as inputs, `saved_outputs` as outputs (fn sees saved_inputs then saved_outputs).
void record_function(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                     FunctionNode::Backward fn, const std::vector<Tensor>& saved_inputs = {},
                     const std::vector<Tensor>& saved_outputs = {});

}  // namespace wick::autograd
