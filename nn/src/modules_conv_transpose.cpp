// ConvTranspose1d, ConvTranspose2d and ConvTranspose3d: the layers around F::conv_transpose1d /
// 2d / 3d, with PyTorch's checks, initialization, print and forward(input, output_size). The three
// share every rule, written once over 1, 2 or 3 spatial axes (Layer below).
#include <fmt/format.h>

#include <array>
#include <string>
#include <vector>

#include "default_init.h"
#include "shape_text.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv_transpose.h"

namespace wick::nn {

namespace {
using Axes = std::array<int64_t, 3>;  // {d, h, w}, {h, w, unused}, or {l, unused, unused} for one axis

// A transposed convolution layer's options over `dims` spatial axes.
struct Layer {
  const char* name;
  int dims;
  int64_t in, out, groups;
  Axes kernel, stride, padding, output_padding, dilation;
  PadMode padding_mode;
};

// One option as Axes; `fill` stands for the axis a 1-d layer lacks.
Axes axes(int64_t v, int64_t fill) { return {v, fill, 0}; }
Axes axes(Int2 v, int64_t /*fill*/) { return {v.h, v.w, 0}; }
Axes axes(Int3 v, int64_t /*fill*/) { return {v.d, v.h, v.w}; }

template <class Options>
Layer layer_of(const char* name, int dims, const Options& o) {
  return {name,
          dims,
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
Layer layer_of(const ConvTranspose1dOptions& o) { return layer_of("ConvTranspose1d", 1, o); }
Layer layer_of(const ConvTranspose2dOptions& o) { return layer_of("ConvTranspose2d", 2, o); }
Layer layer_of(const ConvTranspose3dOptions& o) { return layer_of("ConvTranspose3d", 3, o); }

// PyTorch's tuple: "(3,)" for one axis, "(3, 2)" for two, "(3, 2, 2)" for three.
std::string tuple_str(const Layer& l, const Axes& v) {
  return l.dims == 1 ? fmt::format("({},)", v[0]) : fmt::format("({})", fmt::join(v.begin(), v.begin() + l.dims, ", "));
}
// A Python list of the first `n` values: "[11, 11]".
std::string list_str(const Axes& v, int n) { return fmt::format("[{}]", fmt::join(v.begin(), v.begin() + n, ", ")); }

bool every(const Layer& l, const Axes& v, bool (*pred)(int64_t)) {
  for (int i = 0; i < l.dims; ++i)
    if (!pred(v[i])) return false;
  return true;
}

// The constructor's checks: everything F::conv_transpose would refuse at forward, and the mode.
void check_layer(const Layer& l) {
  WICK_CHECK(l.in > 0 && l.out > 0, "{}: in_channels ({}) and out_channels ({}) must be positive", l.name, l.in, l.out);
  const auto positive = [](int64_t v) { return v > 0; };
  const auto non_negative = [](int64_t v) { return v >= 0; };
  WICK_CHECK(every(l, l.kernel, positive) && every(l, l.stride, positive) && every(l, l.dilation, positive) &&
                 every(l, l.padding, non_negative) && every(l, l.output_padding, non_negative),
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
             l.name, list_str(want, l.dims), list_str(lo, l.dims), list_str(hi, l.dims), list_str(in, l.dims));
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
}  // namespace

// ---- ConvTranspose2d ----

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options, TensorOptions tensor_options)
    : options_(options) {
  check_layer(layer_of(options));
  const Int2 k = options.kernel_size();
  weight_ = register_parameter(
      "weight", wick::empty({in_channels(), out_channels() / groups(), k.h, k.w}, plain(tensor_options)));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out_channels()}, plain(tensor_options)) : Tensor());
  reset_parameters();
}

// kaiming_default_init reads fan_in from the weight as PyTorch does: weight.size(1) * kh * kw.
void ConvTranspose2dImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor ConvTranspose2dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  const Axes op = output_padding_for(layer_of(options_), input, output_size);
  return F::conv_transpose2d(input, weight(), bias(), stride(), padding(), Int2(op[0], op[1]), groups(), dilation());
}

Value ConvTranspose2dImpl::forward_value(const std::vector<Value>& args) { return forward_value_of(*this, args); }

std::string ConvTranspose2dImpl::extra_repr() const { return layer_repr(layer_of(options_), bias().defined()); }

// ---- ConvTranspose1d ----

ConvTranspose1dImpl::ConvTranspose1dImpl(const ConvTranspose1dOptions& options, TensorOptions tensor_options)
    : options_(options) {
  check_layer(layer_of(options));
  weight_ = register_parameter(
      "weight", wick::empty({in_channels(), out_channels() / groups(), kernel_size()}, plain(tensor_options)));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out_channels()}, plain(tensor_options)) : Tensor());
  reset_parameters();
}

void ConvTranspose1dImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor ConvTranspose1dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  const Axes op = output_padding_for(layer_of(options_), input, output_size);
  return F::conv_transpose1d(input, weight(), bias(), stride(), padding(), op[0], groups(), dilation());
}

Value ConvTranspose1dImpl::forward_value(const std::vector<Value>& args) { return forward_value_of(*this, args); }

std::string ConvTranspose1dImpl::extra_repr() const { return layer_repr(layer_of(options_), bias().defined()); }

// ---- ConvTranspose3d ----

ConvTranspose3dImpl::ConvTranspose3dImpl(const ConvTranspose3dOptions& options, TensorOptions tensor_options)
    : options_(options) {
  check_layer(layer_of(options));
  const Int3 k = options.kernel_size();
  weight_ = register_parameter(
      "weight", wick::empty({in_channels(), out_channels() / groups(), k.d, k.h, k.w}, plain(tensor_options)));
  bias_ = register_parameter("bias", options.bias() ? wick::empty({out_channels()}, plain(tensor_options)) : Tensor());
  reset_parameters();
}

// fan_in = weight.size(1) * kd * kh * kw, as PyTorch reads it.
void ConvTranspose3dImpl::reset_parameters() { detail::kaiming_default_init(weight(), bias()); }

Tensor ConvTranspose3dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  const Axes op = output_padding_for(layer_of(options_), input, output_size);
  return F::conv_transpose3d(input, weight(), bias(), stride(), padding(), Int3(op[0], op[1], op[2]), groups(),
                             dilation());
}

Value ConvTranspose3dImpl::forward_value(const std::vector<Value>& args) { return forward_value_of(*this, args); }

std::string ConvTranspose3dImpl::extra_repr() const { return layer_repr(layer_of(options_), bias().defined()); }

}  // namespace wick::nn
