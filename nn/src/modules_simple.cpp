// The parameter-free layers: pooling, activations, flatten (the dropout layers: modules_dropout.cpp).
#include <fmt/format.h>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/activation.h"
#include "wick/nn/modules/pooling.h"

namespace wick::nn {

namespace {
// The pooling modules' kernel and stride. F::max_pool2d and F::avg_pool2d read a stride of 0 as
// "none given" (stride = kernel_size), but the options already default it to kernel_size, so an
// explicit 0 here is a mistake; PyTorch and LibTorch refuse it too. The kernel is checked first,
// as its size is the default stride.
void check_kernel_and_stride(const char* module, Int2 kernel_size, Int2 stride) {
  WICK_CHECK(kernel_size.h > 0 && kernel_size.w > 0, "{}: kernel_size should be greater than zero, got {}", module,
             detail::py_int2(kernel_size));
  WICK_CHECK(stride.h != 0 && stride.w != 0,
             "{}: stride should not be zero, got {}; leave it unset for stride = kernel_size", module,
             detail::py_int2(stride));
}
}  // namespace

MaxPool2dImpl::MaxPool2dImpl(const MaxPool2dOptions& options) : options_(options) {
  check_kernel_and_stride("MaxPool2d", options.kernel_size(), options.stride());
}

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  const auto& o = options_;
  return F::max_pool2d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::string MaxPool2dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
                     detail::py_int2(o.kernel_size()), detail::py_int2(o.stride()), detail::py_int2(o.padding()),
                     detail::py_int2(o.dilation()), detail::py_bool(o.ceil_mode()));
}

AvgPool2dImpl::AvgPool2dImpl(const AvgPool2dOptions& options) : options_(options) {
  check_kernel_and_stride("AvgPool2d", options.kernel_size(), options.stride());
  WICK_CHECK(options.divisor_override() != 0,
             "AvgPool2d: divisor_override must not be zero; leave it unset to divide by each window's size");
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                       o.divisor_override());
}

std::string AvgPool2dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}", detail::py_int2(o.kernel_size()),
                     detail::py_int2(o.stride()), detail::py_int2(o.padding()));
}

AdaptiveAvgPool2dImpl::AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options) : options_(options) {}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool2d(input, options_.output_size());
}

std::string AdaptiveAvgPool2dImpl::extra_repr() const {
  return fmt::format("output_size={}", detail::py_int2(options_.output_size()));
}

GELUImpl::GELUImpl(GELUOptions options) : options_(std::move(options)) {
  const std::string& a = options_.approximate();
  WICK_CHECK(a == "none" || a == "tanh", "GELU: approximate must be 'none' or 'tanh', got '{}'", a);
}

Tensor GELUImpl::forward(const Tensor& input) { return F::gelu(input, options_.approximate()); }

std::string GELUImpl::extra_repr() const { return fmt::format("approximate='{}'", options_.approximate()); }

Tensor TanhImpl::forward(const Tensor& input) { return F::tanh(input); }

Tensor SigmoidImpl::forward(const Tensor& input) { return F::sigmoid(input); }

SoftmaxImpl::SoftmaxImpl(const SoftmaxOptions& options) : options_(options) {}

Tensor SoftmaxImpl::forward(const Tensor& input) { return F::softmax(input, options_.dim()); }

std::string SoftmaxImpl::extra_repr() const { return fmt::format("dim={}", options_.dim()); }

FlattenImpl::FlattenImpl(const FlattenOptions& options) : options_(options) {}

Tensor FlattenImpl::forward(const Tensor& input) { return flatten(input, options_.start_dim(), options_.end_dim()); }

std::string FlattenImpl::extra_repr() const {
  return fmt::format("start_dim={}, end_dim={}", options_.start_dim(), options_.end_dim());
}

}  // namespace wick::nn
