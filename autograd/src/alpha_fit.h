#pragma once
// add's and sub's alpha check, shared by the out-of-place ops (ops_elementwise.cpp) and their
// in-place forms (tensor_inplace.cpp, whose no-grad path writes through native ops).
#include "wick/core/native.h"
#include "wick/core/scalar_fit.h"

namespace wick::detail {

/// alpha is converted to the dtype the op computes in, a's and b's result type (float32 with a
/// float64 tensor computes in float64; with a 0-d float64 tensor in float32): it must fit it
/// (Note [Scalar fits dtype]; an integer alpha always does). Undefined operands are the op's to
/// refuse.
inline void check_alpha_fits(const char* op, const Tensor& a, const Tensor& b, Scalar alpha) {
  if (alpha.is_floating() && a.defined() && b.defined())
    check_scalar_fits(op, "alpha", alpha, native::result_type(a, b), a.sizes());
}

}  // namespace wick::detail
