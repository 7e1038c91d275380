#pragma once
// AutogradMeta: the per-tensor autograd state that TensorImpl holds opaquely.
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "wick/autograd/node.h"

namespace wick::autograd {

struct AutogradMeta final : AutogradMetaBase {
  bool requires_grad = false;  ///< set by the user on leaves
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  ///< null for leaves
  uint32_t output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;
  bool retains_grad = false;
  bool is_view = false;  ///< output of a view op made in grad mode
  /// For a view: the tensor whose memory it views (never itself a view), and the shared version
  /// counter's value when grad_fn was last derived; a newer version means an in-place op changed
  /// the base's history, and grad_fn is derived again (Note [Views and in-place ops]).
  Tensor view_base;
  uint32_t view_version = 0;
  /// A leaf's gradient hooks and post-accumulate-grad hooks, in registration order, with ids
  /// (Note [Gradient hooks]); guarded by `mutex`.
  std::vector<std::pair<uint64_t, std::function<Tensor(const Tensor&)>>> hooks;
  std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> post_accumulate_grad_hooks;
  std::mutex mutex;  ///< guards grad_accumulator creation, grad accumulation and the hooks
};

/// The tensor's meta, or nullptr.
AutogradMeta* get_meta(const Tensor& t);
/// The tensor's meta, created when missing.
AutogradMeta& ensure_meta(const Tensor& t);
/// True when t is defined and requires grad (a leaf with requires_grad, or has a grad_fn).
bool requires_grad(const Tensor& t);
/// The edge gradients of t flow into: its grad_fn, or its leaf accumulator; invalid otherwise.
Edge gradient_edge(const Tensor& t);
/// Makes `node` the grad_fn of `t` (output `output_nr` of the node).
void set_history(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr);

}  // namespace wick::autograd
