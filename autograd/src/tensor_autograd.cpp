// Tensor's autograd methods (declared in core's tensor.h; Note [Two levels of ops]).
#include "view_tracking.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"

namespace wick {

using autograd::AutogradMeta;
using autograd::ensure_meta;
using autograd::get_meta;

bool Tensor::requires_grad() const { return autograd::requires_grad(*this); }

Tensor& Tensor::requires_grad_(bool r) {
  WICK_CHECK(defined(), "requires_grad_: the tensor is undefined");
  AutogradMeta* m = get_meta(*this);
  if (m && m->grad_fn) {
    WICK_CHECK_STATE(r,
                     "requires_grad_: a non-leaf tensor (output of {}) always requires grad; use detach() to get a "
                     "tensor that does not",
                     m->grad_fn->name());
    return *this;
  }
  WICK_CHECK_TYPE(!r || is_floating(dtype()),
                  "requires_grad_: only floating-point tensors can require gradients, but this "
                  "tensor is {}",
                  dtype());
  if (!r && !m) return *this;
  ensure_meta(*this).requires_grad = r;
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  AutogradMeta* m = get_meta(*this);
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() { return ensure_meta(*this).grad; }

void Tensor::set_grad(const Tensor& g) {
  if (g.defined()) {
    WICK_CHECK(g.sizes() == sizes() && g.device() == device(),
               "set_grad: the gradient has shape [{}] on {} but the "
               "tensor has shape [{}] on {}",
               fmt::join(g.sizes(), ", "), g.device(), fmt::join(sizes(), ", "), device());
    WICK_CHECK_TYPE(g.dtype() == dtype(), "set_grad: the gradient is {} but the tensor is {}; convert it with .to({})",
                    g.dtype(), dtype(), dtype());
  }
  ensure_meta(*this).grad = g;
}

void Tensor::set_data(const Tensor& data) {
  WICK_CHECK(defined() && data.defined(), "set_data: both the tensor and the new data must be defined (got {} and {})",
             defined() ? "a tensor" : "an undefined tensor", data.defined() ? "a tensor" : "an undefined tensor");
  AutogradMeta* m = get_meta(*this);
  WICK_CHECK_STATE(!m || !m->grad_fn,
                   "set_data: only a leaf's data can be replaced, but this tensor is the output of {}; replace the "
                   "data of the leaf it was computed from",
                   m && m->grad_fn ? m->grad_fn->name() : "");
  WICK_CHECK_TYPE(!(m && m->requires_grad) || is_floating(data.dtype()),
                  "set_data: this tensor requires grad, so its data must be floating-point, but the new data is {}",
                  data.dtype());
  if (data.is_same(*this)) return;
  auto counter = std::make_shared<VersionCounter>();
  TensorImpl& self = *impl();
  const TensorImpl& src = *data.impl();
  counter->value.store(self.version().value.load() + 1);
  self.storage = src.storage;
  self.offset = src.offset;
  self.sizes = src.sizes;
  self.strides = src.strides;
  self.dtype = src.dtype;
  self.own_version = std::move(counter);
  if (m) {
    std::lock_guard<std::mutex> lock(m->mutex);
    m->grad_accumulator.reset();  // its recorded metadata described the old data
  }
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  AutogradMeta* m = autograd::detail::fresh_meta(*this);  // Note [Views and in-place ops]
  return m ? m->grad_fn : nullptr;
}

bool Tensor::is_leaf() const {
  AutogradMeta* m = autograd::detail::fresh_meta(*this);  // Note [Views and in-place ops]
  return !m || !m->grad_fn;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{}, retain_graph,
                     create_graph);
}

Tensor Tensor::detach() const {
  WICK_CHECK(defined(), "detach: the tensor is undefined (default-constructed); there is nothing to detach");
  return native::alias(*this);
}

Tensor& Tensor::detach_() {
  AutogradMeta* m = get_meta(*this);
  // A view detached in place would stop following its base, and a later in-place op on it would
  // change the base's values without its history (PyTorch refuses too).
  WICK_CHECK_STATE(!(m && m->is_view),
                   "detach_: this tensor is a view of another; a view cannot be detached in "
                   "place. Use detach(), which returns a new tensor");
  if (m) {
    m->grad_fn.reset();
    m->requires_grad = false;
    m->output_nr = 0;
    m->is_view = false;  // no longer follows its base's history
    m->view_base = Tensor();
  }
  return *this;
}

void Tensor::retain_grad() const {
  AutogradMeta* m = autograd::detail::fresh_meta(*this);  // Note [Views and in-place ops]
  WICK_CHECK_STATE(m && (m->grad_fn || m->requires_grad), "retain_grad: the tensor does not require grad");
  if (!m->grad_fn || m->retains_grad) return;
  m->retains_grad = true;
  m->grad_fn->retain_grad_of(m->output_nr, *this);
}

}  // namespace wick
