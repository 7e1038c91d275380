// Linear and Conv2d.
#include <fmt/format.h>

#include <cmath>

#include "repr.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/conv.h"
#include "wick/nn/modules/linear.h"

namespace wick::nn {

namespace {
TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }

// PyTorch's reset_parameters for Linear and Conv: kaiming_uniform(a = sqrt(5)) weight,
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias.
void default_init(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).fan_in;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}
}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, TensorOptions options)
    : in_features_(in_features), out_features_(out_features) {
  WICK_CHECK(in_features >= 0 && out_features >= 0, "Linear: in_features ({}) and out_features ({}) must be >= 0",
             in_features, out_features);
  weight_ = register_parameter("weight", wick::empty({out_features, in_features}, plain(options)));
  bias_ = register_parameter("bias", bias ? wick::empty({out_features}, plain(options)) : Tensor());
  reset_parameters();
}

void Linear::reset_parameters() { default_init(weight(), bias()); }

Tensor Linear::forward(const Tensor& input) { return F::linear(input, weight(), bias()); }

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features_, out_features_,
                     detail::py_bool(bias().defined()));
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Int2 kernel_size, Int2 stride, Int2 padding, Int2 dilation,
               bool bias, int64_t groups, TensorOptions options)
    : in_channels_(in_channels),
      out_channels_(out_channels),
      groups_(groups),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      dilation_(dilation) {
  WICK_CHECK(in_channels > 0 && out_channels > 0, "Conv2d: in_channels ({}) and out_channels ({}) must be positive",
             in_channels, out_channels);
  WICK_CHECK(kernel_size.h > 0 && kernel_size.w > 0 && stride.h > 0 && stride.w > 0 && dilation.h > 0 &&
                 dilation.w > 0 && padding.h >= 0 && padding.w >= 0,
             "Conv2d: kernel_size {}, stride {} and dilation {} must be positive and padding {} non-negative",
             detail::py_int2(kernel_size, true), detail::py_int2(stride, true), detail::py_int2(dilation, true),
             detail::py_int2(padding, true));
  WICK_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0,
             "Conv2d: groups ({}) must be positive and divide in_channels ({}) and out_channels ({})", groups,
             in_channels, out_channels);
  weight_ = register_parameter(
      "weight", wick::empty({out_channels, in_channels / groups, kernel_size.h, kernel_size.w}, plain(options)));
  bias_ = register_parameter("bias", bias ? wick::empty({out_channels}, plain(options)) : Tensor());
  reset_parameters();
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Int2 kernel_size, Int2 stride, PaddingMode padding,
               Int2 dilation, bool bias, int64_t groups, TensorOptions options)
    : Conv2d(in_channels, out_channels, kernel_size, stride, 0, dilation, bias, groups, options) {
  WICK_CHECK_NOT_IMPLEMENTED(padding != PaddingMode::Same || (stride.h == 1 && stride.w == 1),
             "Conv2d: padding=same needs stride 1 (as PyTorch), got stride {}", detail::py_int2(stride, true));
  padding_mode_ = padding;
}

void Conv2d::reset_parameters() { default_init(weight(), bias()); }

Tensor Conv2d::forward(const Tensor& input) {
  if (padding_mode_) return F::conv2d(input, weight(), bias(), stride_, *padding_mode_, dilation_, groups_);
  return F::conv2d(input, weight(), bias(), stride_, padding_, dilation_, groups_);
}

std::string Conv2d::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels_, out_channels_,
                              detail::py_int2(kernel_size_, true), detail::py_int2(stride_, true));
  if (padding_mode_)
    s += *padding_mode_ == PaddingMode::Same ? ", padding=same" : ", padding=valid";
  else if (!(padding_ == Int2(0)))
    s += ", padding=" + detail::py_int2(padding_, true);
  if (!(dilation_ == Int2(1))) s += ", dilation=" + detail::py_int2(dilation_, true);
  if (groups_ != 1) s += fmt::format(", groups={}", groups_);
  if (!bias().defined()) s += ", bias=False";
  return s;
}

}  // namespace wick::nn
