#pragma once
// Node: one backward function in the graph. Edges point from a node to the nodes that produced
// its forward inputs (next_edges); input_nr selects which of that node's forward outputs.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::autograd {

class Node;
class SavedTensor;
class AnomalyMetadata;
using variable_list = std::vector<Tensor>;

struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

/// Shape, dtype and device of one forward output; lets a node make zeros for a missing gradient.
struct OutputMeta {
  DimVector sizes;
  DType dtype = kFloat32;
  Device device;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Maps the gradients of this node's forward outputs (one per output; an undefined tensor
  /// means zero) to the gradients of its forward inputs (one per next edge).
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const = 0;
  /// Frees saved tensors after a backward that did not retain the graph.
  virtual void release_variables() {}
  /// The tensors this node saved for backward, for inspection (autograd::to_dot); empty by
  /// default. Pointers stay valid while the node lives.
  virtual std::vector<const SavedTensor*> saved_tensors() const { return {}; }
  /// True for the node of a view op: its gradient flows to the tensor whose memory the output
  /// views (to_dot draws that edge dashed). Set by the view ops.
  bool creates_view() const { return creates_view_; }
  /// Where the node was created, when it was created in anomaly mode (Note [Anomaly mode]).
  const std::shared_ptr<const AnomalyMetadata>& anomaly_metadata() const { return anomaly_; }
  void set_anomaly_metadata(std::shared_ptr<const AnomalyMetadata> m) { anomaly_ = std::move(m); }
  /// The tracer's flow open when the node was created (a replica's forward; 0: none), which the
  /// engine finishes when it runs the node (Note [Tracer] in wick/core/trace.h).
  uint64_t trace_flow() const { return trace_flow_; }
  void set_creates_view(bool v) { creates_view_ = v; }

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  void set_next_edges(std::vector<Edge> e) { next_edges_ = std::move(e); }
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }
  uint64_t sequence_nr() const { return sequence_nr_; }
  size_t num_outputs() const { return outputs_.size(); }
  /// Records the metadata of forward output i (set when the output's history is set).
  void set_output_meta(size_t i, const Tensor& t);
  const OutputMeta& output_meta(size_t i) const { return outputs_.at(i); }
  /// Zeros shaped like forward output i.
  Tensor zeros_for_output(size_t i) const;
  /// The device backward runs on (that of output 0).
  Device device() const { return outputs_.empty() ? kCPU : outputs_[0].device; }
  /// Asks the engine to store the gradient of forward output `output_nr` into `t`'s .grad
  /// (Tensor::retain_grad on a non-leaf). Thread-safe (hooks.cpp).
  void retain_grad_of(uint32_t output_nr, const Tensor& t);
  /// Drops the retain_grad_of entries of the tensor `impl` (its history moved to another node).
  /// Thread-safe.
  void forget_retained(const TensorImpl* impl);
  using RetainedGrad = std::pair<uint32_t, std::weak_ptr<TensorImpl>>;
  /// A snapshot of the retain_grad_of entries (empty without taking a lock when none), so a
  /// backward may run while another thread calls retain_grad (Note [Concurrent backward]).
  std::vector<RetainedGrad> retained() const;

  /// A hook on the gradient of forward output `output_nr` (Tensor::register_hook on a non-leaf).
  struct TensorPreHook {
    uint64_t id;
    uint32_t output_nr;
    std::function<Tensor(const Tensor&)> fn;
  };
  /// Adds a hook; returns its id (hooks.cpp). Thread-safe.
  uint64_t add_tensor_pre_hook(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn);
  /// Removes the hook with this id, if still there. Thread-safe.
  void remove_tensor_pre_hook(uint64_t id);
  /// A snapshot of the hooks in registration order (empty without taking a lock when none).
  std::vector<TensorPreHook> tensor_pre_hooks() const;

 private:
  std::vector<TensorPreHook> pre_hooks_;  // guarded by hooks.cpp's mutex
  std::atomic<bool> has_pre_hooks_{false};
  std::vector<RetainedGrad> retained_;  // guarded by hooks.cpp's mutex
  std::atomic<bool> has_retained_{false};
  std::vector<Edge> next_edges_;
  std::vector<OutputMeta> outputs_;
  uint64_t sequence_nr_;
  bool creates_view_ = false;
  std::shared_ptr<const AnomalyMetadata> anomaly_;
  uint64_t trace_flow_ = 0;
};

/// Accumulates incoming gradients into a leaf tensor's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  /// The leaf (its TensorImpl is kept alive only weakly).
  Tensor variable() const;

 private:
  std::weak_ptr<TensorImpl> leaf_;
};

}  // namespace wick::autograd
