#include "wick/autograd/saved_tensor.h"

#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::autograd {

SavedTensor::SavedTensor(const Tensor& t, bool is_output) : defined_(t.defined()), is_output_(is_output) {
  if (!defined_) return;
  version_ = t.version();
  if (is_output) {
    // Note [Saved tensors and cycles]
    data_ = native::alias(t);
    const AutogradMeta* m = get_meta(t);
    if (m && m->grad_fn) {
      weak_grad_fn_ = m->grad_fn;
      output_nr_ = m->output_nr;
      requires_grad_ = true;
    }
  } else {
    data_ = t;
  }
}

Tensor SavedTensor::unpack(const std::string& node) const {
  if (!defined_) return {};
  WICK_CHECK_STATE(!released_,
                   "{}: trying to backward through the graph a second time (or to use saved tensors after "
                   "they were freed). Pass retain_graph=true to the first backward if you need to backward twice.",
                   node);
  const uint32_t now = data_.version();
  WICK_CHECK_STATE(now == version_,
                   "{}: one of the tensors needed for gradient computation has been modified by an "
                   "in-place operation: a tensor of shape [{}] is at version {}; expected version {} instead. Use an "
                   "out-of-place op, or clone() the tensor before modifying it.",
                   node, fmt::join(data_.sizes(), ", "), now, version_);
  if (!is_output_ || !requires_grad_) return data_;
  std::shared_ptr<Node> fn = weak_grad_fn_.lock();
  if (!fn) return data_;
  Tensor t = native::alias(data_);
  AutogradMeta& m = ensure_meta(t);
  m.grad_fn = fn;
  m.output_nr = output_nr_;
  return t;
}

void SavedTensor::reset() {
  data_ = Tensor();
  released_ = true;
}

}  // namespace wick::autograd
