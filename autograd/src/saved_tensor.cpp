#include "wick/autograd/saved_tensor.h"

#include "wick/autograd/grad_mode.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::autograd {

namespace {
// An unpacked tensor with its history back: `fn` as its grad_fn.
Tensor with_history(Tensor t, std::shared_ptr<Node> fn, uint32_t output_nr) {
  AutogradMeta& m = ensure_meta(t);
  m.grad_fn = std::move(fn);
  m.output_nr = output_nr;
  return t;
}
}  // namespace

SavedTensor::SavedTensor(const Tensor& t, bool is_output) : defined_(t.defined()), is_output_(is_output) {
  if (!defined_) return;
  version_ = t.version();
  if (is_output) {
    // Note [Saved tensors and cycles]: the node is kept weakly, also under hooks.
    const AutogradMeta* m = get_meta(t);
    if (m && m->grad_fn) {
      weak_grad_fn_ = m->grad_fn;
      output_nr_ = m->output_nr;
      requires_grad_ = true;
    }
  }
  if ((hooks_ = current_saved_tensors_hooks())) {
    pack(t);
    return;
  }
  data_ = is_output ? native::alias(t) : t;
}

// Note [Saved tensor hooks]: keeps what the pack hook returns, and what unpack needs to give its
// result t's autograd identity back: an output's grad_fn weakly (Note [Saved tensors and
// cycles]), an input's gradient edge (its grad_fn, or a leaf's accumulator, which holds the leaf
// only weakly).
void SavedTensor::pack(const Tensor& t) {
  sizes_.assign(t.sizes().begin(), t.sizes().end());
  dtype_ = t.dtype();
  device_ = t.device();
  if (!is_output_ && requires_grad(t)) {
    input_edge_ = gradient_edge(t);
    requires_grad_ = true;
  }
  {
    NoGradGuard no_grad;
    packed_ = hooks_->pack(native::alias(t));
  }
  WICK_CHECK_STATE(t.version() == version_,
                   "saved_tensors_hooks: the pack hook modified the tensor it was given in place (a tensor of shape "
                   "[{}], version {} before the hook and {} after); a pack hook must not modify its input: return a "
                   "modified copy instead",
                   fmt::join(t.sizes(), ", "), version_, t.version());
}

Tensor SavedTensor::unpack_packed(const std::string& node) const {
  Tensor data = hooks_->unpack(packed_);
  WICK_CHECK(
      data.defined() && data.sizes() == IntArrayRef(sizes_) && data.dtype() == dtype_ && data.device() == device_,
      "{}: the saved tensor unpack hook returned {} for a tensor saved as [{}] {} on {}; an unpack hook must "
      "return a tensor of the saved tensor's shape, dtype and device",
      node,
      data.defined() ? fmt::format("[{}] {} on {}", fmt::join(data.sizes(), ", "), data.dtype(), data.device())
                     : std::string("an undefined tensor"),
      fmt::join(sizes_, ", "), dtype_, device_);
  Tensor t = native::alias(data);
  if (!requires_grad_) return t;
  if (is_output_) {
    std::shared_ptr<Node> fn = weak_grad_fn_.lock();
    return fn ? with_history(std::move(t), std::move(fn), output_nr_) : t;
  }
  if (!dynamic_cast<const AccumulateGrad*>(input_edge_.function.get()))
    return with_history(std::move(t), input_edge_.function, input_edge_.input_nr);
  AutogradMeta& m = ensure_meta(t);  // a leaf: its accumulator, the leaf itself held weakly
  m.requires_grad = true;
  m.grad_accumulator = input_edge_.function;
  return t;
}

Tensor SavedTensor::unpack(const std::string& node) const {
  if (!defined_) return {};
  WICK_CHECK_STATE(!released_,
                   "{}: trying to backward through the graph a second time (or to use saved tensors after "
                   "they were freed). Pass retain_graph=true to the first backward if you need to backward twice.",
                   node);
  if (hooks_) return unpack_packed(node);
  const uint32_t now = data_.version();
  WICK_CHECK_STATE(now == version_,
                   "{}: one of the tensors needed for gradient computation has been modified by an "
                   "in-place operation: a tensor of shape [{}] is at version {}; expected version {} instead. Use an "
                   "out-of-place op, or clone() the tensor before modifying it.",
                   node, fmt::join(data_.sizes(), ", "), now, version_);
  if (!is_output_ || !requires_grad_) return data_;
  std::shared_ptr<Node> fn = weak_grad_fn_.lock();
  return fn ? with_history(native::alias(data_), std::move(fn), output_nr_) : data_;
}

void SavedTensor::reset() {
  data_ = Tensor();
  packed_.reset();
  input_edge_ = Edge{};
  released_ = true;
}

}  // namespace wick::autograd
