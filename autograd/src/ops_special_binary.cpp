// The binary and sign ops of functions_special.h: logaddexp2, copysign, heaviside, signbit,
// float_power, true_divide, floor_divide, frexp, ldexp, and the bitwise and integer ops. The
// math lives in the shared functors (Note [Special functions] in wick/core/special_math.h); each
// gradient is PyTorch's formula (derivatives.yaml) or follows from a composition of differentiable
// ops, as PyTorch's composite ops do.
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
void check_defined(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) WICK_CHECK(t->defined(), "{}: an operand is an undefined tensor", op);
}

// PyTorch has no derivative for heaviside and floor_divide: their results carry a node whose
// backward raises, as PyTorch's ("the derivative for ... is not implemented").
void record_not_differentiable(const char* op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (!needs_grad({&a, &b})) return;
  const std::string name = op;
  record_function(std::string(op) + "Backward", {a, b}, {out}, [name](const VL&, const VL&) -> VL {
    WICK_FAIL_T(NotImplementedError,
                "{}: the derivative is not implemented (as in PyTorch 1.13); compute the "
                "op under wick::NoGradGuard or detach its inputs",
                name);
  });
}

// A Scalar operand as a 0-d tensor of the type PyTorch gives the pair (remainder's rule).
Tensor scalar_like(Scalar s, const Tensor& a) {
  return scalar_tensor(s, TensorOptions(native::result_type(a, s)).device(a.device()));
}
}  // namespace

Tensor logaddexp2(const Tensor& a, const Tensor& b) {
  check_defined("logaddexp2", {&a, &b});
  Tensor out = native::binary(BinaryOp::Logaddexp2, a, b);
  if (needs_grad({&a, &b})) {
    const DimVector sa(a.sizes()), sb(b.sizes());
    const DType da = a.dtype(), db = b.dtype();
    // a: g / (1 + 2^(b - a)), b: g / (1 + 2^(a - b)).
    record_function("Logaddexp2Backward", {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor ga = div(g[0], exp2(sub(s[1], s[0])).add(1.0));
                      const Tensor gb = div(g[0], exp2(sub(s[0], s[1])).add(1.0));
                      return {grad_to(ga, sa, da), grad_to(gb, sb, db)};
                    },
                    {a, b});
  }
  return out;
}

Tensor copysign(const Tensor& a, const Tensor& b) {
  check_defined("copysign", {&a, &b});
  Tensor out = native::binary(BinaryOp::Copysign, a, b);
  if (needs_grad({&a, &b})) {
    const DimVector sa(a.sizes()), sb(b.sizes());
    const DType da = a.dtype(), db = b.dtype();
    // a: g * out / a, 0 where a is 0; b: zeros (PyTorch's copysign_tensor_self_backward).
    record_function("CopysignBackward", {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor ratio = masked_fill(div(s[1], s[0]), eq(s[0], zeros_like(s[0])), 0.0);
                      return {grad_to(mul(g[0], ratio), sa, da), zeros(sb, TensorOptions(db).device(g[0].device()))};
                    },
                    {a}, {out});
  }
  return out;
}
Tensor copysign(const Tensor& a, Scalar b) {
  check_defined("copysign", {&a});
  return copysign(a, scalar_like(b, a));
}

Tensor heaviside(const Tensor& a, const Tensor& values) {
  check_defined("heaviside", {&a, &values});
  WICK_CHECK_TYPE(a.dtype() == values.dtype(),
                  "heaviside: not implemented for tensors of different dtypes (input {} of shape {}, values {} of "
                  "shape {}); convert values with .to(input.dtype())",
                  a.dtype(), shape_str(a), values.dtype(), shape_str(values));
  Tensor out = native::binary(BinaryOp::Heaviside, a, values);
  record_not_differentiable("heaviside", a, values, out);
  return out;
}

Tensor signbit(const Tensor& a) {
  check_defined("signbit", {&a});
  if (a.dtype() == kBool) return native::zeros(a.sizes(), kBool, a.device());
  if (!is_floating(a.dtype())) return native::binary(BinaryOp::Lt, a, Scalar(0));
  // copysign(1, a) < 0 reads the sign bit itself: -0.0 and a negative NaN count.
  const Tensor one = native::scalar_tensor(1.0, a.dtype(), a.device());
  return native::binary(BinaryOp::Lt, native::binary(BinaryOp::Copysign, one, a), Scalar(0));
}

Tensor float_power(const Tensor& a, const Tensor& exponent) {
  check_defined("float_power", {&a, &exponent});
  return pow(to(a, a.device(), kFloat64), to(exponent, exponent.device(), kFloat64));
}
Tensor float_power(const Tensor& a, Scalar exponent) {
  check_defined("float_power", {&a});
  return pow(to(a, a.device(), kFloat64), Scalar(exponent.to_double()));
}
Tensor float_power(Scalar a, const Tensor& exponent) {
  check_defined("float_power", {&exponent});
  return pow(scalar_tensor(a.to_double(), TensorOptions(kFloat64).device(exponent.device())),
             to(exponent, exponent.device(), kFloat64));
}

Tensor true_divide(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor true_divide(const Tensor& a, Scalar b) { return a.div(b); }

Tensor floor_divide(const Tensor& a, const Tensor& b) {
  check_divisor("floor_divide", a, b);
  Tensor out = native::binary(BinaryOp::FloorDivide, a, b);
  record_not_differentiable("floor_divide", a, b, out);
  return out;
}
Tensor floor_divide(const Tensor& a, Scalar b) {
  check_defined("floor_divide", {&a});
  return floor_divide(a, scalar_like(b, a));
}

std::tuple<Tensor, Tensor> frexp(const Tensor& a) {
  check_defined("frexp", {&a});
  WICK_CHECK_TYPE(is_floating(a.dtype()), "frexp: only supports floating-point tensors, got {} of shape {}", a.dtype(),
                  shape_str(a));
  Tensor mantissa = native::unary(UnaryOp::FrexpMantissa, a);
  const Tensor e = native::unary(UnaryOp::FrexpExponent, a);  // the exponent in a's dtype
  if (needs_grad({&a})) {
    // g / 2^exponent (PyTorch's), with 2^exponent in a's dtype: exact for every exponent.
    record_function("FrexpBackward", {a}, {mantissa},
                    [e](const VL& g, const VL&) -> VL { return {div(g[0], exp2(e))}; });
  }
  return {mantissa, native::to(e, e.device(), kInt64)};
}

Tensor ldexp(const Tensor& a, const Tensor& b) {
  check_defined("ldexp", {&a, &b});
  // a * 2^b, as PyTorch's composite: 2 is float32 for an integer b, else b's dtype.
  const DType base = is_floating(b.dtype()) ? b.dtype() : kFloat32;
  return mul(a, pow(scalar_tensor(2.0, TensorOptions(base).device(b.device())), b));
}

Tensor bitwise_and(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::BitwiseAnd, a, b); }
Tensor bitwise_and(const Tensor& a, Scalar b) { return native::binary(BinaryOp::BitwiseAnd, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::BitwiseOr, a, b); }
Tensor bitwise_or(const Tensor& a, Scalar b) { return native::binary(BinaryOp::BitwiseOr, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::BitwiseXor, a, b); }
Tensor bitwise_xor(const Tensor& a, Scalar b) { return native::binary(BinaryOp::BitwiseXor, a, b); }
Tensor bitwise_not(const Tensor& a) { return native::unary(UnaryOp::BitwiseNot, a); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::LogicalXor, a, b); }
Tensor gcd(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Gcd, a, b); }
Tensor lcm(const Tensor& a, const Tensor& b) { return native::binary(BinaryOp::Lcm, a, b); }

}  // namespace wick
