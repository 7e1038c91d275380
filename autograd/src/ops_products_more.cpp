// addcmul, addcdiv, addbmm, addmv, addr, chain_matmul, ger, vdot, logdet and pdist: checks with
// PyTorch's shape and dtype rules, then mul, div, mm, matmul, outer, multi_dot, slogdet and cdist,
// whose gradients are PyTorch's formulas for these ops written out.
#include <limits>

#include "op_helpers.h"
#include "wick/autograd/cdist.h"
#include "wick/autograd/linalg.h"
#include "wick/autograd/linalg_more.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick {

using namespace detail;

namespace {

// A floating beta, alpha or value with integer operands is refused, as PyTorch's.
void check_integral_scalar(const char* op, const char* name, Scalar s, DType result) {
  WICK_CHECK_TYPE(!is_integral(result, true) || !s.is_floating(),
                  "{}: for integer tensors the argument {} must be an integer, got {}", op, name, s.to_double());
}

// beta * self + alpha * product, self broadcast to the product's shape (and no further); beta 0
// ignores self's values (NaN and inf included: a where, whose gradient for self is zeros, as
// PyTorch's); 1 skips the multiplication. beta and alpha must fit the result dtype.
Tensor beta_self_alpha_product(const char* op, const Tensor& self, const Tensor& product, Scalar beta, Scalar alpha) {
  WICK_CHECK(self.defined(), "{}: self is an undefined tensor", op);
  native::check_same_device(op, {&self, &product});
  const DimVector out = native::broadcast_shapes(self.sizes(), product.sizes(), op);
  WICK_CHECK(IntArrayRef(out) == product.sizes(), "{}: self {} does not broadcast to the product's shape {}", op,
             shape_str(self), shape_str(product));
  const DType t = promote_types(self.dtype(), product.dtype());
  check_integral_scalar(op, "beta", beta, t);
  check_integral_scalar(op, "alpha", alpha, t);
  check_scalar_fits(op, "beta", beta, t, product.sizes());  // Note [Scalar fits dtype]
  check_scalar_fits(op, "alpha", alpha, t, product.sizes());
  const Tensor scaled = alpha.to_double() == 1.0 ? product : product * alpha;
  const double b = beta.to_double();
  if (b == 0.0) {
    const Tensor r = scaled.dtype() == t ? scaled : to(scaled, scaled.device(), t);
    // self's values are not read, but its gradient is defined (zeros), as PyTorch's beta * grad.
    if (!needs_grad({&self})) return r;
    return where(native::ones({}, kBool, self.device()), r, self.dtype() == t ? self : to(self, self.device(), t));
  }
  return add(b == 1.0 ? self : self * beta, scaled);
}

void check_defined(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) WICK_CHECK(t->defined(), "{}: an operand is an undefined tensor", op);
}
}  // namespace

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  check_defined("addcmul", {&self, &tensor1, &tensor2});
  native::check_same_device("addcmul", {&self, &tensor1, &tensor2});
  const DType t = promote_types(self.dtype(), promote_types(tensor1.dtype(), tensor2.dtype()));
  check_scalar_fits("addcmul", "value", value, t, self.sizes());  // Note [Scalar fits dtype]
  check_integral_scalar("addcmul", "value", value, t);
  const Tensor p = mul(tensor1, tensor2);
  return add(self, value.to_double() == 1.0 ? p : p * value);
}

Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  check_defined("addcdiv", {&self, &tensor1, &tensor2});
  native::check_same_device("addcdiv", {&self, &tensor1, &tensor2});
  WICK_CHECK_TYPE(!is_integral(tensor1.dtype(), true) || !is_integral(tensor2.dtype(), true),
                  "addcdiv: integer division of tensor1 ({}) by tensor2 ({}) is not supported (PyTorch 1.13 refuses "
                  "it too); write (self + value * trunc(tensor1 / tensor2)) for the old rounding, or pass floats",
                  tensor1.dtype(), tensor2.dtype());
  const DType t = promote_types(self.dtype(), promote_types(tensor1.dtype(), tensor2.dtype()));
  check_scalar_fits("addcdiv", "value", value, t, self.sizes());  // Note [Scalar fits dtype]
  check_integral_scalar("addcdiv", "value", value, t);
  const Tensor q = div(tensor1, tensor2);
  return add(self, value.to_double() == 1.0 ? q : q * value);
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar beta, Scalar alpha) {
  check_defined("addbmm", {&self, &batch1, &batch2});
  WICK_CHECK(
      batch1.dim() == 3 && batch2.dim() == 3 && batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1),
      "addbmm: expects batch1 [B, n, m] and batch2 [B, m, p] with one B and m, got {} and {}", shape_str(batch1),
      shape_str(batch2));
  // sum_b batch1[b] @ batch2[b] as one product: [n, B * m] @ [B * m, p].
  const int64_t b = batch1.size(0), n = batch1.size(1), m = batch1.size(2), p = batch2.size(2);
  const Tensor lhs = reshape(permute(batch1, {1, 0, 2}), {n, b * m});
  return beta_self_alpha_product("addbmm", self, mm(lhs, reshape(batch2, {b * m, p})), beta, alpha);
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, Scalar beta, Scalar alpha) {
  check_defined("addmv", {&self, &mat, &vec});
  WICK_CHECK(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0),
             "addmv: expects mat [n, m] and vec [m], got {} and {}", shape_str(mat), shape_str(vec));
  return beta_self_alpha_product("addmv", self, matmul(mat, vec), beta, alpha);
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, Scalar beta, Scalar alpha) {
  check_defined("addr", {&self, &vec1, &vec2});
  WICK_CHECK(vec1.dim() == 1 && vec2.dim() == 1, "addr: expects 1-d vec1 and vec2, got {} and {}", shape_str(vec1),
             shape_str(vec2));
  return beta_self_alpha_product("addr", self, outer(vec1, vec2), beta, alpha);
}

Tensor chain_matmul(const std::vector<Tensor>& matrices) {
  WICK_CHECK(!matrices.empty(), "chain_matmul: expects one or more matrices, got none");
  for (size_t i = 0; i < matrices.size(); ++i) {
    WICK_CHECK(matrices[i].defined(), "chain_matmul: matrix {} is an undefined tensor", i);
    WICK_CHECK(matrices[i].dim() == 2, "chain_matmul: matrix {} has shape {}; every matrix must be 2-d", i,
               shape_str(matrices[i]));
  }
  return matrices.size() == 1 ? clone(matrices[0]) : linalg::multi_dot(matrices);
}

Tensor ger(const Tensor& self, const Tensor& vec2) {
  check_defined("ger", {&self, &vec2});
  WICK_CHECK(self.dim() == 1 && vec2.dim() == 1, "ger: expects two 1-d tensors, got {} and {}", shape_str(self),
             shape_str(vec2));
  return outer(self, vec2);
}

Tensor vdot(const Tensor& self, const Tensor& other) {
  check_defined("vdot", {&self, &other});
  WICK_CHECK(self.dim() == 1 && other.dim() == 1 && self.size(0) == other.size(0),
             "vdot: expects two 1-d tensors of one length, got {} and {}", shape_str(self), shape_str(other));
  WICK_CHECK_TYPE(self.dtype() == other.dtype(), "vdot: expects both vectors to have one dtype, got {} and {}",
                  self.dtype(), other.dtype());
  return dot(self, other);
}

Tensor logdet(const Tensor& A) {
  WICK_CHECK(A.defined(), "logdet: the input is an undefined tensor");
  WICK_CHECK(A.dim() >= 2 && A.size(-1) == A.size(-2), "logdet: expects square matrices [..., n, n], got {}",
             shape_str(A));
  WICK_CHECK_TYPE(A.is_floating_point(), "logdet: expects a float32 or float64 tensor, got {}", A.dtype());
  Tensor sign, logabsdet;
  std::tie(sign, logabsdet) = linalg::slogdet(A);
  return where(sign.eq(Scalar(-1.0)), Scalar(std::numeric_limits<double>::quiet_NaN()), logabsdet);
}

Tensor pdist(const Tensor& input, double p) {
  WICK_CHECK(input.defined(), "pdist: the input is an undefined tensor");
  WICK_CHECK(input.dim() == 2, "pdist: expects a 2-d input [N, M], got {}", shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "pdist: expects a float32 or float64 input, got {}", input.dtype());
  WICK_CHECK(p >= 0, "pdist: p must be >= 0, got {}", p);
  const int64_t n = input.size(0);
  // Each pair (i, j), i < j, as a batch of one row against one row: cdist's differences and
  // gradients (PyTorch's _pdist_backward has _cdist_backward's formulas).
  const Tensor ij = triu_indices(n, n, 1, TensorOptions(kInt64).device(input.device()));
  const Tensor a = unsqueeze(index_select(input, 0, select(ij, 0, 0)), 1);
  const Tensor b = unsqueeze(index_select(input, 0, select(ij, 0, 1)), 1);
  return reshape(cdist(a, b, p), {-1});
}

}  // namespace wick
