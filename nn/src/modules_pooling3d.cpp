// MaxPool3d (with indices), AvgPool3d (with divisor_override), AdaptiveAvgPool3d, AdaptiveMaxPool3d (with
// indices): the layers around the 3-d pooling functions.
#include <fmt/format.h>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/pooling3d.h"

namespace wick::nn {

namespace {
// As the 2-d layers' check: the options default the stride to kernel_size, so an explicit 0 is a
// mistake, which PyTorch and LibTorch refuse too; a negative one is refused here as well.
void check_kernel_and_stride(const char* module, Int3 k, Int3 s) {
  WICK_CHECK(k.d > 0 && k.h > 0 && k.w > 0, "{}: kernel_size should be greater than zero, got {}", module,
             detail::py_int3(k));
  WICK_CHECK(s.d != 0 && s.h != 0 && s.w != 0,
             "{}: stride should not be zero, got {}; leave it unset for stride = kernel_size", module,
             detail::py_int3(s));
  WICK_CHECK(s.d > 0 && s.h > 0 && s.w > 0, "{}: stride should be greater than zero, got {}", module,
             detail::py_int3(s));
}
}  // namespace

MaxPool3dImpl::MaxPool3dImpl(const MaxPool3dOptions& options) : options_(options) {
  check_kernel_and_stride("MaxPool3d", options.kernel_size(), options.stride());
}

Tensor MaxPool3dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::max_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> MaxPool3dImpl::forward_with_indices(const Tensor& input) {
  const auto& o = options_;
  return F::max_pool3d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

// PyTorch's _MaxPoolNd.extra_repr prints the arguments as given.
std::string MaxPool3dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
                     detail::py_int3(o.kernel_size()), detail::py_int3(o.stride()), detail::py_int3(o.padding()),
                     detail::py_int3(o.dilation()), detail::py_bool(o.ceil_mode()));
}

AvgPool3dImpl::AvgPool3dImpl(const AvgPool3dOptions& options) : options_(options) {
  check_kernel_and_stride("AvgPool3d", options.kernel_size(), options.stride());
  WICK_CHECK(options.divisor_override() != 0,
             "AvgPool3d: divisor_override must not be zero; leave it unset to divide by each window's size");
}

Tensor AvgPool3dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::avg_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                       o.divisor_override());
}

// PyTorch's AvgPool3d prints its arguments as given; ceil_mode and count_include_pad are not printed.
std::string AvgPool3dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}", detail::py_int3(o.kernel_size()),
                     detail::py_int3(o.stride()), detail::py_int3(o.padding()));
}

AdaptiveAvgPool3dImpl::AdaptiveAvgPool3dImpl(const AdaptiveAvgPool3dOptions& options) : options_(options) {
  const Int3 s = options.output_size();
  WICK_CHECK(s.d > 0 && s.h > 0 && s.w > 0, "AdaptiveAvgPool3d: output_size should be greater than zero, got {}",
             detail::py_int3(s, true));
}

Tensor AdaptiveAvgPool3dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool3d(input, options_.output_size());
}

std::string AdaptiveAvgPool3dImpl::extra_repr() const {
  return fmt::format("output_size={}", detail::py_int3(options_.output_size()));
}

AdaptiveMaxPool3dImpl::AdaptiveMaxPool3dImpl(const AdaptiveMaxPool3dOptions& options) : options_(options) {
  const Int3 s = options.output_size();
  WICK_CHECK(s.d > 0 && s.h > 0 && s.w > 0, "AdaptiveMaxPool3d: output_size should be greater than zero, got {}",
             detail::py_int3(s, true));
}

Tensor AdaptiveMaxPool3dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool3d(input, options_.output_size());
}

std::tuple<Tensor, Tensor> AdaptiveMaxPool3dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool3d_with_indices(input, options_.output_size());
}

std::string AdaptiveMaxPool3dImpl::extra_repr() const {
  return fmt::format("output_size={}", detail::py_int3(options_.output_size()));
}

}  // namespace wick::nn
