// Masking: where with scalar operands, masked_fill, tril/triu. Each is a where() over a mask
// built from existing primitives, so the gradient is where's and every device runs them.
#include "op_helpers.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick {

using namespace detail;

namespace {
// A scalar operand of where, as a 0-dim tensor: PyTorch's promotion treats it as a wrapped
// number next to `like`. It must fit the promoted dtype (Note [Scalar fits dtype]).
Tensor scalar_operand(Scalar s, const Tensor& like, const char* arg) {
  WICK_CHECK(like.defined(), "where: the tensor next to the scalar {} is undefined", arg);
  const DType dtype = native::result_type(like, s);
  check_scalar_fits("where", arg, s, dtype, like.sizes());
  return native::scalar_tensor(s, dtype, like.device());
}

// col - row <= diagonal (tril) or >= diagonal (triu) over the last two dims of a.
Tensor triangle(const Tensor& a, int64_t diagonal, bool lower) {
  const char* op = lower ? "tril" : "triu";
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", op);
  WICK_CHECK(a.dim() >= 2, "{}: expects a tensor with at least 2 dims, got shape [{}]", op, fmt::join(a.sizes(), ", "));
  const int64_t rows = a.size(-2), cols = a.size(-1);
  Tensor row = native::view(native::arange(0, rows, 1, kInt64, a.device()), {rows, 1});
  Tensor col = native::arange(0, cols, 1, kInt64, a.device());
  Tensor offset = native::binary(BinaryOp::Sub, col, row);
  Tensor mask = native::binary(lower ? BinaryOp::Le : BinaryOp::Ge, offset, Scalar(diagonal));
  return where(mask, a, native::zeros({}, a.dtype(), a.device()));
}

void check_mask(const Tensor& a, const Tensor& mask) {
  WICK_CHECK(a.defined() && mask.defined(), "masked_fill: the input or the mask is an undefined tensor");
  WICK_CHECK_TYPE(mask.dtype() == kBool,
                  "masked_fill: the mask must be bool, got {}; build it with a comparison "
                  "(e.g. x.eq(0)) or .to(wick::kBool)",
                  dtype_name(mask.dtype()));
  const DimVector out = native::broadcast_shapes(a.sizes(), mask.sizes(), "masked_fill");
  WICK_CHECK(IntArrayRef(out) == a.sizes(),
             "masked_fill: the mask of shape [{}] does not broadcast to the input's "
             "shape [{}]",
             fmt::join(mask.sizes(), ", "), fmt::join(a.sizes(), ", "));
}
}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) { return where(cond, a, scalar_operand(b, a, "other")); }
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) { return where(cond, scalar_operand(a, b, "input"), b); }
Tensor where(const Tensor& cond, Scalar a, Scalar b) {
  WICK_CHECK(cond.defined(), "where: the condition is an undefined tensor");
  const DType da = is_floating(a.dtype()) ? kFloat32 : a.dtype(), db = is_floating(b.dtype()) ? kFloat32 : b.dtype();
  check_scalar_fits("where", "input", a, promote_types(da, db), cond.sizes());  // Note [Scalar fits dtype]
  check_scalar_fits("where", "other", b, promote_types(da, db), cond.sizes());
  Tensor ta = native::scalar_tensor(a, da, cond.device());
  Tensor tb = native::scalar_tensor(b, db, cond.device());
  return where(cond, ta, tb);
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, Scalar value) {
  check_mask(a, mask);
  check_scalar_fits("masked_fill", "value", value, a.dtype(), a.sizes());  // Note [Scalar fits dtype]
  return where(mask, native::scalar_tensor(value, a.dtype(), a.device()), a);
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value) {
  check_mask(a, mask);
  WICK_CHECK(value.defined() && value.dim() == 0,
             "masked_fill: the value must be a 0-dim tensor, got shape [{}]; "
             "use where(mask, values, a) to fill with a tensor",
             value.defined() ? fmt::format("{}", fmt::join(value.sizes(), ", ")) : "undefined");
  return where(mask, to(value, a.device(), a.dtype()), a);
}

Tensor tril(const Tensor& a, int64_t diagonal) { return triangle(a, diagonal, true); }
Tensor triu(const Tensor& a, int64_t diagonal) { return triangle(a, diagonal, false); }

}  // namespace wick
