// F::batch_norm and F::layer_norm, composed of differentiable ops.
#include <fmt/format.h>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

void check_param(const char* op, const char* what, const Tensor& t, IntArrayRef shape, const Tensor& input) {
  if (!t.defined()) return;
  WICK_CHECK(t.sizes() == shape, "{}: {} must have shape [{}], got {}", op, what, fmt::join(shape, ", "), shape_of(t));
  WICK_CHECK(t.device() == input.device(), "{}: {} is on {} but input is on {}", op, what, t.device(), input.device());
}
}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  WICK_CHECK(input.defined() && input.dim() >= 2, "batch_norm: expected input [N, C, *] with at least 2 dims, got {}",
             input.defined() ? shape_of(input) : std::string("undefined"));
  WICK_CHECK_TYPE(input.is_floating_point(), "batch_norm: input must be float32 or float64, got {}", input.dtype());
  const int64_t C = input.size(1);
  check_param("batch_norm", "weight", weight, {C}, input);
  check_param("batch_norm", "bias", bias, {C}, input);
  check_param("batch_norm", "running_mean", running_mean, {C}, input);
  check_param("batch_norm", "running_var", running_var, {C}, input);
  // Stats are [C]; viewed as [1, C, 1, ...] to broadcast over input.
  std::vector<int64_t> stat_shape(static_cast<size_t>(input.dim()), 1);
  stat_shape[1] = C;
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  const int64_t count = input.numel() / std::max<int64_t>(C, 1);

  Tensor mean_c, var_c;  // [C]
  if (training) {
    WICK_CHECK(count > 1, "batch_norm: expected more than 1 value per channel when training, got input {}",
               shape_of(input));
    mean_c = mean(input, dims);
    var_c = var(input, dims, /*unbiased=*/false);
    if (running_mean.defined() || running_var.defined()) {
      NoGradGuard no_grad;
      const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
      if (running_mean.defined()) {
        Tensor m = native::to(mean_c.detach(), running_mean.device(), running_mean.dtype());
        native::binary_(BinaryOp::Mul, running_mean,
                        native::scalar_tensor(1.0 - momentum, running_mean.dtype(), running_mean.device()));
        native::binary_(BinaryOp::Add, running_mean, native::binary(BinaryOp::Mul, m, Scalar(momentum)));
      }
      if (running_var.defined()) {
        Tensor v = native::to(var_c.detach(), running_var.device(), running_var.dtype());
        native::binary_(BinaryOp::Mul, running_var,
                        native::scalar_tensor(1.0 - momentum, running_var.dtype(), running_var.device()));
        native::binary_(BinaryOp::Add, running_var, native::binary(BinaryOp::Mul, v, Scalar(momentum * unbias)));
      }
    }
  } else {
    WICK_CHECK(running_mean.defined() && running_var.defined(),
               "batch_norm: eval mode (training = false) needs running_mean and running_var");
    mean_c = running_mean;
    var_c = running_var;
  }
  // y = (x - mean) * rsqrt(var + eps) * weight + bias, folded into one scale and one shift.
  Tensor inv_std = rsqrt(add(var_c, scalar_tensor(eps, var_c.options())));
  Tensor scale = weight.defined() ? mul(inv_std, weight) : inv_std;
  Tensor y = mul(sub(input, view(mean_c, stat_shape)), view(scale, stat_shape));
  return bias.defined() ? add(y, view(bias, stat_shape)) : y;
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  WICK_CHECK(input.defined(), "layer_norm: input is undefined");
  WICK_CHECK_TYPE(input.is_floating_point(), "layer_norm: input must be float32 or float64, got {}", input.dtype());
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i)
    ok = input.size(input.dim() - k + i) == normalized_shape[static_cast<size_t>(i)];
  WICK_CHECK(ok, "layer_norm: input {} does not end in normalized_shape [{}]", shape_of(input),
             fmt::join(normalized_shape, ", "));
  check_param("layer_norm", "weight", weight, normalized_shape, input);
  check_param("layer_norm", "bias", bias, normalized_shape, input);
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) dims.push_back(d);
  Tensor mu = mean(input, dims, true);
  Tensor v = var(input, dims, /*unbiased=*/false, true);
  Tensor y = mul(sub(input, mu), rsqrt(add(v, scalar_tensor(eps, v.options()))));
  if (weight.defined()) y = mul(y, weight);
  return bias.defined() ? add(y, bias) : y;
}

}  // namespace wick::nn::functional
