// Differentiable views and shape ops. A view of a tensor that requires grad is marked with its
// base (Note [Views and in-place ops] in view_tracking.h).
#include "op_helpers.h"
#include "wick/autograd/meta.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

// Views are tracked whenever grad mode is on, also of tensors that do not require grad: an
// in-place op on such a view with an operand that does gives the base a history. A view made
// with grad mode off is only marked as such, and so is any view of it, so that a recorded
// in-place op on it is refused (Note [Views and in-place ops]).
void detail::mark_view(const Tensor& out, const Tensor& in) {
  if (out.is_same(in) || !out.defined()) return;
  if (!GradMode::is_enabled()) {
    out.impl()->view_made_without_grad = true;  // no meta: such a view allocates nothing more
    return;
  }
  out.impl()->view_made_without_grad = in.defined() && in.impl()->view_made_without_grad;
  autograd::AutogradMeta& m = autograd::ensure_meta(out);
  const autograd::AutogradMeta* im = autograd::get_meta(in);
  m.is_view = true;
  m.view_base = im && im->is_view && im->view_base.defined() ? im->view_base : in;
  m.view_version = out.version();
  if (m.grad_fn) m.grad_fn->set_creates_view(true);
}

namespace {
// Records a view/reshape-like op whose backward reshapes the gradient back to `shape`.
Tensor reshape_like_op(Tensor out, const Tensor& a, const char* name, bool is_view) {
  out = distinct(out, a);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    record_function(name, {a}, {out}, [shape](const VL& g, const VL&) -> VL { return {reshape(g[0], shape)}; });
  }
  if (is_view) mark_view(out, a);
  return out;
}
}  // namespace

Tensor view(const Tensor& a, IntArrayRef shape) {
  return reshape_like_op(native::view(a, shape), a, "ViewBackward", true);
}
Tensor reshape(const Tensor& a, IntArrayRef shape) {
  Tensor out = native::reshape(a, shape);
  const bool is_view = out.impl()->storage == a.impl()->storage;
  return reshape_like_op(out, a, "ReshapeBackward", is_view);
}
Tensor squeeze(const Tensor& a) { return reshape_like_op(native::squeeze(a), a, "SqueezeBackward", true); }
Tensor squeeze(const Tensor& a, int64_t dim) {
  return reshape_like_op(native::squeeze(a, dim), a, "SqueezeBackward", true);
}
Tensor unsqueeze(const Tensor& a, int64_t dim) {
  return reshape_like_op(native::unsqueeze(a, dim), a, "UnsqueezeBackward", true);
}
Tensor flatten(const Tensor& a, int64_t s, int64_t e) {
  Tensor out = native::flatten(a, s, e);
  return reshape_like_op(out, a, "FlattenBackward", out.impl()->storage == a.impl()->storage);
}

Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) {
  Tensor out = native::transpose(a, d0, d1);
  if (needs_grad({&a})) {
    record_function("TransposeBackward", {a}, {out},
                    [d0, d1](const VL& g, const VL&) -> VL { return {transpose(g[0], d0, d1)}; });
  }
  mark_view(out, a);
  return out;
}

Tensor permute(const Tensor& a, IntArrayRef dims) {
  Tensor out = native::permute(a, dims);
  if (needs_grad({&a})) {
    std::vector<int64_t> inv(dims.size());
    for (size_t i = 0; i < dims.size(); ++i)
      inv[native::wrap_dim(dims[i], a.dim(), "permute")] = static_cast<int64_t>(i);
    record_function("PermuteBackward", {a}, {out},
                    [inv](const VL& g, const VL&) -> VL { return {permute(g[0], inv)}; });
  }
  mark_view(out, a);
  return out;
}

Tensor expand(const Tensor& a, IntArrayRef shape) {
  Tensor out = native::expand(a, shape);
  if (needs_grad({&a})) {
    DimVector in_shape(a.sizes());
    record_function("ExpandBackward", {a}, {out},
                    [in_shape](const VL& g, const VL&) -> VL { return {sum_to(g[0], in_shape)}; });
  }
  mark_view(out, a);
  return out;
}

Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes() == shape) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  WICK_CHECK(lead >= 0, "sum_to: cannot reduce shape [{}] to the larger shape [{}]", fmt::join(g.sizes(), ", "),
             fmt::join(shape, ", "));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && g.sizes()[lead + i] != 1) dims.push_back(lead + static_cast<int64_t>(i));
  Tensor r = dims.empty() ? g : sum(g, dims, true);
  return lead > 0 || !dims.empty() ? reshape(r, shape) : r;
}

namespace {
// The backward of slicing: the gradient placed in zeros of the input's shape. Itself
// differentiable (its backward slices again), for double backward.
Tensor slice_backward(const Tensor& g, const DimVector& shape, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor out = native::zeros(shape, g.dtype(), g.device());
  native::copy_(native::slice(out, dim, start, end, step), g);
  if (needs_grad({&g})) {
    record_function("SliceBackwardBackward", {g}, {out},
                    [=](const VL& gg, const VL&) -> VL { return {slice(gg[0], dim, start, end, step)}; });
  }
  return out;
}
}  // namespace

Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  Tensor out = native::slice(a, dim, start, end, step);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    const int64_t d = native::wrap_dim(dim, a.dim(), "slice");
    const int64_t n = shape[d];
    int64_t s = start.value_or(0), e = end.value_or(n);
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, s, n);
    record_function("SliceBackward", {a}, {out},
                    [=](const VL& g, const VL&) -> VL { return {slice_backward(g[0], shape, d, s, e, step)}; });
  }
  mark_view(out, a);
  return out;
}

Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  Tensor checked = native::narrow(a, dim, start, length);  // validates the arguments
  const int64_t d = native::wrap_dim(dim, a.dim(), "narrow");
  if (start < 0) start += a.sizes()[d];
  return slice(a, d, start, start + length, 1);
}

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  Tensor out = native::select(a, dim, index);
  if (needs_grad({&a})) {
    DimVector shape(a.sizes());
    const int64_t d = native::wrap_dim(dim, a.dim(), "select");
    const int64_t i = index < 0 ? index + shape[d] : index;
    record_function("SelectBackward", {a}, {out}, [=](const VL& g, const VL&) -> VL {
      return {slice_backward(unsqueeze(g[0], d), shape, d, i, i + 1, 1)};
    });
  }
  mark_view(out, a);
  return out;
}

Tensor contiguous(const Tensor& a) {
  Tensor out = native::contiguous(a);
  if (out.is_same(a)) return a;
  if (needs_grad({&a})) {
    record_function("ContiguousBackward", {a}, {out}, [](const VL& g, const VL&) -> VL { return {g[0]}; });
  }
  return out;
}

Tensor clone(const Tensor& a) {
  Tensor out = native::clone(a);
  if (needs_grad({&a}))
    record_function("CloneBackward", {a}, {out}, [](const VL& g, const VL&) -> VL { return {g[0]}; });
  return out;
}

Tensor to(const Tensor& a, Device device, DType dtype) {
  if (a.device() == device && a.dtype() == dtype) return a;
  Tensor out = native::to(a, device, dtype);
  if (needs_grad({&a})) {
    WICK_CHECK_TYPE(is_floating(dtype),
                    "to: converting a tensor that requires grad to {} would drop its gradient; detach() "
                    "it first",
                    dtype);
    const Device src_dev = a.device();
    const DType src_dt = a.dtype();
    record_function("ToCopyBackward", {a}, {out},
                    [=](const VL& g, const VL&) -> VL { return {to(g[0], src_dev, src_dt)}; });
  }
  return out;
}

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  Tensor out = native::cat(ts, dim);
  if (needs_grad(ts)) {
    const int64_t d = native::wrap_dim(dim, ts[0].dim(), "cat");
    std::vector<int64_t> sizes;
    std::vector<DType> dtypes;
    for (const Tensor& t : ts) {
      sizes.push_back(t.sizes()[d]);
      dtypes.push_back(t.dtype());
    }
    record_function("CatBackward", ts, {out}, [=](const VL& g, const VL&) -> VL {
      VL parts = split_with_sizes(g[0], sizes, d);
      for (size_t i = 0; i < parts.size(); ++i)
        if (parts[i].dtype() != dtypes[i]) parts[i] = to(parts[i], parts[i].device(), dtypes[i]);
      return parts;
    });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  WICK_CHECK(!ts.empty(), "stack: expected a non-empty list of tensors");
  WICK_CHECK(ts[0].defined(), "stack: tensor 0 is undefined");
  const int64_t d = native::wrap_dim(dim, ts[0].dim() + 1, "stack");
  std::vector<Tensor> us;
  for (size_t i = 0; i < ts.size(); ++i) {
    WICK_CHECK(ts[i].defined() && ts[i].sizes() == ts[0].sizes(),
               "stack: expected tensors of equal shape, but tensor "
               "{} differs from tensor 0 (shape [{}])",
               i, fmt::join(ts[0].sizes(), ", "));
    // Checked here so that the error names stack, not the cat it is built on.
    WICK_CHECK(ts[i].device() == ts[0].device(),
               "stack: expected all tensors on the same device, but tensor 0 is on "
               "{} and tensor {} is on {}",
               ts[0].device(), i, ts[i].device());
    us.push_back(unsqueeze(ts[i], d));
  }
  return cat(us, d);
}

std::vector<Tensor> split_with_sizes(const Tensor& a, IntArrayRef sizes, int64_t dim) {
  std::vector<Tensor> outs = native::split_with_sizes(a, sizes, dim);
  if (needs_grad({&a})) {
    const int64_t d = native::wrap_dim(dim, a.dim(), "split");
    for (auto& o : outs) o = native::alias(o);
    record_function("SplitBackward", {a}, outs, [d](const VL& g, const VL&) -> VL { return {cat(g, d)}; });
  }
  for (auto& o : outs) mark_view(o, a);
  return outs;
}

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  std::vector<Tensor> parts = native::split(a, split_size, dim);
  std::vector<int64_t> sizes;
  const int64_t d = native::wrap_dim(dim, a.dim(), "split");
  for (const Tensor& p : parts) sizes.push_back(p.sizes()[d]);
  return split_with_sizes(a, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  std::vector<Tensor> parts = native::chunk(a, chunks, dim);
  std::vector<int64_t> sizes;
  const int64_t d = native::wrap_dim(dim, a.dim(), "chunk");
  for (const Tensor& p : parts) sizes.push_back(p.sizes()[d]);
  return split_with_sizes(a, sizes, d);
}

}  // namespace wick
