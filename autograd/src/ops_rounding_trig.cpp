// Rounding (floor, ceil, round, trunc, frac), remainder, fmod, atan2 and the trig/hyperbolic set
// (tan, asin, ..., atanh). The math lives in the shared functors (functors.h); each backward is
// written on the public API, so double backward works.
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

// A unary op whose backward uses the input x (saved) and the output (saved when save_out).
Tensor detail::unary_fn(UnaryOp op, const Tensor& a, const char* name, UnaryBackward bw, bool save_out, double p0) {
  Tensor out = distinct(native::unary(op, a, p0), a);
  if (needs_grad({&a})) {
    record_function(
        name, {a}, {out},
        [bw, save_out](const VL& g, const VL& s) -> VL { return {bw(g[0], s[0], save_out ? s[1] : Tensor())}; }, {a},
        save_out ? VL{out} : VL{});
  }
  return out;
}

// remainder and fmod (and floor_divide) refuse bool and, for integers, a zero divisor (C++ leaves
// it undefined; PyTorch raises ZeroDivisionError), before anything runs.
void detail::check_divisor(const char* op, const Tensor& a, const Tensor& b) {
  WICK_CHECK(a.defined() && b.defined(), "{}: an operand is an undefined tensor", op);
  const DType common = native::result_type(a, b);
  WICK_CHECK_TYPE(common != kBool,
                  "{}: not supported for bool tensors (operands of shapes [{}] and [{}]); convert with "
                  ".to(wick::kInt64)",
                  op, fmt::join(a.sizes(), ", "), fmt::join(b.sizes(), ", "));
  if (is_floating(common) || b.numel() == 0) return;
  const bool has_zero = any(eq(b, zeros_like(b))).item<bool>();
  WICK_CHECK(!has_zero,
             "{}: integer division by zero (a {} divisor of shape [{}] holds a 0; dividend shape [{}]); remove the "
             "zeros or convert to a floating type, where the result is NaN",
             op, b.dtype(), fmt::join(b.sizes(), ", "), fmt::join(a.sizes(), ", "));
}

namespace {
// Rounding: the gradient is zero everywhere, as PyTorch's; integers come back unchanged.
Tensor rounding(UnaryOp op, const Tensor& a, const char* name) {
  Tensor out = distinct(native::unary(op, a), a);
  if (needs_grad({&a}))
    record_function(name, {a}, {out}, [](const VL& g, const VL&) -> VL { return {zeros_like(g[0])}; });
  return out;
}
Tensor one_minus_square(const Tensor& x) { return sub(ones_like(x), mul(x, x)); }

// out = op(a, b); the gradient is g for a and -g * rounded(a / b) for b (rounded: floor for
// remainder, trunc for fmod), as PyTorch's.
Tensor modulo(BinaryOp op, const Tensor& a, const Tensor& b, const char* name, const char* bw_name) {
  check_divisor(name, a, b);
  Tensor out = native::binary(op, a, b);
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    const bool floor_q = op == BinaryOp::Remainder;
    record_function(bw_name, {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor q = div(s[0], s[1]);
                      q = floor_q ? floor(q) : trunc(q);
                      return {grad_to(g[0], sa, da), grad_to(neg(mul(g[0], q)), sb, db)};
                    },
                    {a, b});
  }
  return out;
}
}  // namespace

Tensor floor(const Tensor& a) { return rounding(UnaryOp::Floor, a, "FloorBackward"); }
Tensor ceil(const Tensor& a) { return rounding(UnaryOp::Ceil, a, "CeilBackward"); }
Tensor round(const Tensor& a) { return rounding(UnaryOp::Round, a, "RoundBackward"); }
Tensor trunc(const Tensor& a) { return rounding(UnaryOp::Trunc, a, "TruncBackward"); }
Tensor frac(const Tensor& a) {
  WICK_CHECK(a.defined(), "frac: the input is an undefined tensor");
  WICK_CHECK_TYPE(is_floating(a.dtype()),
                  "frac: not supported for {} tensors (shape [{}]); convert with .to(wick::kFloat32) first", a.dtype(),
                  fmt::join(a.sizes(), ", "));
  return sub(a, trunc(a));  // gradient g, as PyTorch's
}

Tensor remainder(const Tensor& a, const Tensor& b) {
  return modulo(BinaryOp::Remainder, a, b, "remainder", "RemainderBackward");
}
Tensor remainder(const Tensor& a, Scalar b) {
  WICK_CHECK(a.defined(), "remainder: the input is an undefined tensor");
  return remainder(a, scalar_tensor(b, TensorOptions(native::result_type(a, b)).device(a.device())));
}
Tensor fmod(const Tensor& a, const Tensor& b) { return modulo(BinaryOp::Fmod, a, b, "fmod", "FmodBackward"); }
Tensor fmod(const Tensor& a, Scalar b) {
  WICK_CHECK(a.defined(), "fmod: the input is an undefined tensor");
  return fmod(a, scalar_tensor(b, TensorOptions(native::result_type(a, b)).device(a.device())));
}

Tensor atan2(const Tensor& a, const Tensor& b) {
  Tensor out = native::binary(BinaryOp::Atan2, a, b);
  if (needs_grad({&a, &b})) {
    DimVector sa(a.sizes()), sb(b.sizes());
    DType da = a.dtype(), db = b.dtype();
    record_function("Atan2Backward", {a, b}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor r = div(g[0], add(mul(s[0], s[0]), mul(s[1], s[1])));  // g / (a^2 + b^2)
                      return {grad_to(mul(r, s[1]), sa, da), grad_to(neg(mul(r, s[0])), sb, db)};
                    },
                    {a, b});
  }
  return out;
}

Tensor tan(const Tensor& a) {
  return unary_fn(
      UnaryOp::Tan, a, "TanBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return mul(g, add(ones_like(o), mul(o, o))); }, true);
}
Tensor asin(const Tensor& a) {
  return unary_fn(
      UnaryOp::Asin, a, "AsinBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, rsqrt(one_minus_square(x))); }, false);
}
Tensor acos(const Tensor& a) {
  return unary_fn(
      UnaryOp::Acos, a, "AcosBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return neg(mul(g, rsqrt(one_minus_square(x)))); }, false);
}
Tensor atan(const Tensor& a) {
  return unary_fn(
      UnaryOp::Atan, a, "AtanBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return div(g, add(ones_like(x), mul(x, x))); }, false);
}
Tensor sinh(const Tensor& a) {
  return unary_fn(
      UnaryOp::Sinh, a, "SinhBackward", [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, cosh(x)); },
      false);
}
Tensor cosh(const Tensor& a) {
  return unary_fn(
      UnaryOp::Cosh, a, "CoshBackward", [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, sinh(x)); },
      false);
}
Tensor asinh(const Tensor& a) {
  return unary_fn(
      UnaryOp::Asinh, a, "AsinhBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, rsqrt(add(mul(x, x), ones_like(x)))); },
      false);
}
Tensor acosh(const Tensor& a) {
  return unary_fn(
      UnaryOp::Acosh, a, "AcoshBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, rsqrt(sub(mul(x, x), ones_like(x)))); },
      false);
}
Tensor atanh(const Tensor& a) {
  return unary_fn(
      UnaryOp::Atanh, a, "AtanhBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return div(g, one_minus_square(x)); }, false);
}

}  // namespace wick
