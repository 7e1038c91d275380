#pragma once
// SavedTensor: a tensor kept for backward, with the version it had when saved.
//
// Note [Saved tensors and cycles]
// A node that saves one of its own outputs would own that output, whose grad_fn owns the node:
// a cycle. So an output is saved as a plain alias plus a weak reference to its grad_fn, and
// rebuilt with its history on unpack. Inputs are saved as they are (their grad_fn is an earlier
// node, never this one).
#include <memory>
#include <string>

#include "wick/autograd/node.h"

namespace wick::autograd {

class SavedTensor {
 public:
  SavedTensor() = default;
  /// Saves t; `is_output` must be true when t is an output of the node that saves it.
  SavedTensor(const Tensor& t, bool is_output);
  /// The saved tensor, after checking it was not modified in place since it was saved.
  /// `node` names the node for the error message.
  Tensor unpack(const std::string& node) const;
  void reset();
  bool defined() const { return defined_; }
  /// True when the tensor was freed after a backward without retain_graph.
  bool released() const { return released_; }
  /// True when it was saved as an output of the node that saved it.
  bool is_output() const { return is_output_; }
  /// The saved data, without the version check or history (for inspection: to_dot); undefined
  /// once released.
  const Tensor& peek() const { return data_; }

 private:
  Tensor data_;
  bool defined_ = false;
  bool is_output_ = false;
  bool released_ = false;
  uint32_t version_ = 0;
  bool requires_grad_ = false;
  std::weak_ptr<Node> weak_grad_fn_;
  uint32_t output_nr_ = 0;
};

}  // namespace wick::autograd
