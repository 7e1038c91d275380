// transforms::Normalize's statistics, checks and arithmetic (composed of sub and div, so it is
// differentiable and runs on any device).
#include "wick/nn/data/normalize.h"

#include <fmt/format.h>

#include "wick/autograd/functions.h"
#include "wick/core/error.h"

namespace wick::data::transforms::detail {

NormalizeStats::NormalizeStats(std::vector<double> mean, std::vector<double> stddev)
    : mean_(std::move(mean)), stddev_(std::move(stddev)) {
  WICK_CHECK(!mean_.empty() && mean_.size() == stddev_.size(),
             "Normalize: mean has {} values and stddev has {}; give the same number, one per channel (or one for "
             "every channel)",
             mean_.size(), stddev_.size());
  for (size_t c = 0; c < stddev_.size(); ++c)
    WICK_CHECK(stddev_[c] != 0.0, "Normalize: stddev[{}] is 0; every stddev must be nonzero", c);
}

Tensor NormalizeStats::apply(const Tensor& input) const {
  WICK_CHECK(input.defined(), "Normalize: the input tensor is undefined");
  WICK_CHECK_TYPE(input.is_floating_point(),
                  "Normalize: expected a floating-point input (float32 or float64) but got {}; convert it with "
                  ".to(kFloat32) first",
                  input.dtype());
  const auto channels = static_cast<int64_t>(mean_.size());
  WICK_CHECK(input.dim() >= 3, "Normalize: expected an input of shape [..., C, H, W] but got shape [{}]",
             fmt::join(input.sizes(), ", "));
  WICK_CHECK(channels == 1 || input.size(-3) == channels,
             "Normalize: the input of shape [{}] has {} channels (dim -3) but mean and stddev have {} values; give "
             "one value per channel, or one for every channel",
             fmt::join(input.sizes(), ", "), input.size(-3), channels);
  const TensorOptions opts = TensorOptions(input.dtype()).device(input.device());
  const Tensor mean = wick::tensor(mean_, {channels, 1, 1}, opts);
  const Tensor stddev = wick::tensor(stddev_, {channels, 1, 1}, opts);
  return input.sub(mean).div(stddev);
}

}  // namespace wick::data::transforms::detail
