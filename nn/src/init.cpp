#include "wick/nn/init.h"

#include <fmt/format.h>

#include <cmath>

#include "init_checks.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::nn::init {

double calculate_gain(Nonlinearity nl, double param) {
  switch (nl) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv1d:
    case Nonlinearity::Conv2d:
    case Nonlinearity::Conv3d:
    case Nonlinearity::Sigmoid:
      return 1.0;
    case Nonlinearity::Tanh:
      return 5.0 / 3.0;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: {
      return std::sqrt(2.0 / (1.0 + param * param));
    }
    case Nonlinearity::SELU:
      return 3.0 / 4.0;
  }
  return 1.0;
}

Fans calculate_fan_in_and_fan_out(const Tensor& t) {
  WICK_CHECK(t.defined() && t.dim() >= 2,
             "init: fan in and fan out cannot be computed for a tensor with fewer than 2 dims (shape [{}])",
             t.defined() ? fmt::format("{}", fmt::join(t.sizes(), ", ")) : std::string("undefined"));
  int64_t rf = 1;
  for (int64_t d = 2; d < t.dim(); ++d) rf *= t.size(d);
  return {t.size(1) * rf, t.size(0) * rf};
}

namespace {
using detail::check_floating;
// t <- src * scale + shift, elementwise, without recording a graph.
void assign_affine(const Tensor& t, const Tensor& src, double scale, double shift) {
  Tensor v = native::binary(BinaryOp::Add, native::binary(BinaryOp::Mul, src, Scalar(scale)), Scalar(shift));
  native::copy_(t, v);
}
}  // namespace

Tensor uniform_(Tensor t, double a, double b) {
  check_floating("uniform_", t);
  WICK_CHECK(std::isfinite(a) && std::isfinite(b) && a <= b,
             "init.uniform_: expects a finite range [a, b) with a <= b, got a={}, b={}", a, b);
  NoGradGuard no_grad;
  if (t.numel()) assign_affine(t, native::rand(t.sizes(), t.dtype(), t.device()), b - a, a);
  return t;
}

Tensor normal_(Tensor t, double mean, double std) {
  check_floating("normal_", t);
  WICK_CHECK(std >= 0 && std::isfinite(std) && std::isfinite(mean),
             "init.normal_: mean must be finite and std finite and non-negative, got mean={}, std={}", mean, std);
  NoGradGuard no_grad;
  if (t.numel()) assign_affine(t, native::randn(t.sizes(), t.dtype(), t.device()), std, mean);
  return t;
}

Tensor constant_(Tensor t, double value) {
  WICK_CHECK(t.defined(), "init.constant_: the tensor is undefined");
  NoGradGuard no_grad;
  native::fill_(t, value);
  return t;
}
Tensor zeros_(Tensor t) { return constant_(std::move(t), 0.0); }
Tensor ones_(Tensor t) { return constant_(std::move(t), 1.0); }

namespace {
// gain * sqrt(2 / (fan_in + fan_out)); a ValueError naming `op` when both fans are 0 (PyTorch
// divides by zero there: ZeroDivisionError).
double xavier_std(const Tensor& t, double gain, const char* op) {
  const Fans f = calculate_fan_in_and_fan_out(t);
  WICK_CHECK(f.fan_in + f.fan_out > 0,
             "init.{}: fan_in and fan_out are both 0 for shape [{}], so the std gain * sqrt(2 / (fan_in + "
             "fan_out)) is undefined (PyTorch raises ZeroDivisionError); skip this tensor or give it a non-zero fan",
             op, fmt::join(t.sizes(), ", "));
  return gain * std::sqrt(2.0 / static_cast<double>(f.fan_in + f.fan_out));
}
}  // namespace

Tensor xavier_uniform_(Tensor t, double gain) {
  const double a = std::sqrt(3.0) * xavier_std(t, gain, "xavier_uniform_");
  return uniform_(std::move(t), -a, a);
}

Tensor xavier_normal_(Tensor t, double gain) {
  const double sd = xavier_std(t, gain, "xavier_normal_");
  return normal_(std::move(t), 0.0, sd);
}

namespace {
double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity nl, const char* op) {
  const Fans f = calculate_fan_in_and_fan_out(t);
  const int64_t fan = mode == FanMode::FanIn ? f.fan_in : f.fan_out;
  WICK_CHECK(fan > 0, "init.{}: the tensor has a zero-size fan (shape [{}]); nothing to initialize from", op,
             fmt::join(t.sizes(), ", "));
  return calculate_gain(nl, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

Tensor kaiming_uniform_(Tensor t, double a, FanMode mode, Nonlinearity nl) {
  if (t.defined() && t.numel() == 0) return t;
  const double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nl, "kaiming_uniform_");
  return uniform_(std::move(t), -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, FanMode mode, Nonlinearity nl) {
  if (t.defined() && t.numel() == 0) return t;
  const double sd = kaiming_std(t, a, mode, nl, "kaiming_normal_");  // before t is moved from
  return normal_(std::move(t), 0.0, sd);
}

}  // namespace wick::nn::init
