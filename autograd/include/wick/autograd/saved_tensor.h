#pragma once
// SavedTensor: a tensor kept for backward, with the version it had when saved.
//
// Note [Saved tensors and cycles]
// A node that saves one of its own outputs would own that output, whose grad_fn owns the node:
// a cycle. So an output is saved as a plain alias plus a weak reference to its grad_fn, and
// rebuilt with its history on unpack. Inputs are saved as they are (their grad_fn is an earlier
// node, never this one). Under saved-tensor hooks only what the pack hook returned is kept, with
// the tensor's autograd identity beside it (Note [Saved tensor hooks]).
#include <any>
#include <memory>
#include <string>
#include <vector>

#include "wick/autograd/node.h"
#include "wick/autograd/saved_tensors_hooks.h"

namespace wick::autograd {

class SavedTensor {
 public:
  SavedTensor() = default;
  /// Saves t; `is_output` must be true when t is an output of the node that saves it. Under
  /// saved-tensor hooks, keeps what the thread's pack hook returns instead of t (StateError when
  /// the hook modifies t in place).
  SavedTensor(const Tensor& t, bool is_output);
  /// The saved tensor, after checking it was not modified in place since it was saved; under
  /// hooks, what the unpack hook returns, with t's autograd identity (ValueError when its shape,
  /// dtype or device is not t's). `node` names the node for the error messages.
  Tensor unpack(const std::string& node) const;
  void reset();
  bool defined() const { return defined_; }
  /// True when the tensor was freed after a backward without retain_graph.
  bool released() const { return released_; }
  /// True when it was saved as an output of the node that saved it.
  bool is_output() const { return is_output_; }
  /// True when it was saved through saved-tensor hooks (peek() is then undefined).
  bool packed() const { return hooks_ != nullptr; }
  /// The saved data, without the version check or history (for inspection: to_dot); undefined
  /// once released, and when packed.
  const Tensor& peek() const { return data_; }

 private:
  void pack(const Tensor& t);
  Tensor unpack_packed(const std::string& node) const;

  Tensor data_;
  bool defined_ = false;
  bool is_output_ = false;
  bool released_ = false;
  uint32_t version_ = 0;
  bool requires_grad_ = false;
  std::weak_ptr<Node> weak_grad_fn_;
  uint32_t output_nr_ = 0;
  // Under hooks (Note [Saved tensor hooks]): the hooks, what pack returned, the tensor's
  // metadata that unpack's result is checked against, and for a saved input its gradient edge.
  std::shared_ptr<const SavedTensorHooks> hooks_;
  std::any packed_;
  std::vector<int64_t> sizes_;
  DType dtype_ = kFloat32;
  Device device_;
  Edge input_edge_;
};

}  // namespace wick::autograd
