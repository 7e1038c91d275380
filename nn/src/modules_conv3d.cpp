// Conv3d: the layer around F::conv3d (and F::pad for a padding_mode), with PyTorch's initialization and print.
#include <fmt/format.h>

#include "default_init.h"
#include "repr.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv3d.h"

namespace wick::nn {

Conv3dImpl::Conv3dImpl(const Conv3dOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t in_channels = options.in_channels(), out_channels = options.out_channels(), groups = options.groups();
  const Int3 k = options.kernel_size(), s = options.stride(), dl = options.dilation(), p = this->padding();
  WICK_CHECK(in_channels > 0 && out_channels > 0, "Conv3d: in_channels ({}) and out_channels ({}) must be positive",
             in_channels, out_channels);
  WICK_CHECK(k.d > 0 && k.h > 0 && k.w > 0 && s.d > 0 && s.h > 0 && s.w > 0 && dl.d > 0 && dl.h > 0 && dl.w > 0 &&
                 p.d >= 0 && p.h >= 0 && p.w >= 0,
             "Conv3d: kernel_size {}, stride {} and dilation {} must be positive and padding {} non-negative",
             detail::py_int3(k, true), detail::py_int3(s, true), detail::py_int3(dl, true), detail::py_int3(p, true));
  WICK_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0,
             "Conv3d: groups ({}) must be positive and divide in_channels ({}) and out_channels ({})", groups,
             in_channels, out_channels);
  WICK_CHECK_NOT_IMPLEMENTED(named_padding() != PaddingMode::Same || s == Int3(1),
                             "Conv3d: padding=same needs stride 1 (as PyTorch), got stride {}",
                             detail::py_int3(s, true));
  WICK_CHECK(options.padding_mode() != PadMode::Constant,
             "Conv3d: padding_mode must be one of zeros, reflect, replicate or circular (as PyTorch), got constant; "
             "zero padding is kZeros");
  if (options.padding_mode() != PadMode::Zeros) {
    // PyTorch's _reversed_padding_repeated_twice: {w, w, h, h, d, d} (kSame: {left, total - left}).
    const int64_t ks[3] = {k.w, k.h, k.d}, dil[3] = {dl.w, dl.h, dl.d}, pads[3] = {p.w, p.h, p.d};
    for (int i = 0; i < 3; ++i) {
      if (named_padding() == PaddingMode::Same) {
        int64_t total = 0;
        WICK_CHECK(!mul_overflow(dil[i], ks[i] - 1, &total),
                   "Conv3d: padding=same with dilation {} and kernel_size {} gives a total padding past int64",
                   detail::py_int3(dl, true), detail::py_int3(k, true));
        mode_pads_.insert(mode_pads_.end(), {total / 2, total - total / 2});
      } else {
        mode_pads_.insert(mode_pads_.end(), {pads[i], pads[i]});
      }
    }
  }
  const TensorOptions plain = tensor_options.requires_grad(false);
  weight_ = register_parameter("weight", wick::empty({out_channels, in_channels / groups, k.d, k.h, k.w}, plain));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out_channels}, plain) : Tensor());
  reset_parameters();
}

Int3 Conv3dImpl::padding() const {
  const Int3* p = std::get_if<Int3>(&options_.padding());
  return p ? *p : Int3(0);
}

std::optional<PaddingMode> Conv3dImpl::named_padding() const {
  const PaddingMode* p = std::get_if<PaddingMode>(&options_.padding());
  return p ? std::optional<PaddingMode>(*p) : std::nullopt;
}

void Conv3dImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor Conv3dImpl::forward(const Tensor& input) {
  if (padding_mode() != PadMode::Zeros)
    return F::conv3d(F::pad(input, mode_pads_, padding_mode()), weight(), bias(), stride(), 0, dilation(), groups());
  if (const auto mode = named_padding())
    return F::conv3d(input, weight(), bias(), stride(), *mode, dilation(), groups());
  return F::conv3d(input, weight(), bias(), stride(), padding(), dilation(), groups());
}

// PyTorch stores Conv3d's sizes as 3-tuples (_triple) and prints them so.
std::string Conv3dImpl::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels(), out_channels(),
                              detail::py_int3(kernel_size(), true), detail::py_int3(stride(), true));
  if (const auto mode = named_padding())
    s += *mode == PaddingMode::Same ? ", padding=same" : ", padding=valid";
  else if (!(padding() == Int3(0)))
    s += ", padding=" + detail::py_int3(padding(), true);
  if (!(dilation() == Int3(1))) s += ", dilation=" + detail::py_int3(dilation(), true);
  if (groups() != 1) s += fmt::format(", groups={}", groups());
  if (!bias().defined()) s += ", bias=False";
  if (padding_mode() != PadMode::Zeros) s += fmt::format(", padding_mode={}", pad_mode_name(padding_mode()));
  return s;
}

}  // namespace wick::nn
