// ConvNdImpl<D, Derived>, the layer of Conv1d, Conv2d and Conv3d: F::conv1d / 2d / 3d (and F::pad
// for a padding_mode), with PyTorch's checks, initialization and print. Every rule is written once
// over 1, 2 or 3 spatial axes (ConvLayer below); the three differ in F's function and in how a 1-d
// layer's sizes read in its error messages (plain numbers, see number_text). Note [N-d layer
// templates] in wick/nn/modules/conv_nd.h.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "conv_axes.h"
#include "default_init.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv.h"
#include "wick/nn/modules/conv1d.h"
#include "wick/nn/modules/conv3d.h"

namespace wick::nn {

namespace {
using detail::axes;
using detail::Axes;
using detail::every;
using detail::paren_list;

// A convolution layer's options over `dims` spatial axes; padding is 0 with a named padding.
struct ConvLayer {
  const char* name;
  int dims;
  int64_t in, out, groups;
  Axes kernel, stride, dilation, padding;
  std::optional<PaddingMode> named;
  PadMode padding_mode;
};

// The numeric padding (0 with a named one) and the named one (nullopt with a numeric one).
template <size_t D>
conv_size_t<D> numeric_padding(const ConvOptions<D>& o) {
  const conv_size_t<D>* p = std::get_if<conv_size_t<D>>(&o.padding());
  return p ? *p : conv_size_t<D>(0);
}
template <size_t D>
std::optional<PaddingMode> named_padding_of(const ConvOptions<D>& o) {
  const PaddingMode* p = std::get_if<PaddingMode>(&o.padding());
  return p ? std::optional<PaddingMode>(*p) : std::nullopt;
}

// The layer's name in its messages, "Conv1d", "Conv2d" or "Conv3d".
template <size_t D>
constexpr const char* conv_name() {
  static_assert(D >= 1 && D <= 3, "ConvNdImpl: D is 1, 2 or 3");
  return D == 1 ? "Conv1d" : D == 2 ? "Conv2d" : "Conv3d";
}

template <size_t D>
ConvLayer layer_of(const ConvOptions<D>& o) {
  const char* name = conv_name<D>();
  return {name,
          static_cast<int>(D),
          o.in_channels(),
          o.out_channels(),
          o.groups(),
          axes(o.kernel_size()),
          axes(o.stride()),
          axes(o.dilation()),
          axes(numeric_padding(o)),
          named_padding_of(o),
          o.padding_mode()};
}

// An option in the messages where Conv1d prints a plain number: "3", "(3, 2)", "(3, 2, 2)".
std::string number_text(const ConvLayer& l, const Axes& v) {
  return l.dims == 1 ? fmt::format("{}", v[0]) : paren_list(v, l.dims);
}

// The constructor's checks, then F::pad's pads for a padding_mode other than kZeros (PyTorch's
// _reversed_padding_repeated_twice: the last axis first, {left, right} each; kSame splits
// dilation (k - 1) as left = total / 2; kValid pads 0). Empty for kZeros.
std::vector<int64_t> checked_mode_pads(const ConvLayer& l) {
  WICK_CHECK(l.in > 0 && l.out > 0, "{}: in_channels ({}) and out_channels ({}) must be positive", l.name, l.in, l.out);
  const auto positive = [](int64_t v) { return v > 0; };
  const auto non_negative = [](int64_t v) { return v >= 0; };
  WICK_CHECK(every(l.kernel, l.dims, positive) && every(l.stride, l.dims, positive) &&
                 every(l.dilation, l.dims, positive) && every(l.padding, l.dims, non_negative),
             "{}: kernel_size {}, stride {} and dilation {} must be positive and padding {} non-negative", l.name,
             paren_list(l.kernel, l.dims), paren_list(l.stride, l.dims), paren_list(l.dilation, l.dims),
             paren_list(l.padding, l.dims));
  WICK_CHECK(l.groups > 0 && l.in % l.groups == 0 && l.out % l.groups == 0,
             "{}: groups ({}) must be positive and divide in_channels ({}) and out_channels ({})", l.name, l.groups,
             l.in, l.out);
  WICK_CHECK_NOT_IMPLEMENTED(l.named != PaddingMode::Same || every(l.stride, l.dims, [](int64_t v) { return v == 1; }),
                             "{}: padding=same needs stride 1 (as PyTorch), got stride {}", l.name,
                             number_text(l, l.stride));
  WICK_CHECK(l.padding_mode != PadMode::Constant,
             "{}: padding_mode must be one of zeros, reflect, replicate or circular (as PyTorch), got constant; "
             "zero padding is kZeros",
             l.name);
  std::vector<int64_t> pads;
  if (l.padding_mode == PadMode::Zeros) return pads;
  for (int i = l.dims - 1; i >= 0; --i) {
    if (l.named == PaddingMode::Same) {
      int64_t total = 0;
      WICK_CHECK(!mul_overflow(l.dilation[i], l.kernel[i] - 1, &total),
                 "{}: padding=same with dilation {} and kernel_size {} gives a total padding past int64", l.name,
                 number_text(l, l.dilation), number_text(l, l.kernel));
      pads.insert(pads.end(), {total / 2, total - total / 2});
    } else {
      pads.insert(pads.end(), {l.padding[i], l.padding[i]});
    }
  }
  return pads;
}

TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }

// The layer's weight [C_out, C_in / groups, k...]; its bias [C_out] when it has one.
Tensor weight_of(const ConvLayer& l, TensorOptions o) {
  return wick::empty(detail::weight_shape(l.out, l.in / l.groups, l.kernel, l.dims), plain(o));
}
Tensor bias_of(const ConvLayer& l, bool bias, TensorOptions o) {
  return bias ? wick::empty({l.out}, plain(o)) : Tensor();
}

// PyTorch's forward: F::pad then the convolution with no padding for a padding_mode other than
// kZeros; otherwise the convolution with the named or numeric padding. `conv` is F::convNd.
template <class Impl, class Conv>
Tensor conv_forward(const Impl& m, const std::vector<int64_t>& mode_pads, const Tensor& input, Conv conv) {
  if (m.padding_mode() != PadMode::Zeros)
    return conv(F::pad(input, mode_pads, m.padding_mode()), m.weight(), m.bias(), m.stride(), 0, m.dilation(),
                m.groups());
  if (const auto mode = m.named_padding())
    return conv(input, m.weight(), m.bias(), m.stride(), *mode, m.dilation(), m.groups());
  return conv(input, m.weight(), m.bias(), m.stride(), m.padding(), m.dilation(), m.groups());
}

// PyTorch's _ConvNd.extra_repr: sizes as tuples ("(3,)" for one axis).
std::string conv_repr(const ConvLayer& l, bool bias) {
  const auto tuple = [&](const Axes& v) { return detail::py_tuple(v, l.dims); };
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", l.in, l.out, tuple(l.kernel), tuple(l.stride));
  if (l.named)
    s += *l.named == PaddingMode::Same ? ", padding=same" : ", padding=valid";
  else if (!every(l.padding, l.dims, [](int64_t v) { return v == 0; }))
    s += ", padding=" + tuple(l.padding);
  if (!every(l.dilation, l.dims, [](int64_t v) { return v == 1; })) s += ", dilation=" + tuple(l.dilation);
  if (l.groups != 1) s += fmt::format(", groups={}", l.groups);
  if (!bias) s += ", bias=False";
  if (l.padding_mode != PadMode::Zeros) s += fmt::format(", padding_mode={}", pad_mode_name(l.padding_mode));
  return s;
}
}  // namespace

// kaiming_default_init reads fan_in from the weight as PyTorch: C_in / groups * the kernel's sizes.

template <size_t D, class Derived>
ConvNdImpl<D, Derived>::ConvNdImpl(const ConvOptions<D>& options, TensorOptions tensor_options)
    : options_(options), mode_pads_(checked_mode_pads(layer_of(options))) {
  weight_ = this->register_parameter("weight", weight_of(layer_of(options), tensor_options));
  bias_ = this->register_parameter("bias", bias_of(layer_of(options), options.bias(), tensor_options));
  reset_parameters();
}

template <size_t D, class Derived>
conv_size_t<D> ConvNdImpl<D, Derived>::padding() const {
  return numeric_padding(options_);
}

template <size_t D, class Derived>
std::optional<PaddingMode> ConvNdImpl<D, Derived>::named_padding() const {
  return named_padding_of(options_);
}

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::reset_parameters() {
  detail::kaiming_default_init(weight(), bias());
}

template <size_t D, class Derived>
Tensor ConvNdImpl<D, Derived>::forward(const Tensor& input) {
  return conv_forward(*this, mode_pads_, input, [](auto&&... a) {
    if constexpr (D == 1)
      return F::conv1d(a...);
    else if constexpr (D == 2)
      return F::conv2d(a...);
    else
      return F::conv3d(a...);
  });
}

template <size_t D, class Derived>
std::string ConvNdImpl<D, Derived>::extra_repr() const {
  return conv_repr(layer_of(options_), bias().defined());
}

template class ConvNdImpl<1, Conv1dImpl>;
template class ConvNdImpl<2, Conv2dImpl>;
template class ConvNdImpl<3, Conv3dImpl>;

}  // namespace wick::nn
