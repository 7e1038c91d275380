// MaxPool1d (with indices), AvgPool1d (with divisor_override), AdaptiveAvgPool1d: the layers around the 1-d pooling
// functions.
#include <fmt/format.h>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/pooling1d.h"

namespace wick::nn {

namespace {
// As the 2-d layers' check (modules_simple.cpp): F::max_pool1d and F::avg_pool1d read a stride
// of 0 as "none given", but the options already default it to kernel_size, so an explicit 0 is a
// mistake, which PyTorch and LibTorch refuse too. The kernel is checked first, as its size is the
// default stride. A negative stride, which the 2-d layers leave to the forward, is refused here.
void check_kernel_and_stride(const char* module, int64_t kernel_size, int64_t stride) {
  WICK_CHECK(kernel_size > 0, "{}: kernel_size should be greater than zero, got {}", module, kernel_size);
  WICK_CHECK(stride != 0, "{}: stride should not be zero; leave it unset for stride = kernel_size", module);
  WICK_CHECK(stride > 0, "{}: stride should be greater than zero, got {}", module, stride);
}
}  // namespace

MaxPool1dImpl::MaxPool1dImpl(const MaxPool1dOptions& options) : options_(options) {
  check_kernel_and_stride("MaxPool1d", options.kernel_size(), options.stride());
}

Tensor MaxPool1dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::max_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> MaxPool1dImpl::forward_with_indices(const Tensor& input) {
  const auto& o = options_;
  return F::max_pool1d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

// PyTorch's _MaxPoolNd.extra_repr prints the arguments as given: ints for MaxPool1d.
std::string MaxPool1dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", o.kernel_size(), o.stride(),
                     o.padding(), o.dilation(), detail::py_bool(o.ceil_mode()));
}

AvgPool1dImpl::AvgPool1dImpl(const AvgPool1dOptions& options) : options_(options) {
  check_kernel_and_stride("AvgPool1d", options.kernel_size(), options.stride());
  WICK_CHECK(options.divisor_override() != 0,
             "AvgPool1d: divisor_override must not be zero; leave it unset to divide by each window's size");
}

Tensor AvgPool1dImpl::forward(const Tensor& input) {
  const auto& o = options_;
  return F::avg_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                       o.divisor_override());
}

// PyTorch's AvgPool1d stores its sizes as 1-tuples (_single) and prints them so; ceil_mode and
// count_include_pad are not printed (as AvgPool2d's).
std::string AvgPool1dImpl::extra_repr() const {
  const auto& o = options_;
  return fmt::format("kernel_size=({},), stride=({},), padding=({},)", o.kernel_size(), o.stride(), o.padding());
}

AdaptiveAvgPool1dImpl::AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options) : options_(options) {
  WICK_CHECK(options.output_size() > 0, "AdaptiveAvgPool1d: output_size should be greater than zero, got {}",
             options.output_size());
}

Tensor AdaptiveAvgPool1dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool1d(input, options_.output_size());
}

std::string AdaptiveAvgPool1dImpl::extra_repr() const { return fmt::format("output_size={}", options_.output_size()); }

}  // namespace wick::nn
