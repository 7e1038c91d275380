// The Hardshrink, Softshrink and RReLU layers (wick/nn/modules/shrink.h), with PyTorch 1.13's
// extra_repr strings.
#include <fmt/format.h>

#include <string>

#include "repr.h"
#include "wick/core/error.h"
#include "wick/nn/modules/shrink.h"

namespace wick::nn {

Tensor HardshrinkImpl::forward(const Tensor& input) { return F::hardshrink(input, options_); }
std::string HardshrinkImpl::extra_repr() const { return detail::py_float(options_.lambda()); }

SoftshrinkImpl::SoftshrinkImpl(const SoftshrinkOptions& options) : options_(options) {
  WICK_CHECK(options.lambda() >= 0.0, "Softshrink: lambda must be >= 0, got {}", options.lambda());
}
Tensor SoftshrinkImpl::forward(const Tensor& input) { return F::softshrink(input, options_); }
std::string SoftshrinkImpl::extra_repr() const { return detail::py_float(options_.lambda()); }

RReLUImpl::RReLUImpl(const RReLUOptions& options) : options_(options) {
  WICK_CHECK(options.lower() <= options.upper(), "RReLU: lower ({}) must not exceed upper ({})", options.lower(),
             options.upper());
}
Tensor RReLUImpl::forward(const Tensor& input) {
  return F::rrelu(input, F::RReLUFuncOptions()
                             .lower(options_.lower())
                             .upper(options_.upper())
                             .training(is_training())
                             .inplace(options_.inplace()));
}
std::string RReLUImpl::extra_repr() const {
  return fmt::format("lower={}, upper={}{}", detail::py_float(options_.lower()), detail::py_float(options_.upper()),
                     options_.inplace() ? ", inplace=True" : "");
}

}  // namespace wick::nn
