// Predicates and whole-tensor comparisons: isnan/isinf/isfinite, isclose/allclose, equal,
// all/any. Composed of elementwise and reduce primitives (so every device has them); results
// are bool and never part of the graph.
#include <limits>

#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
Tensor bool_fill(const Tensor& a, bool v) { return native::full(a.sizes(), Scalar(v), kBool, a.device()); }

void check_input(const Tensor& a, const char* op) {
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", op);
}

// a != 0 as bool (a itself when already bool).
Tensor nonzero_mask(const Tensor& a) {
  return a.dtype() == kBool ? a : native::binary(BinaryOp::Ne, a, Scalar(int64_t{0}));
}

// all: the product of the 0/1 mask, any: its count, both in int64 (no identity problem for
// empty tensors: all() of nothing is true, any() of nothing is false, as PyTorch's).
Tensor all_any(const Tensor& a, IntArrayRef dims, bool keepdim, bool is_all) {
  check_input(a, is_all ? "all" : "any");
  Tensor r = native::reduce(is_all ? ReduceOp::Prod : ReduceOp::Sum, nonzero_mask(a), dims, keepdim);
  return native::binary(BinaryOp::Ne, r, Scalar(int64_t{0}));
}
}  // namespace

Tensor isnan(const Tensor& a) {
  check_input(a, "isnan");
  if (!is_floating(a.dtype())) return bool_fill(a, false);
  return native::binary(BinaryOp::Ne, a, a);
}

Tensor isinf(const Tensor& a) {
  check_input(a, "isinf");
  if (!is_floating(a.dtype())) return bool_fill(a, false);
  return native::binary(BinaryOp::Eq, native::unary(UnaryOp::Abs, a), Scalar(std::numeric_limits<double>::infinity()));
}

Tensor isfinite(const Tensor& a) {
  check_input(a, "isfinite");
  if (!is_floating(a.dtype())) return bool_fill(a, true);
  // a - a is 0 for every finite a and NaN for infinities and NaNs.
  return native::binary(BinaryOp::Eq, native::binary(BinaryOp::Sub, a, a), Scalar(0.0));
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_input(a, "isclose");
  check_input(b, "isclose");
  native::check_same_device("isclose", {&a, &b});
  WICK_CHECK_TYPE(a.dtype() == b.dtype(),
                  "isclose: the inputs have dtypes {} and {}; convert one with .to() so that "
                  "they match",
                  dtype_name(a.dtype()), dtype_name(b.dtype()));
  WICK_CHECK(rtol >= 0 && atol >= 0, "isclose: rtol ({}) and atol ({}) must be non-negative", rtol, atol);
  Tensor close = native::binary(BinaryOp::Eq, a, b);
  if (a.dtype() == kBool) return close;
  if (equal_nan && is_floating(a.dtype()))
    close = native::binary(BinaryOp::LogicalOr, close, native::binary(BinaryOp::LogicalAnd, isnan(a), isnan(b)));
  if (rtol == 0 && atol == 0) return close;
  // Equal infinities were caught by ==; otherwise only finite differences can be close. Integers
  // are compared in float64: their difference would wrap (INT64_MAX - (-1) is INT64_MIN, whose
  // absolute value stays negative, so "close").
  const Tensor fa = is_floating(a.dtype()) ? a : native::to(a, a.device(), kFloat64);
  const Tensor fb = is_floating(b.dtype()) ? b : native::to(b, b.device(), kFloat64);
  Tensor diff = native::unary(UnaryOp::Abs, native::binary(BinaryOp::Sub, fa, fb));
  Tensor allowed = native::binary(
      BinaryOp::Add, native::binary(BinaryOp::Mul, native::unary(UnaryOp::Abs, fb), Scalar(rtol)), Scalar(atol));
  Tensor within = native::binary(BinaryOp::LogicalAnd, isfinite(diff), native::binary(BinaryOp::Le, diff, allowed));
  return native::binary(BinaryOp::LogicalOr, close, within);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  check_input(a, "equal");
  check_input(b, "equal");
  native::check_same_device("equal", {&a, &b});
  WICK_CHECK_TYPE(a.dtype() == b.dtype(),
                  "equal: the inputs have dtypes {} and {}; convert one with .to() so that "
                  "they match",
                  dtype_name(a.dtype()), dtype_name(b.dtype()));
  if (a.sizes() != b.sizes()) return false;
  return all(native::binary(BinaryOp::Eq, a, b)).item<bool>();
}

Tensor all(const Tensor& a) { return all_any(a, {}, false, true); }
Tensor any(const Tensor& a) { return all_any(a, {}, false, false); }
Tensor all(const Tensor& a, int64_t dim, bool keepdim) { return all_any(a, dim, keepdim, true); }
Tensor any(const Tensor& a, int64_t dim, bool keepdim) { return all_any(a, dim, keepdim, false); }

}  // namespace wick
