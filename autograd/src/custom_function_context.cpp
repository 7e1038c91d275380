// AutogradContext and SavedValue (custom_function_context.h; Note [Custom functions]).
#include "wick/autograd/custom_function_context.h"

#include "wick/autograd/engine.h"
#include "wick/core/error.h"

namespace wick::autograd {

namespace {
template <class V>
const V& get_as(const SavedValue& s, const char* want) {
  const V* v = std::get_if<V>(&s.variant());
  WICK_CHECK_TYPE(v != nullptr, "saved_data: the value holds {}, not {}; read it with the accessor of its type",
                  s.type_name(), want);
  return *v;
}
}  // namespace

bool SavedValue::toBool() const { return get_as<bool>(*this, "bool"); }
int64_t SavedValue::toInt() const { return get_as<int64_t>(*this, "int"); }
double SavedValue::toDouble() const {
  if (isInt()) return static_cast<double>(std::get<int64_t>(v_));
  return get_as<double>(*this, "double");
}
const std::string& SavedValue::toStringRef() const { return get_as<std::string>(*this, "string"); }
Tensor SavedValue::toTensor() const { return get_as<Tensor>(*this, "Tensor"); }
std::vector<int64_t> SavedValue::toIntVector() const { return get_as<std::vector<int64_t>>(*this, "int list"); }
std::vector<double> SavedValue::toDoubleVector() const { return get_as<std::vector<double>>(*this, "double list"); }
std::vector<Tensor> SavedValue::toTensorVector() const { return get_as<std::vector<Tensor>>(*this, "Tensor list"); }

const char* SavedValue::type_name() const {
  static constexpr const char* names[] = {"None",   "bool",     "int",         "double",     "string",
                                          "Tensor", "int list", "double list", "Tensor list"};
  return names[v_.index()];
}

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_dirty(const variable_list& inputs) {
  dirty_.clear();
  dirty_tensors_.clear();
  for (const Tensor& t : inputs) {
    WICK_CHECK(t.defined(), "{}: mark_dirty was given an undefined tensor", name_);
    if (dirty_.insert(t.impl()).second) dirty_tensors_.push_back(t);
  }
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_.clear();
  for (const Tensor& t : outputs)
    if (t.defined()) non_differentiable_.insert(t.impl());
}

variable_list AutogradContext::get_saved_variables() const {
  std::lock_guard<std::mutex> lock(mutex_);  // Note [Concurrent backward]
  WICK_CHECK_STATE(!freed_,
                   "{}: trying to backward through the graph a second time (or to use saved tensors after they were "
                   "freed). Pass retain_graph=true to the first backward if you need to backward twice.",
                   name_);
  variable_list r;
  r.reserve(saved_.size());
  for (const SavedTensor& s : saved_) r.push_back(s.unpack(name_));
  return r;
}

bool AutogradContext::needs_input_grad(size_t output_edge_index) const {
  const std::shared_ptr<Node> node = grad_fn_.lock();
  const size_t n = node && recording_ ? node->next_edges().size() : num_tensor_inputs_;
  WICK_CHECK_INDEX(output_edge_index < n,
                   "{}: needs_input_grad({}) is out of range: forward has {} tensor argument(s), and the index "
                   "counts tensor arguments only",
                   name_, output_edge_index, n);
  if (!node || !recording_) return false;
  return task_should_compute(node->next_edges()[output_edge_index]);
}

}  // namespace wick::autograd
