#pragma once
// Shared helpers of the op definitions in ops_*.cpp.
#include <fmt/format.h>

#include <functional>
#include <string>

#include "wick/autograd/functions.h"
#include "wick/autograd/record.h"

namespace wick::detail {

using autograd::needs_grad;
using autograd::record_function;
using VL = autograd::variable_list;

/// "[2, 3]": the shape in every op's error messages (the one formatter of autograd/src; core's
/// kernels use native::linalg_shape, which prints the same).
inline std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }
inline std::string shape_str(const Tensor& t) { return shape_str(t.sizes()); }

/// The smallest and the largest value of an int64 tensor with at least one element (any device).
inline int64_t min_of(const Tensor& t) { return native::amin(native::reshape(t, {-1}), {0}, false).item<int64_t>(); }
inline int64_t max_of(const Tensor& t) { return native::amax(native::reshape(t, {-1}), {0}, false).item<int64_t>(); }

/// The gradient reduced to `shape` and converted to `dtype` (broadcast and promotion backward).
inline Tensor grad_to(const Tensor& g, const DimVector& shape, DType dtype) {
  Tensor r = sum_to(g, shape);
  return r.dtype() == dtype ? r : wick::to(r, r.device(), dtype);
}

/// a (op) b for op in Add, Sub, Mul, Div and a Scalar b, differentiable in a (Note [Scalar
/// operands]): the scalar reaches the backend as a kernel argument where it has the stub.
Tensor scalar_op(BinaryOp op, const Tensor& a, Scalar b);

/// A native result that might be the input itself becomes a distinct alias, so that recording
/// history on it never touches the input's autograd state.
inline Tensor distinct(const Tensor& out, const Tensor& in) { return out.is_same(in) ? native::alias(out) : out; }

/// Marks `out` as a view of `in` for autograd (Note [Views and in-place ops] in view_tracking.h).
void mark_view(const Tensor& out, const Tensor& in);

/// The ascending int64 positions of a 1-d bool tensor's true entries (Note [Positions without a
/// nonzero kernel], ops_select_scatter.cpp).
Tensor true_positions(const Tensor& mask);

/// A unary op's backward from the gradient, the input and (when saved) the output.
using UnaryBackward = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& out);
/// native::unary(op, a, p0) recording `bw` under `name`; the output is saved when save_out
/// (ops_rounding_trig.cpp).
Tensor unary_fn(UnaryOp op, const Tensor& a, const char* name, UnaryBackward bw, bool save_out, double p0 = 0);

/// Refuses bool operands and, for integers, a zero divisor (remainder, fmod, floor_divide).
void check_divisor(const char* op, const Tensor& a, const Tensor& b);

/// An in-place op written as its out-of-place result `f(self, other)` (other may be null), with
/// the checks and history rebasing of Note [In-place ops] (tensor_inplace.cpp).
Tensor& apply_inplace(Tensor& self, const Tensor* other, const char* op,
                      const std::function<Tensor(const Tensor&, const Tensor&)>& f);

}  // namespace wick::detail
