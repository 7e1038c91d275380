// Conv1d: the layer around F::conv1d (and F::pad for a padding_mode), with PyTorch's initialization and print.
#include <fmt/format.h>

#include <cmath>

#include "default_init.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/conv1d.h"

namespace wick::nn {

Conv1dImpl::Conv1dImpl(const Conv1dOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t in_channels = options.in_channels(), out_channels = options.out_channels(), groups = options.groups();
  const int64_t kernel_size = options.kernel_size(), stride = options.stride(), dilation = options.dilation();
  const int64_t padding = this->padding();
  WICK_CHECK(in_channels > 0 && out_channels > 0, "Conv1d: in_channels ({}) and out_channels ({}) must be positive",
             in_channels, out_channels);
  WICK_CHECK(kernel_size > 0 && stride > 0 && dilation > 0 && padding >= 0,
             "Conv1d: kernel_size ({}), stride ({}) and dilation ({}) must be positive and padding ({}) non-negative",
             kernel_size, stride, dilation, padding);
  WICK_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0,
             "Conv1d: groups ({}) must be positive and divide in_channels ({}) and out_channels ({})", groups,
             in_channels, out_channels);
  WICK_CHECK_NOT_IMPLEMENTED(named_padding() != PaddingMode::Same || stride == 1,
                             "Conv1d: padding=same needs stride 1 (as PyTorch), got stride {}", stride);
  WICK_CHECK(options.padding_mode() != PadMode::Constant,
             "Conv1d: padding_mode must be one of zeros, reflect, replicate or circular (as PyTorch), got constant; "
             "zero padding is kZeros");
  if (options.padding_mode() != PadMode::Zeros) {
    // PyTorch's _reversed_padding_repeated_twice: {left, right}.
    if (named_padding() == PaddingMode::Same) {
      int64_t total = 0;
      WICK_CHECK(!mul_overflow(dilation, kernel_size - 1, &total),
                 "Conv1d: padding=same with dilation {} and kernel_size {} gives a total padding past int64", dilation,
                 kernel_size);
      mode_pads_ = {total / 2, total - total / 2};
    } else {
      mode_pads_ = {padding, padding};
    }
  }
  const TensorOptions plain = tensor_options.requires_grad(false);
  weight_ = register_parameter("weight", wick::empty({out_channels, in_channels / groups, kernel_size}, plain));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out_channels}, plain) : Tensor());
  reset_parameters();
}

int64_t Conv1dImpl::padding() const {
  const int64_t* p = std::get_if<int64_t>(&options_.padding());
  return p ? *p : 0;
}

std::optional<PaddingMode> Conv1dImpl::named_padding() const {
  const PaddingMode* p = std::get_if<PaddingMode>(&options_.padding());
  return p ? std::optional<PaddingMode>(*p) : std::nullopt;
}

void Conv1dImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor Conv1dImpl::forward(const Tensor& input) {
  if (padding_mode() != PadMode::Zeros)
    return F::conv1d(F::pad(input, mode_pads_, padding_mode()), weight(), bias(), stride(), 0, dilation(), groups());
  if (const auto mode = named_padding())
    return F::conv1d(input, weight(), bias(), stride(), *mode, dilation(), groups());
  return F::conv1d(input, weight(), bias(), stride(), padding(), dilation(), groups());
}

// PyTorch stores Conv1d's sizes as 1-tuples and prints them so: "(3,)".
std::string Conv1dImpl::extra_repr() const {
  std::string s =
      fmt::format("{}, {}, kernel_size=({},), stride=({},)", in_channels(), out_channels(), kernel_size(), stride());
  if (const auto mode = named_padding())
    s += *mode == PaddingMode::Same ? ", padding=same" : ", padding=valid";
  else if (padding() != 0)
    s += fmt::format(", padding=({},)", padding());
  if (dilation() != 1) s += fmt::format(", dilation=({},)", dilation());
  if (groups() != 1) s += fmt::format(", groups={}", groups());
  if (!bias().defined()) s += ", bias=False";
  if (padding_mode() != PadMode::Zeros) s += fmt::format(", padding_mode={}", pad_mode_name(padding_mode()));
  return s;
}

}  // namespace wick::nn
