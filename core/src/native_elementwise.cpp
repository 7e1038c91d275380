// Elementwise front-ends: promotion, broadcasting, output allocation, then the backend kernel.
#include <cmath>

#include "fill_value.h"
#include "memory_overlap.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/scalar_fit.h"
#include "wick/core/stubs.h"

namespace wick::native {

namespace {
const char* unary_name(UnaryOp op) {
  static const char* names[] = {"neg",       "abs",         "exp",         "log",    "sqrt",  "rsqrt", "tanh",
                                "sigmoid",   "relu",        "gelu",        "sin",    "cos",   "sign",  "reciprocal",
                                "square",    "erf",         "log1p",       "expm1",  "floor", "pow",   "clamp_min",
                                "clamp_max", "logical_not", "ceil",        "round",  "trunc", "tan",   "asin",
                                "acos",      "atan",        "sinh",        "cosh",   "asinh", "acosh", "atanh",
                                "digamma",   "lgamma",      "polygamma",   "erfinv", "erfc",  "i0",    "special_i1",
                                "sinc",      "exp2",        "bitwise_not", "frexp",  "frexp"};
  return names[static_cast<int>(op)];
}
const char* binary_name(BinaryOp op) {
  static const char* names[] = {"add",
                                "sub",
                                "mul",
                                "div",
                                "pow",
                                "maximum",
                                "minimum",
                                "relu_backward",
                                "gelu_backward",
                                "eq",
                                "ne",
                                "lt",
                                "le",
                                "gt",
                                "ge",
                                "logical_and",
                                "logical_or",
                                "remainder",
                                "fmod",
                                "atan2",
                                "logaddexp2",
                                "copysign",
                                "heaviside",
                                "floor_divide",
                                "bitwise_and",
                                "bitwise_or",
                                "bitwise_xor",
                                "logical_xor",
                                "gcd",
                                "lcm"};
  return names[static_cast<int>(op)];
}
// Ops whose integer inputs produce floats (torch's int-to-float unary ops).
bool unary_needs_float(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Gelu:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Reciprocal:
    case UnaryOp::Erf:
    case UnaryOp::Log1p:
    case UnaryOp::Expm1:
    case UnaryOp::Tan:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Atan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Asinh:
    case UnaryOp::Acosh:
    case UnaryOp::Atanh:
    case UnaryOp::Digamma:
    case UnaryOp::Lgamma:
    case UnaryOp::Polygamma:
    case UnaryOp::Erfinv:
    case UnaryOp::Erfc:
    case UnaryOp::I0:
    case UnaryOp::I1:
    case UnaryOp::Sinc:
    case UnaryOp::Exp2:
      return true;
    default:
      return false;
  }
}
// Ops whose integer operands produce floats (true division, atan2).
bool binary_promotes_to_float(BinaryOp op) {
  return op == BinaryOp::Div || op == BinaryOp::Atan2 || op == BinaryOp::Copysign;
}
// Whether `v` is an integer that int64 holds (an integral exponent keeps pow integral).
bool double_is_int64(double v) { return double_fits_int64(v) && v == std::trunc(v); }

// PyTorch refuses an integer tensor to a negative integer scalar power (integer pow of a tensor
// exponent instead gives 0, 1 or -1: Note [Integer overflow and conversions]).
void check_integer_power(const Tensor& a, double exponent) {
  WICK_CHECK(exponent >= 0,
             "pow: integers to negative integer powers are not allowed (a {} tensor of shape [{}] to the power {}); "
             "convert the tensor to a floating type first, e.g. .to(wick::kFloat32)",
             a.dtype(), fmt::join(a.sizes(), ", "), exponent);
}

// Whether op's result is floating point whatever a's dtype (a fractional power included).
bool result_is_floating(UnaryOp op, double p0) {
  return unary_needs_float(op) || (op == UnaryOp::PowScalar && !double_is_int64(p0));
}

// The checks unary and unary_ share, for a result of dtype `result`; `suffix` is "_" in place.
void check_unary_operands(UnaryOp op, const Tensor& a, DType result, double p0, const char* suffix) {
  WICK_CHECK_TYPE(!(a.dtype() == kBool && (op == UnaryOp::Neg || op == UnaryOp::Sign)),
                  "{}{}: not supported for bool tensors; use logical_not or convert with .to(wick::kInt64)",
                  unary_name(op), suffix);
  if (op == UnaryOp::PowScalar && !is_floating(result)) check_integer_power(a, p0);
  WICK_CHECK_TYPE(op != UnaryOp::BitwiseNot || !is_floating(a.dtype()),
                  "bitwise_not{}: not supported for {} tensors (shape [{}]); it takes int64 or bool tensors", suffix,
                  a.dtype(), fmt::join(a.sizes(), ", "));
  WICK_CHECK_TYPE((op != UnaryOp::FrexpMantissa && op != UnaryOp::FrexpExponent) || is_floating(a.dtype()),
                  "frexp: only supports floating-point tensors, got {} of shape [{}]", a.dtype(),
                  fmt::join(a.sizes(), ", "));
}

// The operand types each special32 binary op refuses (PyTorch's "not implemented for" errors):
// bitwise ops, gcd and lcm take integers (gcd and lcm not bool, nor floor_divide), logaddexp2
// floats. `b` is null for a Scalar operand.
void check_binary_operands(BinaryOp op, DType common, const Tensor& a, const Tensor* b) {
  if (op < BinaryOp::Logaddexp2) return;  // the older ops: no such refusal
  const bool bitwise = op == BinaryOp::BitwiseAnd || op == BinaryOp::BitwiseOr || op == BinaryOp::BitwiseXor;
  const bool gcd = op == BinaryOp::Gcd || op == BinaryOp::Lcm;
  const char* wants = nullptr;
  if ((bitwise || gcd) && is_floating(common)) wants = bitwise ? "int64 or bool" : "int64";
  if ((gcd || op == BinaryOp::FloorDivide) && common == kBool) wants = gcd ? "int64" : "int64 or floating";
  if (op == BinaryOp::Logaddexp2 && !is_floating(common)) wants = "floating-point";
  WICK_CHECK_TYPE(
      wants == nullptr, "{}: not implemented for {} operands ({} of shape [{}] and {}); it takes {} tensors",
      binary_name(op), common, a.dtype(), fmt::join(a.sizes(), ", "),
      b ? fmt::format("{} of shape [{}]", b->dtype(), fmt::join(b->sizes(), ", ")) : std::string("a scalar"), wants);
}
}  // namespace

Tensor unary(UnaryOp op, const Tensor& a, double p0, double p1) {
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", unary_name(op));
  DType dt = a.dtype();
  if (op == UnaryOp::LogicalNot) {
    Tensor out = empty(a.sizes(), kBool, a.device());
    Tensor in = dt == kBool ? a : to(a, a.device(), kBool);
    if (out.numel()) backend(a.device()).unary(op, kernel_tensor(out), kernel_tensor(in), p0, p1);
    return out;
  }
  if (!is_floating(dt) && result_is_floating(op, p0)) dt = kFloat32;
  // square and an integral pow of bool promote to int64, as PyTorch's (square is pow(x, 2)).
  if (dt == kBool && (op == UnaryOp::Square || op == UnaryOp::PowScalar)) dt = kInt64;
  check_unary_operands(op, a, dt, p0, "");
  Tensor in = dt == a.dtype() ? a : to(a, a.device(), dt);
  Tensor out = empty(a.sizes(), dt, a.device());
  if (out.numel()) backend(a.device()).unary(op, kernel_tensor(out), kernel_tensor(in), p0, p1);
  return out;
}

void unary_(UnaryOp op, const Tensor& a, double p0, double p1) {
  WICK_CHECK(a.defined(), "{}_: the input is an undefined tensor", unary_name(op));
  const DType dt = a.dtype();  // the result keeps a's dtype
  WICK_CHECK_TYPE(!result_is_floating(op, p0) || is_floating(dt),
                  "{}_: the result is floating point and cannot be written in place into a {} tensor", unary_name(op),
                  dt);
  WICK_CHECK_TYPE(op != UnaryOp::LogicalNot || dt == kBool,
                  "logical_not_: the result is bool and cannot be written in place into a {} tensor", dt);
  check_unary_operands(op, a, dt, p0, "_");
  check_no_internal_overlap(a, unary_name(op), "_");  // Note [In-place writes and overlapping memory]
  a.bump_version();
  if (a.numel()) backend(a.device()).unary(op, kernel_tensor(a), kernel_tensor(a), p0, p1);
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_name(op);
  check_same_device(name, {&a, &b});
  DType common = result_type(a, b);
  check_binary_operands(op, common, a, &b);
  if (binary_promotes_to_float(op) && !is_floating(common)) common = kFloat32;  // true division, atan2
  WICK_CHECK_TYPE(!(common == kBool && (op == BinaryOp::Sub)),
                  "sub: subtracting bool tensors is not supported; use logical_xor or convert with .to(wick::kInt64)");
  const Device dev = a.device();
  // Converted operands only when needed: `cond ? a : to(...)` would copy the handle (two atomic
  // reference-count updates) even when no conversion happens.
  Tensor a_conv, b_conv;
  if (a.dtype() != common) a_conv = to(a, dev, common);
  if (b.dtype() != common) b_conv = to(b, dev, common);
  const Tensor& a2 = a_conv.defined() ? a_conv : a;
  const Tensor& b2 = b_conv.defined() ? b_conv : b;
  const DType out_dtype = binary_op_returns_bool(op) ? kBool : common;
  if (a.sizes() == b.sizes()) {  // fast path: no broadcasting
    Tensor out = empty(a.sizes(), out_dtype, dev);
    if (out.numel()) backend(dev).binary(op, kernel_tensor(out), kernel_tensor(a2), kernel_tensor(b2));
    return out;
  }
  DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = empty(shape, out_dtype, dev);
  if (out.numel())
    backend(dev).binary(op, kernel_tensor(out), kernel_tensor_broadcast(a2, shape), kernel_tensor_broadcast(b2, shape));
  return out;
}

namespace {
// Note [Scalar operands]: a backend with the stub takes the scalar as a kernel argument (one
// launch) when the tensor already has the op's dtype and the op needs no conversion or refusal
// of the tensor-tensor path (integer division promotes, bool subtraction is an error).
// An integer beyond 2^53 would round in the kernel's double (Note [Integer overflow and
// conversions]): it takes the 0-d tensor, which full() writes exactly.
bool takes_scalar_kernel(BinaryOp op, const Tensor& a, Scalar b, DType common) {
  return stubs::binary_scalar.find(a.device().type) && a.dtype() == common &&
         (b.is_floating() || int64_fits_double(b.to_int())) &&
         !(binary_promotes_to_float(op) && !is_floating(common)) && !(common == kBool && op == BinaryOp::Sub);
}
}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, Scalar b) {
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", binary_name(op));
  const DType common = result_type(a, b);
  check_binary_operands(op, common, a, nullptr);
  if (op == BinaryOp::Pow && !is_floating(common)) check_integer_power(a, b.to_double());
  // Otherwise, and where the tensor-tensor path converts or refuses, a 0-d tensor.
  if (takes_scalar_kernel(op, a, b, common)) {
    Tensor out = empty(a.sizes(), binary_op_returns_bool(op) ? kBool : common, a.device());
    if (out.numel()) stubs::binary_scalar(a.device().type, op, kernel_tensor(out), kernel_tensor(a), b.to_double());
    return out;
  }
  return binary(op, a, scalar_tensor(b, common, a.device()));
}

void binary_(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_name(op);
  check_same_device(name, {&a, &b});
  WICK_CHECK_NOT_IMPLEMENTED(!binary_op_returns_bool(op), "{}_: comparison results cannot be written in place", name);
  DType common = result_type(a, b);
  check_binary_operands(op, common, a, &b);
  if (binary_promotes_to_float(op) && !is_floating(common)) common = kFloat32;
  // torch.can_cast, not "common == promote(common, a)": float32.add_(float64) is legal.
  WICK_CHECK_TYPE(can_cast(common, a.dtype()),
                  "{}_: the result type {} cannot be written in place into a {} tensor (operands {} and {})", name,
                  common, a.dtype(), a.dtype(), b.dtype());
  DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  WICK_CHECK(shape == DimVector(a.sizes()),
             "{}_: the operand of shape [{}] cannot be broadcast to the in-place "
             "target's shape [{}]",
             name, fmt::join(b.sizes(), ", "), fmt::join(a.sizes(), ", "));
  check_no_internal_overlap(a, name, "_");  // Note [In-place writes and overlapping memory]
  const Tensor b2 = b.dtype() == a.dtype() ? unaliased_operand(b, a) : to(b, b.device(), a.dtype());
  a.bump_version();
  if (a.numel()) backend(a.device()).binary(op, kernel_tensor(a), kernel_tensor(a), kernel_tensor_broadcast(b2, shape));
}

void binary_(BinaryOp op, const Tensor& a, Scalar b) {
  WICK_CHECK(a.defined(), "{}_: the input is an undefined tensor", binary_name(op));
  const DType common = result_type(a, b);
  check_binary_operands(op, common, a, nullptr);
  if (op == BinaryOp::Pow && !is_floating(common)) check_integer_power(a, b.to_double());
  if (!binary_op_returns_bool(op) && takes_scalar_kernel(op, a, b, common)) {  // Note [Scalar operands]
    check_no_internal_overlap(a, binary_name(op), "_");  // Note [In-place writes and overlapping memory]
    a.bump_version();
    if (a.numel()) stubs::binary_scalar(a.device().type, op, kernel_tensor(a), kernel_tensor(a), b.to_double());
    return;
  }
  binary_(op, a, scalar_tensor(b, common, a.device()));
}

void scaled_copy_(const Tensor& dst, const Tensor& src, double factor) {
  WICK_CHECK(dst.defined() && src.defined(), "scaled_copy_: both tensors must be defined");
  WICK_CHECK(dst.sizes() == src.sizes(), "scaled_copy_: the destination has shape [{}] but the source [{}]",
             fmt::join(dst.sizes(), ", "), fmt::join(src.sizes(), ", "));
  WICK_CHECK_TYPE(is_floating(dst.dtype()), "scaled_copy_: expects a floating-point destination, got {}", dst.dtype());
  if (dst.dtype() != src.dtype() || dst.device() != src.device() ||
      !takes_scalar_kernel(BinaryOp::Mul, src, Scalar(factor), src.dtype())) {
    copy_(dst, src);  // converts, moves; or a backend without the scalar stub
    binary_(BinaryOp::Mul, dst, Scalar(factor));
    return;
  }
  check_no_internal_overlap(dst, "scaled_copy_");  // Note [In-place writes and overlapping memory]
  const Tensor s = unaliased_operand(src, dst);
  dst.bump_version();
  if (dst.numel()) stubs::binary_scalar(dst.device().type, BinaryOp::Mul, kernel_tensor(dst), kernel_tensor(s), factor);
}

void fill_(const Tensor& t, Scalar v) {
  WICK_CHECK(t.defined(), "fill_: the tensor is undefined");
  // The kernel converts the double to the tensor's dtype: it must fit (Note [Scalar fits dtype]).
  check_scalar_fits("fill_", "value", v, t.dtype(), t.sizes());
  t.bump_version();
  fill_value(t, v);
}

void fill_value(const Tensor& t, Scalar v) {
  if (!t.numel()) return;
  if (!v.is_floating() && t.dtype() == kInt64 && !int64_fits_double(v.to_int())) {
    // fill's double would round it (Note [Integer overflow and conversions]): written exactly
    // on the host, then broadcast into t by the device's copy.
    Tensor one = empty({}, kInt64, kCPU);
    *one.data_ptr<int64_t>() = v.to_int();
    const Tensor src = t.device() == kCPU ? one : to(one, t.device(), kInt64);
    backend(t.device()).copy(kernel_tensor(t), kernel_tensor_broadcast(src, t.sizes()));
    return;
  }
  backend(t.device()).fill(kernel_tensor(t), v.to_double());
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_device("where", {&cond, &a, &b});
  WICK_CHECK_TYPE(cond.dtype() == kBool,
                  "where: the condition must be a bool tensor, got {} (compare first, e.g. x.gt(0))", cond.dtype());
  const DType common = result_type(a, b);
  const Device dev = a.device();
  const Tensor& a2 = a.dtype() == common ? a : to(a, dev, common);
  const Tensor& b2 = b.dtype() == common ? b : to(b, dev, common);
  DimVector shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Tensor out = empty(shape, common, dev);
  if (out.numel())
    backend(dev).where(kernel_tensor(out), kernel_tensor_broadcast(cond, shape), kernel_tensor_broadcast(a2, shape),
                       kernel_tensor_broadcast(b2, shape));
  return out;
}

Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  WICK_CHECK(min || max, "clamp: at least one of min and max must be given");
  const bool to_float = !is_floating(t.dtype()) && ((min && min->is_floating()) || (max && max->is_floating()));
  // The bounds are converted to the promoted dtype (Note [Scalar fits dtype]).
  const DType dtype = to_float ? kFloat32 : t.dtype();
  if (min) check_scalar_fits("clamp", "min", *min, dtype, t.sizes());
  if (max) check_scalar_fits("clamp", "max", *max, dtype, t.sizes());
  Tensor out = to_float ? to(t, t.device(), kFloat32) : t;
  // An int64 bound beyond 2^53 would round in the kernel's double (Note [Integer overflow and
  // conversions]): compared exactly as a 0-d tensor instead.
  const auto exact = [&](const Scalar& s) { return s.is_floating() || int64_fits_double(s.to_int()); };
  if (min)
    out = exact(*min) ? unary(UnaryOp::ClampMin, out, min->to_double())
                      : binary(BinaryOp::Maximum, out, scalar_tensor(*min, out.dtype(), out.device()));
  if (max)
    out = exact(*max) ? unary(UnaryOp::ClampMax, out, max->to_double())
                      : binary(BinaryOp::Minimum, out, scalar_tensor(*max, out.dtype(), out.device()));
  if (out.is_same(t)) out = clone(t);
  return out;
}

}  // namespace wick::native
