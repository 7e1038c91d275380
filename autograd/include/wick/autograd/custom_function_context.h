#pragma once
// AutogradContext: what a custom function's forward leaves for its backward (Note [Custom
// functions] in custom_function.h; docs/autograd.md, "Custom functions").
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "wick/autograd/saved_tensor.h"

namespace wick::autograd {

using tensor_list = std::vector<Tensor>;

/// One entry of AutogradContext::saved_data. LibTorch stores a c10::IValue there; wick has no
/// IValue in autograd (nn's Value sits a layer above), so this is a small variant with the
/// IValue accessors a backward uses (toInt, toDouble, toTensor, ...). A wrong accessor is a
/// TypeError naming the held type. A tensor kept here is kept as it is: no version check (use
/// save_for_backward for that), as in LibTorch.
class SavedValue {
 public:
  using Variant = std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, std::vector<int64_t>,
                               std::vector<double>, std::vector<Tensor>>;
  SavedValue() = default;
  SavedValue(bool v) : v_(v) {}
  SavedValue(int v) : v_(static_cast<int64_t>(v)) {}
  SavedValue(int64_t v) : v_(v) {}
  SavedValue(double v) : v_(v) {}
  SavedValue(std::string v) : v_(std::move(v)) {}
  SavedValue(const char* v) : v_(std::string(v)) {}
  SavedValue(Tensor v) : v_(std::move(v)) {}
  SavedValue(std::vector<int64_t> v) : v_(std::move(v)) {}
  SavedValue(std::vector<double> v) : v_(std::move(v)) {}
  SavedValue(std::vector<Tensor> v) : v_(std::move(v)) {}

  bool isNone() const { return std::holds_alternative<std::monostate>(v_); }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  /// The held value; TypeError when another type is held.
  bool toBool() const;
  int64_t toInt() const;
  /// A double, or an int converted (as IValue::toDouble does not; convenient for scalars).
  double toDouble() const;
  const std::string& toStringRef() const;
  Tensor toTensor() const;
  std::vector<int64_t> toIntVector() const;
  std::vector<double> toDoubleVector() const;
  std::vector<Tensor> toTensorVector() const;
  /// The name of the held type ("int", "Tensor", "None", ...).
  const char* type_name() const;
  const Variant& variant() const { return v_; }

 private:
  Variant v_;
};

class CustomFunctionNode;

/// The `ctx` a custom function's forward and backward receive (LibTorch's AutogradContext).
struct AutogradContext {
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  /// Non-tensor state for backward, by name.
  std::unordered_map<std::string, SavedValue> saved_data;

  /// Saves tensors (inputs or outputs of forward) for backward. They are kept with their
  /// version, so modifying one in place before backward makes get_saved_variables() raise.
  /// Call from forward; a call made when no node is recorded keeps nothing.
  void save_for_backward(variable_list to_save);
  /// Marks inputs that forward modified in place. Each must be returned as an output; its
  /// version is bumped and its grad_fn becomes this function's node. When the node is recorded,
  /// a leaf that requires grad, a view made under NoGradGuard and a view of another tensor are
  /// refused after forward (Note [Custom functions]).
  void mark_dirty(const variable_list& inputs);
  /// Marks outputs that get no gradient: they do not require grad, and backward receives an
  /// undefined (or, with materialize_grads, zero) gradient for them. Integer outputs are
  /// non-differentiable without being marked.
  void mark_non_differentiable(const variable_list& outputs);
  /// Whether backward receives zeros for outputs whose gradient is undefined (default true).
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  /// The saved tensors, in save order, each checked against in-place modification since it was
  /// saved. StateError after a backward that did not retain the graph, or after such a change.
  variable_list get_saved_variables() const;
  /// True when the gradient of the tensor input at `output_edge_index` (counting tensor
  /// arguments only, as LibTorch) is needed: the input requires grad, and the backward running
  /// now (autograd::grad) uses it.
  bool needs_input_grad(size_t output_edge_index) const;

 private:
  friend class CustomFunctionNode;
  friend struct CustomFunctionAccess;
  std::string name_;
  std::weak_ptr<Node> grad_fn_;
  bool recording_ = false;
  size_t num_tensor_inputs_ = 0;
  bool materialize_grads_ = true;
  bool freed_ = false;
  variable_list to_save_;
  std::unordered_set<const TensorImpl*> dirty_;
  std::vector<Tensor> dirty_tensors_;
  std::unordered_set<const TensorImpl*> non_differentiable_;
  std::vector<SavedTensor> saved_;
  mutable std::mutex mutex_;  // guards saved_ and freed_ (Note [Concurrent backward])
};

}  // namespace wick::autograd
