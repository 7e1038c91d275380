// Linear and Conv2d.
#include <fmt/format.h>

#include <cmath>

#include "default_init.h"
#include "repr.h"
#include "wick/core/checked_math.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/conv.h"
#include "wick/nn/modules/linear.h"

namespace wick::nn {

namespace {
TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }
}  // namespace

// PyTorch's reset_parameters for Linear and Conv (default_init.h).
void detail::kaiming_default_init(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).fan_in;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

LinearImpl::LinearImpl(const LinearOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t in = options.in_features(), out = options.out_features();
  WICK_CHECK(in >= 0 && out >= 0, "Linear: in_features ({}) and out_features ({}) must be >= 0", in, out);
  weight_ = register_parameter("weight", wick::empty({out, in}, plain(tensor_options)));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out}, plain(tensor_options)) : Tensor());
  reset_parameters();
}

void LinearImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor LinearImpl::forward(const Tensor& input) { return F::linear(input, weight(), bias()); }

std::string LinearImpl::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features(), out_features(),
                     detail::py_bool(bias().defined()));
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t in_channels = options.in_channels(), out_channels = options.out_channels(), groups = options.groups();
  const Int2 kernel_size = options.kernel_size(), stride = options.stride(), dilation = options.dilation();
  const Int2 padding = this->padding();
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
  WICK_CHECK_NOT_IMPLEMENTED(named_padding() != PaddingMode::Same || (stride.h == 1 && stride.w == 1),
                             "Conv2d: padding=same needs stride 1 (as PyTorch), got stride {}",
                             detail::py_int2(stride, true));
  WICK_CHECK(options.padding_mode() != PadMode::Constant,
             "Conv2d: padding_mode must be one of zeros, reflect, replicate or circular (as PyTorch), got constant; "
             "zero padding is kZeros");
  if (options.padding_mode() != PadMode::Zeros) {
    // PyTorch's _reversed_padding_repeated_twice: {left, right, top, bottom}.
    if (named_padding() == PaddingMode::Same) {
      int64_t total_h = 0, total_w = 0;
      WICK_CHECK(!mul_overflow(dilation.h, kernel_size.h - 1, &total_h) &&
                     !mul_overflow(dilation.w, kernel_size.w - 1, &total_w),
                 "Conv2d: padding=same with dilation {} and kernel_size {} gives a total padding past int64",
                 detail::py_int2(dilation, true), detail::py_int2(kernel_size, true));
      mode_pads_ = {total_w / 2, total_w - total_w / 2, total_h / 2, total_h - total_h / 2};
    } else {
      mode_pads_ = {padding.w, padding.w, padding.h, padding.h};
    }
  }
  weight_ = register_parameter(
      "weight", wick::empty({out_channels, in_channels / groups, kernel_size.h, kernel_size.w}, plain(tensor_options)));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out_channels}, plain(tensor_options)) : Tensor());
  reset_parameters();
}

Int2 Conv2dImpl::padding() const {
  const Int2* p = std::get_if<Int2>(&options_.padding());
  return p ? *p : Int2(0);
}

std::optional<PaddingMode> Conv2dImpl::named_padding() const {
  const PaddingMode* p = std::get_if<PaddingMode>(&options_.padding());
  return p ? std::optional<PaddingMode>(*p) : std::nullopt;
}

void Conv2dImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor Conv2dImpl::forward(const Tensor& input) {
  if (padding_mode() != PadMode::Zeros)
    return F::conv2d(F::pad(input, mode_pads_, padding_mode()), weight(), bias(), stride(), 0, dilation(), groups());
  if (const auto mode = named_padding())
    return F::conv2d(input, weight(), bias(), stride(), *mode, dilation(), groups());
  return F::conv2d(input, weight(), bias(), stride(), padding(), dilation(), groups());
}

std::string Conv2dImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels(), out_channels(),
                              detail::py_int2(kernel_size(), true), detail::py_int2(stride(), true));
  if (const auto mode = named_padding())
    s += *mode == PaddingMode::Same ? ", padding=same" : ", padding=valid";
  else if (!(padding() == Int2(0)))
    s += ", padding=" + detail::py_int2(padding(), true);
  if (!(dilation() == Int2(1))) s += ", dilation=" + detail::py_int2(dilation(), true);
  if (groups() != 1) s += fmt::format(", groups={}", groups());
  if (!bias().defined()) s += ", bias=False";
  if (padding_mode() != PadMode::Zeros) s += fmt::format(", padding_mode={}", pad_mode_name(padding_mode()));
  return s;
}

}  // namespace wick::nn
