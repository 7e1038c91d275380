// The shared pieces of the normalization functions (norm_parts.h).
#include "norm_parts.h"

#include <fmt/format.h>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::nn::detail {

void check_norm_param(const char* op, const char* what, const Tensor& t, IntArrayRef shape, const Tensor& input) {
  if (!t.defined()) return;
  WICK_CHECK(t.sizes() == shape, "{}: {} must have shape [{}] to match input {}, got {}", op, what,
             fmt::join(shape, ", "), shape_str(input), shape_str(t));
  WICK_CHECK_TYPE(t.dtype() == input.dtype(), "{}: input is {} but {} is {}; convert one with .to(dtype)", op,
                  input.dtype(), what, t.dtype());
  WICK_CHECK(t.device() == input.device(), "{}: {} is on {} but input is on {}; move one with .to(device)", op, what,
             t.device(), input.device());
}

std::vector<int64_t> channel_shape(const Tensor& input) {
  std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
  shape[1] = input.size(1);
  return shape;
}

int64_t spatial_numel(const Tensor& input) {
  int64_t n = 1;
  for (int64_t d = 2; d < input.dim(); ++d) n *= input.size(d);
  return n;
}

Tensor channel_affine(const Tensor& y, const Tensor& weight, const Tensor& bias) {
  const std::vector<int64_t> shape = channel_shape(y);
  Tensor out = weight.defined() ? mul(y, view(weight, shape)) : y;
  return bias.defined() ? add(out, view(bias, shape)) : out;
}

Tensor empty_norm_output(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return channel_affine(weight.defined() ? input : clone(input), weight, bias);
}

void update_running_stat(const Tensor& running, const Tensor& stat, double momentum, double scale) {
  NoGradGuard no_grad;
  const Tensor s = native::to(stat.detach(), running.device(), running.dtype());
  native::binary_(BinaryOp::Mul, running, native::scalar_tensor(1.0 - momentum, running.dtype(), running.device()));
  native::binary_(BinaryOp::Add, running, native::binary(BinaryOp::Mul, s, Scalar(momentum * scale)));
}

}  // namespace wick::nn::detail
