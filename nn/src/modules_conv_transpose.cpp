// ConvTransposeNdImpl<D, Derived>, the layer of ConvTranspose1d, 2d and 3d: F::conv_transpose1d /
// 2d / 3d, with PyTorch's checks, initialization, print and forward(input, output_size). Every
// rule is written once over 1, 2 or 3 spatial axes (Layer below); the three differ only in F's
// function. Note [N-d layer templates] in wick/nn/modules/conv_nd.h.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "conv_axes.h"
#include "default_init.h"
#include "shape_text.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv_transpose.h"

namespace wick::nn {

namespace {
using detail::axes;
using detail::Axes;
using detail::every;
using detail::py_list;

// A transposed convolution layer's options over `dims` spatial axes.
struct Layer {
  const char* name;
  int dims;
  int64_t in, out, groups;
  Axes kernel, stride, padding, output_padding, dilation;
  PadMode padding_mode;
};

// The layer's name in its messages, "ConvTranspose1d", "ConvTranspose2d" or "ConvTranspose3d".
template <size_t D>
constexpr const char* conv_transpose_name() {
  static_assert(D >= 1 && D <= 3, "ConvTransposeNdImpl: D is 1, 2 or 3");
  return D == 1 ? "ConvTranspose1d" : D == 2 ? "ConvTranspose2d" : "ConvTranspose3d";
}

template <size_t D>
Layer layer_of(const ConvTransposeOptions<D>& o) {
  const char* name = conv_transpose_name<D>();
  return {name,
          static_cast<int>(D),
          o.in_channels(),
          o.out_channels(),
          o.groups(),
          axes(o.kernel_size(), 1),
          axes(o.stride(), 1),
          axes(o.padding(), 0),
          axes(o.output_padding(), 0),
          axes(o.dilation(), 1),
          o.padding_mode()};
}

// PyTorch's tuple of one of the layer's options: "(3,)", "(3, 2)" or "(3, 2, 2)".
std::string tuple_str(const Layer& l, const Axes& v) { return detail::py_tuple(v, l.dims); }

// The constructor's checks: everything F::conv_transpose would refuse at forward, and the mode.
void check_layer(const Layer& l) {
  WICK_CHECK(l.in > 0 && l.out > 0, "{}: in_channels ({}) and out_channels ({}) must be positive", l.name, l.in, l.out);
  const auto positive = [](int64_t v) { return v > 0; };
  const auto non_negative = [](int64_t v) { return v >= 0; };
  WICK_CHECK(every(l.kernel, l.dims, positive) && every(l.stride, l.dims, positive) &&
                 every(l.dilation, l.dims, positive) && every(l.padding, l.dims, non_negative) &&
                 every(l.output_padding, l.dims, non_negative),
             "{}: kernel_size {}, stride {} and dilation {} must be positive and padding {} and output_padding {} "
             "non-negative",
             l.name, tuple_str(l, l.kernel), tuple_str(l, l.stride), tuple_str(l, l.dilation), tuple_str(l, l.padding),
             tuple_str(l, l.output_padding));
  WICK_CHECK(l.groups > 0 && l.in % l.groups == 0 && l.out % l.groups == 0,
             "{}: groups ({}) must be positive and divide in_channels ({}) and out_channels ({})", l.name, l.groups,
             l.in, l.out);
  for (int i = 0; i < l.dims; ++i)
    WICK_CHECK(l.output_padding[i] < l.stride[i] || l.output_padding[i] < l.dilation[i],
               "{}: output_padding {} must be smaller than either the stride {} or the dilation {} on each axis (as "
               "PyTorch requires at forward); to choose among the output sizes a strided layer can give, pass "
               "output_size to forward",
               l.name, tuple_str(l, l.output_padding), tuple_str(l, l.stride), tuple_str(l, l.dilation));
  WICK_CHECK(l.padding_mode == PadMode::Zeros,
             "{}: only zeros padding mode is supported for a transposed convolution (as PyTorch), got padding_mode "
             "{}",
             l.name, pad_mode_name(l.padding_mode));
}

// PyTorch 1.13's _ConvTransposeNd._output_padding: the layer's output_padding, or, with
// output_size, the one that gives that size. A rank F::conv_transpose refuses gets the layer's own
// output_padding, so the function reports the rank.
Axes output_padding_for(const Layer& l, const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  if (!output_size || !input.defined() || (input.dim() != l.dims + 1 && input.dim() != l.dims + 2))
    return l.output_padding;
  const int64_t non_spatial = input.dim() == l.dims + 2 ? 2 : 1;
  IntArrayRef sizes = *output_size;
  if (static_cast<int64_t>(sizes.size()) == non_spatial + l.dims)
    sizes = IntArrayRef(sizes.data() + non_spatial, static_cast<size_t>(l.dims));
  WICK_CHECK(static_cast<int64_t>(sizes.size()) == l.dims,
             "{}: for a {}-d input, output_size must have {} or {} elements (the output's spatial sizes, or its whole "
             "shape), got {} ([{}])",
             l.name, input.dim(), l.dims, non_spatial + l.dims, output_size->size(), fmt::join(*output_size, ", "));
  Axes lo{0, 0, 0}, hi{0, 0, 0}, in{0, 0, 0}, want{0, 0, 0};
  for (int i = 0; i < l.dims; ++i) {
    in[i] = input.size(non_spatial + i);
    want[i] = sizes[static_cast<size_t>(i)];
    // (in - 1) stride - 2 padding + dilation (k - 1) + 1, and that + stride - 1.
    int64_t span = 0, reach = 0, two_p = 0;
    WICK_CHECK(!mul_overflow(in[i] - 1, l.stride[i], &span) && !mul_overflow(l.dilation[i], l.kernel[i] - 1, &reach) &&
                   !add_overflow(span, reach, &lo[i]) && !mul_overflow(l.padding[i], int64_t{2}, &two_p) &&
                   !add_overflow(lo[i] - two_p, int64_t{1}, &lo[i]) && !add_overflow(lo[i], l.stride[i] - 1, &hi[i]),
               "{}: the output sizes for input {} are past int64", l.name, detail::shape_str(input));
  }
  bool in_range = true;
  for (int i = 0; i < l.dims; ++i) in_range = in_range && want[i] >= lo[i] && want[i] <= hi[i];
  WICK_CHECK(in_range,
             "{}: requested an output size of {}, but valid sizes range from {} to {} (for an input of {}); "
             "sizes in that range differ only in the output_padding they take",
             l.name, py_list(want, l.dims), py_list(lo, l.dims), py_list(hi, l.dims), py_list(in, l.dims));
  Axes pad{0, 0, 0};
  for (int i = 0; i < l.dims; ++i) pad[i] = want[i] - lo[i];
  return pad;
}

// PyTorch's _ConvNd.extra_repr.
std::string layer_repr(const Layer& l, bool bias) {
  const Axes zeros{0, 0, 0}, ones{1, 1, 1};
  const auto differs = [&](const Axes& v, const Axes& d) {
    for (int i = 0; i < l.dims; ++i)
      if (v[i] != d[i]) return true;
    return false;
  };
  std::string s =
      fmt::format("{}, {}, kernel_size={}, stride={}", l.in, l.out, tuple_str(l, l.kernel), tuple_str(l, l.stride));
  if (differs(l.padding, zeros)) s += ", padding=" + tuple_str(l, l.padding);
  if (differs(l.dilation, ones)) s += ", dilation=" + tuple_str(l, l.dilation);
  if (differs(l.output_padding, zeros)) s += ", output_padding=" + tuple_str(l, l.output_padding);
  if (l.groups != 1) s += fmt::format(", groups={}", l.groups);
  if (!bias) s += ", bias=False";
  return s;
}

// forward_value's arguments: the input and, optionally, output_size (None or a list of ints).
template <class Impl>
Value forward_value_of(Impl& m, const std::vector<Value>& args) {
  WICK_CHECK(args.size() == 1 || args.size() == 2,
             "{}.forward_value: forward takes the input and optionally output_size, but {} arguments were given",
             m.name(), args.size());
  const Tensor& input = args[0].tensor();
  if (args.size() == 1 || args[1].is_none()) return Value(m.forward(input));
  WICK_CHECK_TYPE(args[1].is_sequence(), "{}.forward_value: output_size must be None or a list of ints, got {}",
                  m.name(), args[1].describe());
  std::vector<int64_t> sizes;
  for (const Value& v : args[1].items()) sizes.push_back(v.to_int());
  return Value(m.forward(input, IntArrayRef(sizes)));
}

TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }

// The layer's weight [C_in, C_out / groups, k...]; its bias [C_out] when it has one.
Tensor weight_of(const Layer& l, TensorOptions o) {
  return wick::empty(detail::weight_shape(l.in, l.out / l.groups, l.kernel, l.dims), plain(o));
}
Tensor bias_of(const Layer& l, bool bias, TensorOptions o) { return bias ? wick::empty({l.out}, plain(o)) : Tensor(); }

}  // namespace

// kaiming_default_init reads fan_in from the weight as PyTorch does: weight.size(1) * the kernel's
// sizes.

template <size_t D, class Derived>
ConvTransposeNdImpl<D, Derived>::ConvTransposeNdImpl(const ConvTransposeOptions<D>& options,
                                                     TensorOptions tensor_options)
    : options_(options) {
  const Layer l = layer_of(options);
  check_layer(l);
  weight_ = this->register_parameter("weight", weight_of(l, tensor_options));
  bias_ = this->register_parameter("bias", bias_of(l, options.bias(), tensor_options));
  reset_parameters();
}

template <size_t D, class Derived>
void ConvTransposeNdImpl<D, Derived>::reset_parameters() {
  detail::kaiming_default_init(weight(), bias());
}

template <size_t D, class Derived>
Tensor ConvTransposeNdImpl<D, Derived>::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  const conv_size_t<D> output_padding = detail::sizes_of<D>(output_padding_for(layer_of(options_), input, output_size));
  if constexpr (D == 1)
    return F::conv_transpose1d(input, weight(), bias(), stride(), padding(), output_padding, groups(), dilation());
  else if constexpr (D == 2)
    return F::conv_transpose2d(input, weight(), bias(), stride(), padding(), output_padding, groups(), dilation());
  else
    return F::conv_transpose3d(input, weight(), bias(), stride(), padding(), output_padding, groups(), dilation());
}

template <size_t D, class Derived>
Value ConvTransposeNdImpl<D, Derived>::forward_value(const std::vector<Value>& args) {
  return forward_value_of(*this, args);
}

template <size_t D, class Derived>
std::string ConvTransposeNdImpl<D, Derived>::extra_repr() const {
  return layer_repr(layer_of(options_), bias().defined());
}

template class ConvTransposeNdImpl<1, ConvTranspose1dImpl>;
template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;
template class ConvTransposeNdImpl<3, ConvTranspose3dImpl>;

}  // namespace wick::nn
