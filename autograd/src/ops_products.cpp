// Products built on matmul: bmm, baddbmm, addmm, outer, dot. The checks name LibTorch's shape
// rules; the arithmetic (and so the gradient) is matmul's, mul's and add's.
#include "op_helpers.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick {

using namespace detail;

namespace {

// beta * input + alpha * product, with input broadcast to the product's shape; beta 0 ignores
// input's values (NaN and inf included), as PyTorch's. beta and alpha must fit the result dtype.
Tensor scaled_add(const char* op, const Tensor& input, const Tensor& product, Scalar beta, Scalar alpha) {
  WICK_CHECK(input.defined(), "{}: the input is an undefined tensor", op);
  const DimVector out = native::broadcast_shapes(input.sizes(), product.sizes(), op);
  WICK_CHECK(IntArrayRef(out) == product.sizes(),
             "{}: the input of shape {} does not broadcast to the product's "
             "shape {}",
             op, shape_str(input), shape_str(product));
  // beta and alpha are converted to the result dtype: they must fit it (Note [Scalar fits dtype]).
  const DType t = promote_types(input.dtype(), product.dtype());
  check_scalar_fits(op, "beta", beta, t, product.sizes());
  check_scalar_fits(op, "alpha", alpha, t, product.sizes());
  const double b = beta.to_double(), a = alpha.to_double();
  Tensor scaled = a == 1.0 ? product : product * alpha;
  if (b == 0.0) return scaled;
  return add(b == 1.0 ? input : input * beta, scaled);
}
}  // namespace

Tensor bmm(const Tensor& a, const Tensor& b) {
  WICK_CHECK(a.defined() && b.defined(), "bmm: an operand is an undefined tensor");
  WICK_CHECK(a.dim() == 3 && b.dim() == 3,
             "bmm: expects two 3-d tensors [batch, n, m] and [batch, m, p], got {} and "
             "{}; use matmul to broadcast",
             shape_str(a), shape_str(b));
  WICK_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1),
             "bmm: shapes {} and {} do not match: expected "
             "[batch, n, m] and [batch, m, p] with the same batch and m",
             shape_str(a), shape_str(b));
  return matmul(a, b);
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, Scalar beta, Scalar alpha) {
  return scaled_add("baddbmm", input, bmm(batch1, batch2), beta, alpha);
}

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) {
  WICK_CHECK(mat1.defined() && mat2.defined(), "addmm: an operand is an undefined tensor");
  WICK_CHECK(mat1.dim() == 2 && mat2.dim() == 2 && mat1.size(1) == mat2.size(0),
             "addmm: expects matrices [n, m] "
             "and [m, p], got {} and {}",
             shape_str(mat1), shape_str(mat2));
  return scaled_add("addmm", input, mm(mat1, mat2), beta, alpha);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  WICK_CHECK(a.defined() && b.defined() && a.dim() == 1 && b.dim() == 1,
             "outer: expects two 1-d tensors, got {} and "
             "{}",
             a.defined() ? shape_str(a) : "undefined", b.defined() ? shape_str(b) : "undefined");
  return mul(unsqueeze(a, 1), unsqueeze(b, 0));
}

Tensor dot(const Tensor& a, const Tensor& b) {
  WICK_CHECK(a.defined() && b.defined() && a.dim() == 1 && b.dim() == 1 && a.size(0) == b.size(0),
             "dot: expects two 1-d tensors of one length, got {} and {}", a.defined() ? shape_str(a) : "undefined",
             b.defined() ? shape_str(b) : "undefined");
  WICK_CHECK_TYPE(a.dtype() == b.dtype(), "dot: expects both vectors to have one dtype, got {} and {}",
                  dtype_name(a.dtype()), dtype_name(b.dtype()));
  return matmul(a, b);
}

}  // namespace wick
