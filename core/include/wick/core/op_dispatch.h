#pragma once
// Maps the op enums of backend.h to the functors of functors.h, for the CPU loops and the CUDA
// kernels alike: `dispatch_unary_op(op, [&](auto functor) { ... })`.
#include "wick/core/backend.h"
#include "wick/core/functors.h"

namespace wick {

template <typename F>
decltype(auto) dispatch_unary_op(UnaryOp op, F&& f) {
  using namespace math;
  switch (op) {
    case UnaryOp::Neg:
      return f(Neg{});
    case UnaryOp::Abs:
      return f(Abs{});
    case UnaryOp::Exp:
      return f(Exp{});
    case UnaryOp::Log:
      return f(Log{});
    case UnaryOp::Sqrt:
      return f(Sqrt{});
    case UnaryOp::Rsqrt:
      return f(Rsqrt{});
    case UnaryOp::Tanh:
      return f(Tanh{});
    case UnaryOp::Sigmoid:
      return f(Sigmoid{});
    case UnaryOp::Relu:
      return f(Relu{});
    case UnaryOp::Gelu:
      return f(Gelu{});
    case UnaryOp::Sin:
      return f(Sin{});
    case UnaryOp::Cos:
      return f(Cos{});
    case UnaryOp::Sign:
      return f(Sign{});
    case UnaryOp::Reciprocal:
      return f(Reciprocal{});
    case UnaryOp::Square:
      return f(Square{});
    case UnaryOp::Erf:
      return f(Erf{});
    case UnaryOp::Log1p:
      return f(Log1p{});
    case UnaryOp::Expm1:
      return f(Expm1{});
    case UnaryOp::Floor:
      return f(Floor{});
    case UnaryOp::PowScalar:
      return f(PowScalar{});
    case UnaryOp::ClampMin:
      return f(ClampMin{});
    case UnaryOp::ClampMax:
      return f(ClampMax{});
    case UnaryOp::LogicalNot:
      return f(LogicalNot{});
    case UnaryOp::Ceil:
      return f(Ceil{});
    case UnaryOp::Round:
      return f(Round{});
    case UnaryOp::Trunc:
      return f(Trunc{});
    case UnaryOp::Tan:
      return f(Tan{});
    case UnaryOp::Asin:
      return f(Asin{});
    case UnaryOp::Acos:
      return f(Acos{});
    case UnaryOp::Atan:
      return f(Atan{});
    case UnaryOp::Sinh:
      return f(Sinh{});
    case UnaryOp::Cosh:
      return f(Cosh{});
    case UnaryOp::Asinh:
      return f(Asinh{});
    case UnaryOp::Acosh:
      return f(Acosh{});
    case UnaryOp::Atanh:
      return f(Atanh{});
    case UnaryOp::Digamma:
      return f(Digamma{});
    case UnaryOp::Lgamma:
      return f(Lgamma{});
    case UnaryOp::Polygamma:
      return f(Polygamma{});
    case UnaryOp::Erfinv:
      return f(Erfinv{});
    case UnaryOp::Erfc:
      return f(Erfc{});
    case UnaryOp::I0:
      return f(I0{});
    case UnaryOp::I1:
      return f(I1{});
    case UnaryOp::Sinc:
      return f(Sinc{});
    case UnaryOp::Exp2:
      return f(Exp2{});
    case UnaryOp::BitwiseNot:
      return f(BitwiseNot{});
    case UnaryOp::FrexpMantissa:
      return f(FrexpMantissa{});
    case UnaryOp::FrexpExponent:
      return f(FrexpExponent{});
  }
  return f(Neg{});
}

template <typename F>
decltype(auto) dispatch_binary_op(BinaryOp op, F&& f) {
  using namespace math;
  switch (op) {
    case BinaryOp::Add:
      return f(Add{});
    case BinaryOp::Sub:
      return f(Sub{});
    case BinaryOp::Mul:
      return f(Mul{});
    case BinaryOp::Div:
      return f(Div{});
    case BinaryOp::Pow:
      return f(Pow{});
    case BinaryOp::Maximum:
      return f(Maximum{});
    case BinaryOp::Minimum:
      return f(Minimum{});
    case BinaryOp::ReluBackward:
      return f(ReluBackward{});
    case BinaryOp::GeluBackward:
      return f(GeluBackward{});
    case BinaryOp::Remainder:
      return f(Remainder{});
    case BinaryOp::Fmod:
      return f(Fmod{});
    case BinaryOp::Atan2:
      return f(Atan2{});
    case BinaryOp::Eq:
      return f(Eq{});
    case BinaryOp::Ne:
      return f(Ne{});
    case BinaryOp::Lt:
      return f(Lt{});
    case BinaryOp::Le:
      return f(Le{});
    case BinaryOp::Gt:
      return f(Gt{});
    case BinaryOp::Ge:
      return f(Ge{});
    case BinaryOp::LogicalAnd:
      return f(LogicalAnd{});
    case BinaryOp::LogicalOr:
      return f(LogicalOr{});
    case BinaryOp::Logaddexp2:
      return f(Logaddexp2{});
    case BinaryOp::Copysign:
      return f(Copysign{});
    case BinaryOp::Heaviside:
      return f(Heaviside{});
    case BinaryOp::FloorDivide:
      return f(FloorDivide{});
    case BinaryOp::BitwiseAnd:
      return f(BitwiseAnd{});
    case BinaryOp::BitwiseOr:
      return f(BitwiseOr{});
    case BinaryOp::BitwiseXor:
      return f(BitwiseXor{});
    case BinaryOp::LogicalXor:
      return f(LogicalXor{});
    case BinaryOp::Gcd:
      return f(Gcd{});
    case BinaryOp::Lcm:
      return f(Lcm{});
  }
  return f(Add{});
}

}  // namespace wick
