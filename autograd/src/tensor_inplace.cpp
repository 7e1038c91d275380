// In-place ops.
//
// Note [In-place ops]
// Without gradient recording an in-place op is the native kernel plus a version bump. When grad
// is recorded, the op runs out of place on a snapshot (a differentiable clone, so saved tensors
// never see the later write), the result is copied into the tensor, and the tensor's history is
// rebased onto the new node. On a view, the base's history is rebased instead (Note [Views and
// in-place ops] in view_tracking.h). Refused, as in PyTorch: a leaf that requires grad (use
// NoGradGuard for parameter updates), a view of one, a view whose elements overlap, and a view
// made under NoGradGuard (or a custom function's output sharing memory with its input) when the
// op would be recorded.
#include "alpha_fit.h"
#include "inplace_apply.h"
#include "op_helpers.h"
#include "view_tracking.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick {

using namespace detail;

namespace {
// `extra_rg`: another operand (lerp_'s weight) requires grad, so the op is recorded as well.
bool check_inplace(const Tensor& self, const Tensor* other, const char* op, bool extra_rg = false) {
  WICK_CHECK(self.defined(), "{}: the tensor is undefined", op);
  if (!GradMode::is_enabled()) return false;
  autograd::AutogradMeta* m = autograd::get_meta(self);
  const bool self_rg = self.requires_grad();
  WICK_CHECK_STATE(!(m && m->requires_grad && !m->grad_fn),
                   "{}: a leaf tensor that requires grad is being used in an "
                   "in-place operation; do the update under wick::NoGradGuard, or clone() the tensor first",
                   op);
  const bool other_rg = other && other->requires_grad();
  if (!self_rg && !other_rg && !extra_rg) return false;
  autograd::detail::check_untracked_view(self, op);
  if (m && m->is_view && m->view_base.defined()) {
    const autograd::AutogradMeta* bm = autograd::get_meta(m->view_base);
    WICK_CHECK_STATE(!(bm && bm->requires_grad && !bm->grad_fn),
                     "{}: a view of a leaf tensor that requires grad is being "
                     "used in an in-place operation; do the update under wick::NoGradGuard, or clone() the leaf first",
                     op);
  }
  return true;
}

// A recorded in-place op computes its result out of place and writes it back. As native::binary_
// refuses unrecorded, a result whose dtype cannot be written into self without truncating is
// refused before anything is written (int64.add_(a float tensor that requires grad); PyTorch:
// "result type Float can't be cast to the desired output type Long").
void check_result_fits(const char* op, const Tensor& self, const Tensor& r) {
  WICK_CHECK_TYPE(can_cast(r.dtype(), self.dtype()),
                  "{}: the result type {} cannot be written in place into a {} tensor of shape [{}]; compute it out "
                  "of place, or convert the tensor first",
                  op, r.dtype(), self.dtype(), fmt::join(self.sizes(), ", "));
}

// An operand of an in-place op that shares memory with the target (`a.mul_(a)`, `a.add_(a.t())`)
// would be saved for backward and then overwritten by the write-back, failing the saved-tensor
// version check (PyTorch raises there). The snapshot design lets wick do better: such an operand
// is replaced by a differentiable clone taken before the write, so the gradient is correct.
Tensor unaliased(const Tensor& other, const Tensor& self) {
  return other.impl()->storage == self.impl()->storage ? clone(other) : other;
}

// An in-place op on a view: the write goes through the view, and the base gets a CopySlices
// node joining its old history (gradient zero at the view's positions) and the result r (the
// gradient at those positions). The view derives its grad_fn from that next time it is used.
template <typename F>
Tensor& inplace_on_view(Tensor& self, const char* op, autograd::AutogradMeta& m, F&& fn) {
  const Tensor base = m.view_base;
  bool overlapping = false;
  const Tensor idx = autograd::detail::view_positions(base, self, &overlapping);
  WICK_CHECK(!overlapping,
             "in-place op on a view of shape [{}] whose elements share memory (e.g. from expand): "
             "more than one element would be written at one location; clone() the view first",
             fmt::join(self.sizes(), ", "));
  Tensor snapshot = clone(self);  // derives the view's grad_fn first if it is stale
  Tensor r = fn(snapshot);
  check_result_fits(op, self, r);
  native::copy_(self, r);
  if (!autograd::requires_grad(r) && !autograd::requires_grad(base)) return self;
  // 1 where the base keeps its old values, 0 at the view's positions.
  const int64_t n = base.numel();
  const Tensor hit = native::scatter_add(native::zeros({n}, base.dtype(), base.device()), 0, idx,
                                         native::ones({idx.numel()}, base.dtype(), base.device()));
  const Tensor keep = native::binary(BinaryOp::Sub, native::ones({n}, base.dtype(), base.device()), hit);
  const DimVector base_shape(base.sizes()), view_shape(self.sizes());
  const DType r_dtype = r.dtype();
  record_function("CopySlices", {base, r}, {base},
                  [idx, keep, base_shape, view_shape, r_dtype](const VL& g, const VL&) -> VL {
                    Tensor flat = reshape(g[0], {-1});
                    Tensor g_base = reshape(mul(flat, keep), base_shape);
                    Tensor g_r = reshape(gather(flat, 0, idx), view_shape);
                    if (g_r.dtype() != r_dtype) g_r = to(g_r, g_r.device(), r_dtype);
                    return {g_base, g_r};
                  });
  return self;
}

// Runs `fn(snapshot)` out of place, writes the result into self, and rebases self's history.
template <typename F>
Tensor& inplace_with_grad(Tensor& self, const char* op, F&& fn) {
  if (autograd::AutogradMeta* vm = autograd::get_meta(self); vm && vm->is_view && vm->view_base.defined())
    return inplace_on_view(self, op, *vm, std::forward<F>(fn));
  Tensor snapshot = clone(self);
  Tensor r = fn(snapshot);
  check_result_fits(op, self, r);
  native::copy_(self, r);
  autograd::AutogradMeta& m = autograd::ensure_meta(self);
  autograd::AutogradMeta* rm = autograd::get_meta(r);
  std::shared_ptr<autograd::Node> old = std::move(m.grad_fn);
  m.grad_fn = rm ? rm->grad_fn : nullptr;
  m.output_nr = rm ? rm->output_nr : 0;
  autograd::detail::follow_retained_grad(self, m, old);
  return self;
}

// floor_, tan_, remainder_, ...: f(self, other)'s result written into self, recorded as above.
// Refused before anything is written: an operand that would broadcast self to another shape,
// and a result dtype self cannot hold (tan_ of an integer tensor), as PyTorch.
template <typename F>
Tensor& inplace_op(Tensor& self, const Tensor* other, const char* op, F&& f, bool extra_rg = false) {
  WICK_CHECK(self.defined() && (!other || other->defined()), "{}: an operand is an undefined tensor", op);
  if (other) {
    const DimVector shape = native::broadcast_shapes(self.sizes(), other->sizes(), op);
    WICK_CHECK(IntArrayRef(shape) == self.sizes(),
               "{}: the operand of shape [{}] would broadcast the tensor of shape [{}] to [{}], and an in-place op "
               "keeps the tensor's shape; use the out-of-place op",
               op, fmt::join(other->sizes(), ", "), fmt::join(self.sizes(), ", "), fmt::join(shape, ", "));
  }
  if (check_inplace(self, other, op, extra_rg)) {
    const Tensor o2 = other ? unaliased(*other, self) : Tensor();
    return inplace_with_grad(self, op, [&](const Tensor& s) { return f(s, o2); });
  }
  const Tensor r = f(self, other ? *other : Tensor());
  check_result_fits(op, self, r);
  native::copy_(self, r);
  return self;
}
template <Tensor (*Fn)(const Tensor&)>
Tensor& inplace_unary(Tensor& self, const char* op) {
  return inplace_op(self, nullptr, op, [](const Tensor& s, const Tensor&) { return Fn(s); });
}
template <Tensor (*Fn)(const Tensor&, const Tensor&)>
Tensor& inplace_binary(Tensor& self, const Tensor& o, const char* op) {
  return inplace_op(self, &o, op, [](const Tensor& s, const Tensor& b) { return Fn(s, b); });
}
template <Tensor (*Fn)(const Tensor&, Scalar)>
Tensor& inplace_scalar(Tensor& self, Scalar o, const char* op) {
  return inplace_op(self, nullptr, op, [o](const Tensor& s, const Tensor&) { return Fn(s, o); });
}
}  // namespace

Tensor& Tensor::add_(const Tensor& o, Scalar alpha) {
  check_alpha_fits("add_", *this, o, alpha);
  if (check_inplace(*this, &o, "add_")) {
    const Tensor o2 = unaliased(o, *this);
    return inplace_with_grad(*this, "add_", [&](const Tensor& s) { return wick::add(s, o2, alpha); });
  }
  const bool unit = !alpha.is_floating() && alpha.to_int() == 1;
  native::binary_(BinaryOp::Add, *this, unit ? o : native::binary(BinaryOp::Mul, o, alpha));
  return *this;
}
Tensor& Tensor::add_(Scalar o) {
  if (check_inplace(*this, nullptr, "add_"))
    return inplace_with_grad(*this, "add_", [&](const Tensor& s) { return s.add(o); });
  // The Scalar takes part in promotion (it used to be cast to this tensor's dtype first, so an
  // int64 tensor's mul_(2.5) silently multiplied by 2); binary_ then refuses what can't be cast.
  native::binary_(BinaryOp::Add, *this, o);
  return *this;
}
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha) {
  check_alpha_fits("sub_", *this, o, alpha);
  if (check_inplace(*this, &o, "sub_")) {
    const Tensor o2 = unaliased(o, *this);
    return inplace_with_grad(*this, "sub_", [&](const Tensor& s) { return wick::sub(s, o2, alpha); });
  }
  const bool unit = !alpha.is_floating() && alpha.to_int() == 1;
  native::binary_(BinaryOp::Sub, *this, unit ? o : native::binary(BinaryOp::Mul, o, alpha));
  return *this;
}
Tensor& Tensor::mul_(const Tensor& o) {
  if (check_inplace(*this, &o, "mul_")) {
    const Tensor o2 = unaliased(o, *this);
    return inplace_with_grad(*this, "mul_", [&](const Tensor& s) { return wick::mul(s, o2); });
  }
  native::binary_(BinaryOp::Mul, *this, o);
  return *this;
}
Tensor& Tensor::mul_(Scalar o) {
  if (check_inplace(*this, nullptr, "mul_"))
    return inplace_with_grad(*this, "mul_", [&](const Tensor& s) { return s.mul(o); });
  native::binary_(BinaryOp::Mul, *this, o);
  return *this;
}
Tensor& Tensor::div_(const Tensor& o) {
  if (check_inplace(*this, &o, "div_")) {
    const Tensor o2 = unaliased(o, *this);
    return inplace_with_grad(*this, "div_", [&](const Tensor& s) { return wick::div(s, o2); });
  }
  native::binary_(BinaryOp::Div, *this, o);
  return *this;
}
Tensor& Tensor::div_(Scalar o) {
  if (check_inplace(*this, nullptr, "div_"))
    return inplace_with_grad(*this, "div_", [&](const Tensor& s) { return s.div(o); });
  native::binary_(BinaryOp::Div, *this, o);
  return *this;
}
Tensor& Tensor::zero_() { return fill_(0); }
Tensor& Tensor::fill_(Scalar v) {
  if (defined()) check_scalar_fits("fill_", "value", v, dtype(), sizes());  // Note [Scalar fits dtype]
  if (check_inplace(*this, nullptr, "fill_"))
    return inplace_with_grad(*this, "fill_", [&](const Tensor& s) {
      // Not s * 0 + v: that is NaN wherever s holds inf or NaN. The old values get zero gradient.
      Tensor r = native::full(s.sizes(), v, s.dtype(), s.device());
      record_function("FillBackward", {s}, {r}, [](const VL& g, const VL&) -> VL { return {zeros_like(g[0])}; });
      return r;
    });
  native::fill_(*this, v);
  return *this;
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  // clamp with a floating bound gives float32 for an integral tensor, which cannot be written back
  // without truncating (PyTorch: "result type Float can't be cast to the desired output type").
  WICK_CHECK_TYPE(is_floating(dtype()) || !((lo && lo->is_floating()) || (hi && hi->is_floating())),
                  "clamp_: a floating bound (min {}, max {}) gives float32, which cannot be written in place into "
                  "a {} tensor; use integer bounds, or clamp() for a new tensor",
                  lo ? fmt::format("{}", lo->to_double()) : "none", hi ? fmt::format("{}", hi->to_double()) : "none",
                  dtype());
  // Refused before anything is written (Note [Scalar fits dtype]); the dtype is self's, as above.
  if (lo) check_scalar_fits("clamp_", "min", *lo, dtype(), sizes());
  if (hi) check_scalar_fits("clamp_", "max", *hi, dtype(), sizes());
  if (check_inplace(*this, nullptr, "clamp_"))
    return inplace_with_grad(*this, "clamp_", [&](const Tensor& s) { return wick::clamp(s, lo, hi); });
  native::copy_(*this, native::clamp(*this, lo, hi));
  return *this;
}
Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar v) {
  if (defined()) check_scalar_fits("masked_fill_", "value", v, dtype(), sizes());  // Note [Scalar fits dtype]
  if (check_inplace(*this, nullptr, "masked_fill_"))
    return inplace_with_grad(*this, "masked_fill_", [&](const Tensor& s) { return wick::masked_fill(s, mask, v); });
  native::copy_(*this, wick::masked_fill(*this, mask, v));
  return *this;
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& v) {
  if (check_inplace(*this, &v, "masked_fill_")) {
    const Tensor v2 = unaliased(v, *this);
    return inplace_with_grad(*this, "masked_fill_", [&](const Tensor& s) { return wick::masked_fill(s, mask, v2); });
  }
  native::copy_(*this, wick::masked_fill(*this, mask, v));
  return *this;
}
Tensor& Tensor::copy_(const Tensor& src) {
  if (check_inplace(*this, &src, "copy_")) {
    DimVector shape(sizes());
    const DType dt = dtype();
    const Device dev = device();
    const Tensor src2 = unaliased(src, *this);
    return inplace_with_grad(*this, "copy_", [&](const Tensor& s) {
      // Not s * 0 + src: that is NaN wherever s holds inf or NaN. The old values get zero
      // gradient; src gets the incoming gradient (reduced to its shape and dtype by expand/to).
      Tensor r = wick::to(wick::expand(src2, shape), dev, dt);
      Tensor out = native::clone(r);
      record_function("CopyBackward", {s, r}, {out}, [](const VL& g, const VL&) -> VL {
        return {zeros_like(g[0]), g[0]};
      });
      return out;
    });
  }
  native::copy_(*this, src);
  return *this;
}

Tensor& Tensor::relu_() { return inplace_unary<wick::relu>(*this, "relu_"); }
Tensor& Tensor::floor_() { return inplace_unary<wick::floor>(*this, "floor_"); }
Tensor& Tensor::ceil_() { return inplace_unary<wick::ceil>(*this, "ceil_"); }
Tensor& Tensor::round_() { return inplace_unary<wick::round>(*this, "round_"); }
Tensor& Tensor::trunc_() { return inplace_unary<wick::trunc>(*this, "trunc_"); }
Tensor& Tensor::frac_() { return inplace_unary<wick::frac>(*this, "frac_"); }
Tensor& Tensor::remainder_(const Tensor& o) { return inplace_binary<wick::remainder>(*this, o, "remainder_"); }
Tensor& Tensor::remainder_(Scalar o) { return inplace_scalar<wick::remainder>(*this, o, "remainder_"); }
Tensor& Tensor::fmod_(const Tensor& o) { return inplace_binary<wick::fmod>(*this, o, "fmod_"); }
Tensor& Tensor::fmod_(Scalar o) { return inplace_scalar<wick::fmod>(*this, o, "fmod_"); }
Tensor& Tensor::tan_() { return inplace_unary<wick::tan>(*this, "tan_"); }
Tensor& Tensor::asin_() { return inplace_unary<wick::asin>(*this, "asin_"); }
Tensor& Tensor::acos_() { return inplace_unary<wick::acos>(*this, "acos_"); }
Tensor& Tensor::atan_() { return inplace_unary<wick::atan>(*this, "atan_"); }
Tensor& Tensor::atan2_(const Tensor& o) { return inplace_binary<wick::atan2>(*this, o, "atan2_"); }
Tensor& Tensor::sinh_() { return inplace_unary<wick::sinh>(*this, "sinh_"); }
Tensor& Tensor::cosh_() { return inplace_unary<wick::cosh>(*this, "cosh_"); }
Tensor& Tensor::asinh_() { return inplace_unary<wick::asinh>(*this, "asinh_"); }
Tensor& Tensor::acosh_() { return inplace_unary<wick::acosh>(*this, "acosh_"); }
Tensor& Tensor::atanh_() { return inplace_unary<wick::atanh>(*this, "atanh_"); }
Tensor& Tensor::cumprod_(int64_t d) {
  return inplace_op(*this, nullptr, "cumprod_", [d](const Tensor& s, const Tensor&) { return wick::cumprod(s, d); });
}

}  // namespace wick

// The in-place forms of the scans, math and scattered writes (tensor_methods_more.cpp): the
// out-of-place op checks everything and computes the result, which is then written back.
namespace wick {

Tensor& Tensor::renorm_(double p, int64_t dim, double maxnorm) {
  return inplace_op(*this, nullptr, "renorm_",
                    [=](const Tensor& s, const Tensor&) { return wick::renorm(s, p, dim, maxnorm); });
}
Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  return inplace_op(*this, nullptr, "nan_to_num_",
                    [=](const Tensor& s, const Tensor&) { return wick::nan_to_num(s, nan, posinf, neginf); });
}
Tensor& Tensor::logit_(std::optional<double> eps) {
  return inplace_op(*this, nullptr, "logit_", [=](const Tensor& s, const Tensor&) { return wick::logit(s, eps); });
}
Tensor& Tensor::xlogy_(const Tensor& y) { return inplace_binary<wick::xlogy>(*this, y, "xlogy_"); }
Tensor& Tensor::xlogy_(Scalar y) { return inplace_scalar<wick::xlogy>(*this, y, "xlogy_"); }
Tensor& Tensor::hypot_(const Tensor& o) { return inplace_binary<wick::hypot>(*this, o, "hypot_"); }
Tensor& Tensor::lerp_(const Tensor& end, Scalar weight) {
  if (defined()) check_scalar_fits("lerp_", "weight", weight, dtype(), sizes());  // Note [Scalar fits dtype]
  return inplace_op(*this, &end, "lerp_", [=](const Tensor& s, const Tensor& e) { return wick::lerp(s, e, weight); });
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  WICK_CHECK(defined() && weight.defined(), "lerp_: an operand is an undefined tensor");
  const DimVector shape = native::broadcast_shapes(sizes(), weight.sizes(), "lerp_");
  WICK_CHECK(IntArrayRef(shape) == sizes(),
             "lerp_: the weight of shape [{}] would broadcast the tensor of shape [{}]; use the out-of-place lerp",
             fmt::join(weight.sizes(), ", "), fmt::join(sizes(), ", "));
  // The weight is saved for backward: a copy if it shares this tensor's memory (Note [In-place ops]).
  // A weight that alone requires grad still records the op (else its gradient would be lost).
  const bool weight_rg = GradMode::is_enabled() && autograd::requires_grad(weight);
  const Tensor w = weight_rg ? unaliased(weight, *this) : weight;
  return inplace_op(
      *this, &end, "lerp_", [&](const Tensor& s, const Tensor& e) { return wick::lerp(s, e, w); }, weight_rg);
}
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                bool include_self) {
  WICK_CHECK(defined() && index.defined() && src.defined(), "scatter_reduce_: an operand is an undefined tensor");
  if (check_inplace(*this, &src, "scatter_reduce_")) {
    const Tensor s2 = unaliased(src, *this);
    return inplace_with_grad(*this, "scatter_reduce_", [&](const Tensor& s) {
      return wick::scatter_reduce(s, dim, index, s2, reduce, include_self);
    });
  }
  native::copy_(*this, wick::scatter_reduce(*this, dim, index, src, reduce, include_self));
  return *this;
}
Tensor& Tensor::index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  WICK_CHECK(defined() && values.defined(), "index_put_: the tensor or the values are undefined");
  if (check_inplace(*this, &values, "index_put_")) {
    const Tensor v2 = unaliased(values, *this);
    return inplace_with_grad(*this, "index_put_",
                             [&](const Tensor& s) { return wick::index_put(s, indices, v2, accumulate); });
  }
  // Computed out of place first, so a refused index or value writes nothing.
  native::copy_(*this, wick::index_put(*this, indices, values, accumulate));
  return *this;
}

Tensor& detail::inplace_apply(Tensor& self, const std::vector<Tensor>& operands, const char* op,
                              const std::function<Tensor(const Tensor&, const std::vector<Tensor>&)>& fn) {
  WICK_CHECK(self.defined(), "{}: the tensor is undefined", op);
  bool operand_rg = false;
  for (const Tensor& o : operands) operand_rg = operand_rg || (o.defined() && o.requires_grad());
  const auto checked = [&](const Tensor& s, const std::vector<Tensor>& os) {
    Tensor r = fn(s, os);
    WICK_CHECK(r.sizes() == self.sizes(),
               "{}: the result has shape [{}] but the tensor has shape [{}] (the operands would broadcast it), and "
               "an in-place op keeps the tensor's shape; use the out-of-place op",
               op, fmt::join(r.sizes(), ", "), fmt::join(self.sizes(), ", "));
    return r;
  };
  if (check_inplace(self, nullptr, op, operand_rg)) {
    std::vector<Tensor> os;
    for (const Tensor& o : operands) os.push_back(o.defined() ? unaliased(o, self) : o);
    return inplace_with_grad(self, op, [&](const Tensor& s) { return checked(s, os); });
  }
  const Tensor r = checked(self, operands);
  check_result_fits(op, self, r);
  native::copy_(self, r);
  return self;
}

}  // namespace wick

namespace wick::detail {
Tensor& apply_inplace(Tensor& self, const Tensor* other, const char* op,
                      const std::function<Tensor(const Tensor&, const Tensor&)>& f) {
  return inplace_op(self, other, op, f);
}
}  // namespace wick::detail
