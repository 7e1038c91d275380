// F::group_norm: layer_norm over each sample's groups, then the per-channel affine.
#include <fmt/format.h>

#include "norm_parts.h"
#include "shape_text.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  using detail::shape_str;
  WICK_CHECK(input.defined() && input.dim() >= 2, "group_norm: expected input [N, C, *] with at least 2 dims, got {}",
             shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "group_norm: input must be float32 or float64, got {}", input.dtype());
  const int64_t N = input.size(0), C = input.size(1);
  WICK_CHECK(num_groups > 0, "group_norm: num_groups must be positive, got num_groups = {} for input {}", num_groups,
             shape_str(input));
  WICK_CHECK(C % num_groups == 0,
             "group_norm: expected the number of channels C = {} of input {} to be divisible by num_groups = {}; "
             "pass a num_groups that divides C",
             C, shape_str(input), num_groups);
  detail::check_norm_param("group_norm", "weight", weight, {C}, input);
  detail::check_norm_param("group_norm", "bias", bias, {C}, input);
  // The values of one group; at most C * prod(*), which fits int64 (Note [Checked sizes]).
  const int64_t group_size = C / num_groups * detail::spatial_numel(input);
  // PyTorch 1.13's check (F.group_norm's _verify_batch_size): N * C / G * prod(*) == 1, that is one
  // sample whose every group is one value. Several samples of one-value groups pass (and give 0).
  WICK_CHECK(N != 1 || group_size != 1,
             "group_norm: expected more than 1 value per group, got input {} with num_groups = {} (each group holds "
             "one value, which normalizes to 0); use fewer groups or a larger input",
             shape_str(input), num_groups);
  if (input.numel() == 0) return detail::empty_norm_output(input, weight, bias);
  // Group g of sample n is row (n, g) of [N, G, C / G * prod(*)]: layer_norm over its last dim
  // (biased variance, the fused node where the backend has one).
  const Tensor y = layer_norm(reshape(input, {N, num_groups, group_size}), {group_size}, {}, {}, eps);
  return detail::channel_affine(reshape(y, input.sizes()), weight, bias);
}

}  // namespace wick::nn::functional
