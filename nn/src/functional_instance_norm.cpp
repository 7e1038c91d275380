// F::instance_norm: layer_norm over each (n, c) plane with its running-statistics update, or
// batch_norm's eval path with the running statistics.
#include <fmt/format.h>

#include "norm_parts.h"
#include "shape_text.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps) {
  using detail::shape_str;
  WICK_CHECK(input.defined() && input.dim() >= 2,
             "instance_norm: expected input [N, C, *] with at least 2 dims, got {}", shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "instance_norm: input must be float32 or float64, got {}", input.dtype());
  const int64_t N = input.size(0), C = input.size(1);
  detail::check_norm_param("instance_norm", "weight", weight, {C}, input);
  detail::check_norm_param("instance_norm", "bias", bias, {C}, input);
  detail::check_norm_param("instance_norm", "running_mean", running_mean, {C}, input);
  detail::check_norm_param("instance_norm", "running_var", running_var, {C}, input);
  if (!use_input_stats) {
    WICK_CHECK(running_mean.defined() && running_var.defined(),
               "instance_norm: use_input_stats = false normalizes with running_mean and running_var, got running_mean "
               "{} and running_var {}; pass both, or use_input_stats = true",
               shape_str(running_mean), shape_str(running_var));
    // Each channel with its running statistics: batch_norm's eval path, which changes nothing.
    return batch_norm(input, running_mean, running_var, weight, bias, /*training=*/false, momentum, eps);
  }
  const int64_t S = detail::spatial_numel(input);
  WICK_CHECK(S != 1,
             "instance_norm: expected more than 1 spatial element when training, got input {} (each instance would "
             "normalize to 0); normalize over a larger input, or with the running statistics (use_input_stats = "
             "false)",
             shape_str(input));
  // No instances (or no values in them): nothing to normalize, and no statistics to record.
  if (input.numel() == 0) return detail::empty_norm_output(input, weight, bias);
  const Tensor planes = reshape(input, {N, C, S});
  const Tensor y = detail::channel_affine(reshape(layer_norm(planes, {S}, {}, {}, eps), input.sizes()), weight, bias);
  // The running statistics move by the batch mean of the instances' statistics (PyTorch 1.13
  // updates one copy per instance and averages them), once the output exists.
  if (running_mean.defined() || running_var.defined()) {
    NoGradGuard no_grad;
    const Tensor x = planes.detach();
    if (running_mean.defined())
      detail::update_running_stat(running_mean, native::mean(native::mean(x, {2}, false), {0}, false), momentum);
    if (running_var.defined())
      detail::update_running_stat(running_var, native::mean(native::var_correction(x, {2}, 1, false), {0}, false),
                                  momentum);
  }
  return y;
}

}  // namespace wick::nn::functional
