// FractionalMaxPool2d, FractionalMaxPool3d: the options checked when built (as PyTorch's
// __init__), the samples kept in the buffer "_random_samples" (LibTorch's), not in the options.
#include <fmt/format.h>

#include "wick/core/error.h"
#include "wick/nn/modules/fractional_max_pool.h"

namespace wick::nn {

namespace {
template <class Options>
void check(const char* module, const Options& o, std::initializer_list<double> ratios) {
  WICK_CHECK(o.output_size().has_value() || o.output_ratio().has_value(),
             "{}: requires either an output size or an output ratio", module);
  WICK_CHECK(!(o.output_size().has_value() && o.output_ratio().has_value()),
             "{}: only one of output_size and output_ratio may be given", module);
  if (o.output_ratio())
    for (double r : ratios) WICK_CHECK(r > 0.0 && r < 1.0, "{}: output_ratio must be in (0, 1), got {}", module, r);
}
}  // namespace

FractionalMaxPool2dImpl::FractionalMaxPool2dImpl(const FractionalMaxPool2dOptions& options) : options_(options) {
  const auto r = options.output_ratio().value_or(Ratio2(0.5));
  check("FractionalMaxPool2d", options, {r.h, r.w});
  samples_ = register_buffer("_random_samples", options._random_samples());
  options_._random_samples(Tensor());  // the buffer is the one copy (replicas rewire it)
}
Tensor FractionalMaxPool2dImpl::forward(const Tensor& input) { return std::get<0>(forward_with_indices(input)); }
std::tuple<Tensor, Tensor> FractionalMaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return F::fractional_max_pool2d_with_indices(input,
                                               FractionalMaxPool2dOptions(options_)._random_samples(buffer(samples_)));
}

FractionalMaxPool3dImpl::FractionalMaxPool3dImpl(const FractionalMaxPool3dOptions& options) : options_(options) {
  const auto r = options.output_ratio().value_or(Ratio3(0.5));
  check("FractionalMaxPool3d", options, {r.d, r.h, r.w});
  samples_ = register_buffer("_random_samples", options._random_samples());
  options_._random_samples(Tensor());
}
Tensor FractionalMaxPool3dImpl::forward(const Tensor& input) { return std::get<0>(forward_with_indices(input)); }
std::tuple<Tensor, Tensor> FractionalMaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return F::fractional_max_pool3d_with_indices(input,
                                               FractionalMaxPool3dOptions(options_)._random_samples(buffer(samples_)));
}

}  // namespace wick::nn
