// AdaptiveMaxPool1d and AdaptiveMaxPool2d: the layers around F::adaptive_max_pool1d/2d.
#include <fmt/format.h>

#include <optional>
#include <string>

#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/pooling.h"
#include "wick/nn/modules/pooling1d.h"

namespace wick::nn {

namespace {
std::string py_size(std::optional<int64_t> v) { return v ? fmt::format("{}", *v) : std::string("None"); }
}  // namespace

AdaptiveMaxPool1dImpl::AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& options) : options_(options) {
  WICK_CHECK(options.output_size() > 0, "AdaptiveMaxPool1d: output_size should be greater than zero, got {}",
             options.output_size());
}

Tensor AdaptiveMaxPool1dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool1d(input, options_.output_size());
}

std::tuple<Tensor, Tensor> AdaptiveMaxPool1dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool1d_with_indices(input, options_.output_size());
}

std::string AdaptiveMaxPool1dImpl::extra_repr() const { return fmt::format("output_size={}", options_.output_size()); }

AdaptiveMaxPool2dImpl::AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options) : options_(options) {
  const OptionalInt2 s = options.output_size();
  WICK_CHECK(s.h.value_or(1) > 0 && s.w.value_or(1) > 0,
             "AdaptiveMaxPool2d: output_size should be greater than zero (or None to keep the input's size), got "
             "({}, {})",
             py_size(s.h), py_size(s.w));
}

Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& input) {
  return F::adaptive_max_pool2d(input, options_.output_size());
}

std::tuple<Tensor, Tensor> AdaptiveMaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return F::adaptive_max_pool2d_with_indices(input, options_.output_size());
}

// PyTorch prints the argument as given: "3" for an int, "(2, 3)" or "(None, 3)" for a tuple;
// wick prints "3" when both sizes are one number, as py_int2 does for the other layers.
std::string AdaptiveMaxPool2dImpl::extra_repr() const {
  const OptionalInt2 s = options_.output_size();
  if (s.h && s.w && *s.h == *s.w) return fmt::format("output_size={}", *s.h);
  return fmt::format("output_size=({}, {})", py_size(s.h), py_size(s.w));
}

}  // namespace wick::nn
