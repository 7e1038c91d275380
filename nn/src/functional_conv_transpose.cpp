// F::conv_transpose3d, F::conv_transpose2d and F::conv_transpose1d: their arguments checked (in the
// caller's number of spatial axes), then conv2d's input gradient run on the matching conv2d
// geometry (twice for 3-d).
//
// Note [Transposed convolution]
// conv_transpose2d(x, w) is conv2d's input gradient, detail::conv2d_input_grad(x, w, g) (Note
// [conv2d as three closed functions] in conv_ops.h), for the conv2d geometry g that maps the
// transposed convolution's output back onto its input: g's image is the output (C_out channels,
// H_out x W_out), g's windows (kernel, stride, padding, dilation) are the transposed
// convolution's, g's output channels are C_in and its grid of windows is the input's H x W. The
// weight [C_in, C_out / groups, kh, kw] is conv2d's [O, C / groups, kh, kw] as it lies, which is
// why PyTorch stores a transposed convolution's weight input channels first. So the forward is one
// GEMM per group and a col2im per chunk of images, its backward is conv2d (for the input) and
// conv2d's weight gradient (for the weight), and those are differentiable in turn: gradients of
// any order, on every device conv2d runs on, with no kernel and no node of its own. (A graph
// therefore shows the node as Conv2dInputGradBackward.) The bias is a broadcasting add after it.
//
// output_padding only makes g's image larger, at the bottom and right. Those rows and columns are
// reached by windows through the padding (so they hold values when padding > 0), or by none when
// output_padding >= stride (PyTorch allows that when it is below the dilation), and then hold
// just the bias. So g's grid of windows is set to the input's size, not computed from the image,
// and ConvGeom::pointwise() compares the two before treating the image as its own columns.
//
// A 1-d transposed convolution is the 2-d one on a unit height (Note [1-d on a unit height] in
// functional_1d.cpp): both go through conv_transpose() below, which checks every argument in the
// caller's terms (1 or 2 spatial axes) before the unit height is added.
//
// Note [3-d transposed convolution]
// Output depth o receives input depth d through kernel depth kd where o = d sD - pD + kd dD, and
// that contribution is the 2-d transposed convolution of depth slice d with weight[:, :, kd]. So
// one conv_transpose2d over the height and width, with the depth folded into the batch and the
// kernel depth into the output channels (weight [C_in, kD C_out / groups, kh, kw], the same
// groups), gives every (d, kd) contribution; those are then placed and summed along the depth by a
// second conv_transpose2d over [depth, Ho Wo] with kD input channels, one output channel, kernel
// (kD, 1), the depth's stride, padding, output_padding and dilation, and the constant one-hot
// weight route[kd, 0, k, 0] = (k == kd). Both are differentiable to any order and run on every
// device, so conv_transpose3d needs no kernel or node of its own. Every argument is checked first,
// in 3-d terms, so neither 2-d pass can refuse what the 3-d one accepts.
#include <fmt/format.h>

#include <array>
#include <string>

#include "conv_ops.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

// One value per spatial axis: {d, h, w} for 3-d, {h, w, unused} for 2-d, {l, unused, unused} for 1-d.
using Axes = std::array<int64_t, 3>;

// The arguments of a transposed convolution over `dims` (1, 2 or 3) spatial axes.
struct TransposeArgs {
  const char* op;
  int dims;
  Axes stride, padding, output_padding, dilation;
  int64_t groups;
};

// "3" for one axis, "(3, 2)" for two, "(3, 2, 2)" for three, as PyTorch prints a 1-tuple's value
// and a tuple.
std::string axes_str(const TransposeArgs& a, const Axes& v) {
  if (a.dims == 1) return fmt::format("{}", v[0]);
  return a.dims == 2 ? fmt::format("({}, {})", v[0], v[1]) : fmt::format("({}, {}, {})", v[0], v[1], v[2]);
}

// The spatial dims' names in a shape: "L", "H, W" or "D, H, W".
const char* spatial_names(int dims) { return dims == 1 ? "L" : dims == 2 ? "H, W" : "D, H, W"; }

bool all_of(const TransposeArgs& a, const Axes& v, bool (*pred)(int64_t)) {
  for (int i = 0; i < a.dims; ++i)
    if (!pred(v[i])) return false;
  return true;
}

// Every check of PyTorch 1.13's conv_transpose, in the caller's terms; returns the output's
// spatial sizes.
Axes check_conv_transpose(const TransposeArgs& a, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const char* op = a.op;
  WICK_CHECK(input.defined() && weight.defined(), "{}: input and weight must be defined", op);
  WICK_CHECK(input.dim() == a.dims + 1 || input.dim() == a.dims + 2,
             "{}: expected a {}-d [C_in, {}] (unbatched) or {}-d [N, C_in, {}] input, got shape {}", op, a.dims + 1,
             spatial_names(a.dims), a.dims + 2, spatial_names(a.dims), shape_str(input));
  WICK_CHECK(weight.dim() == a.dims + 2,
             "{}: weight must be {}-d [in_channels, out_channels / groups, {}] (a transposed convolution's weight "
             "is input channels first, as PyTorch's), got shape {}",
             op, a.dims + 2,
             a.dims == 1   ? "kernel_size"
             : a.dims == 2 ? "kh, kw"
                           : "kd, kh, kw",
             shape_str(weight));
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  WICK_CHECK_TYPE(input.dtype() == weight.dtype(), "{}: input is {} but weight is {}; convert one with .to(dtype)", op,
                  input.dtype(), weight.dtype());
  WICK_CHECK(input.device() == weight.device(),
             "{}: input is on {} but weight is on {}; move them to one device with .to(device)", op, input.device(),
             weight.device());
  for (int i = 0; i < a.dims; ++i)
    WICK_CHECK(weight.size(2 + i) > 0, "{}: kernel size should be greater than zero, got weight shape {}", op,
               shape_str(weight));
  WICK_CHECK(weight.size(0) > 0 && weight.size(1) > 0,
             "{}: weight {} has no elements: in_channels and out_channels / groups must be at least 1", op,
             shape_str(weight));
  const auto positive = [](int64_t v) { return v > 0; };
  const auto non_negative = [](int64_t v) { return v >= 0; };
  WICK_CHECK(all_of(a, a.stride, positive) && all_of(a, a.dilation, positive),
             "{}: stride {} and dilation {} must be positive", op, axes_str(a, a.stride), axes_str(a, a.dilation));
  WICK_CHECK(all_of(a, a.padding, non_negative) && all_of(a, a.output_padding, non_negative),
             "{}: padding {} and output_padding {} must be non-negative", op, axes_str(a, a.padding),
             axes_str(a, a.output_padding));
  const int64_t C_in = weight.size(0), groups = a.groups;
  WICK_CHECK(groups > 0, "{}: groups must be positive, got {}", op, groups);
  WICK_CHECK(C_in % groups == 0,
             "{}: groups = {} must divide in_channels = {}, the first dim of weight {} (a transposed convolution's "
             "weight is [in_channels, out_channels / groups, ...])",
             op, groups, C_in, shape_str(weight));
  const int64_t channels = input.size(input.dim() - a.dims - 1);
  WICK_CHECK(channels == C_in,
             "{}: input {} has {} channels but weight {} has in_channels = {} (its first dim: a transposed "
             "convolution's weight is [in_channels, out_channels / groups, ...]); give the input {} channels or "
             "use a weight of shape [{}, ...]",
             op, shape_str(input), channels, shape_str(weight), C_in, C_in, channels);
  for (int i = 0; i < a.dims; ++i)
    WICK_CHECK(a.output_padding[i] < a.stride[i] || a.output_padding[i] < a.dilation[i],
               "{}: output_padding {} must be smaller than either the stride {} or the dilation {} on each axis (as "
               "PyTorch requires); it picks among the output sizes a stride can give, and a ConvTranspose layer's "
               "forward(input, output_size) computes it from the size wanted",
               op, axes_str(a, a.output_padding), axes_str(a, a.stride), axes_str(a, a.dilation));
  const int64_t C_out = weight.size(1) * groups;  // <= weight.numel(): no overflow
  if (bias.defined()) {
    WICK_CHECK(bias.dim() == 1 && bias.size(0) == C_out,
               "{}: bias must have shape [{}] (out_channels = weight.size(1) * groups = {} * {}), got {}", op, C_out,
               weight.size(1), groups, shape_str(bias));
    WICK_CHECK_TYPE(bias.dtype() == weight.dtype(), "{}: bias is {} but weight is {}", op, bias.dtype(),
                    weight.dtype());
    WICK_CHECK(bias.device() == weight.device(), "{}: bias is on {} but weight is on {}", op, bias.device(),
               weight.device());
  }
  Axes out{1, 1, 1};
  for (int i = 0; i < a.dims; ++i) {
    const int64_t size = input.size(input.dim() - a.dims + i), k = weight.size(2 + i);
    WICK_CHECK(size > 0, "{}: input {} has an empty spatial dim; only an empty batch is supported (as PyTorch)", op,
               shape_str(input));
    // (size - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1, every step checked.
    int64_t span = 0, reach = 0, two_p = 0, total = 0;
    WICK_CHECK(!mul_overflow(size - 1, a.stride[i], &span) && !mul_overflow(a.dilation[i], k - 1, &reach) &&
                   !add_overflow(span, reach, &total) && !add_overflow(total, a.output_padding[i] + 1, &total) &&
                   !mul_overflow(a.padding[i], int64_t{2}, &two_p),
               "{}: stride {}, dilation {}, output_padding {} and kernel {} over input {} give sizes past int64", op,
               axes_str(a, a.stride), axes_str(a, a.dilation), axes_str(a, a.output_padding), shape_str(weight),
               shape_str(input));
    out[i] = total - two_p;
  }
  for (int i = 0; i < a.dims; ++i)
    WICK_CHECK(out[i] > 0,
               "{}: input {} with weight {}, stride {}, padding {}, dilation {} and output_padding {} gives an "
               "output of {} positions per channel, which is too small; reduce the padding",
               op, shape_str(input), shape_str(weight), axes_str(a, a.stride), axes_str(a, a.padding),
               axes_str(a, a.dilation), axes_str(a, a.output_padding),
               fmt::join(out.begin(), out.begin() + a.dims, " x "));
  int64_t positions = 0;
  WICK_CHECK(!mul_overflow(out[0], out[1], &positions) && !mul_overflow(positions, out[2], &positions),
             "{}: an output of {} positions is past int64", op, fmt::join(out.begin(), out.begin() + a.dims, " x "));
  return out;
}

// The transposed convolution over a.dims spatial axes: checked, then run as conv2d's input
// gradient (Note [Transposed convolution]), a 1-d one on a unit height.
Tensor conv_transpose(const TransposeArgs& a, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const Axes out = check_conv_transpose(a, input, weight, bias);
  const bool batched = input.dim() == a.dims + 2, one_d = a.dims == 1;
  Tensor x = batched ? input : unsqueeze(input, 0);
  Tensor w = weight;
  if (one_d) {  // [N, C, L] -> [N, C, 1, L]; [C_in, C_out / g, K] -> [C_in, C_out / g, 1, K]
    x = unsqueeze(x, 2);
    w = unsqueeze(w, 2);
  }
  // The 2-d geometry's axes: a 1-d convolution's axis is the width, under a unit height.
  const auto two_d = [&](const Axes& v, int64_t unit) { return one_d ? Axes{unit, v[0], 1} : v; };
  const Axes size = two_d(out, 1), s = two_d(a.stride, 1), p = two_d(a.padding, 0), d = two_d(a.dilation, 1);
  detail::ConvGeom g;
  g.N = x.size(0);
  g.C = w.size(1) * a.groups;  // the transposed convolution's output channels
  g.O = w.size(0);             // its input channels
  g.G = a.groups;
  g.H = size[0];
  g.W = size[1];
  g.kh = w.size(2);
  g.kw = w.size(3);
  g.sh = s[0];
  g.sw = s[1];
  g.ph = p[0];
  g.pw = p[1];
  g.dh = d[0];
  g.dw = d[1];
  g.oh = x.size(2);  // the input's grid, not computed from the output (output_padding)
  g.ow = x.size(3);
  Tensor y = detail::conv2d_input_grad(x, w, g);
  if (bias.defined()) y = add(y, view(bias, {1, g.C, 1, 1}));
  if (one_d) y = squeeze(y, 2);
  return batched ? y : squeeze(y, 0);
}

// Note [3-d transposed convolution]: a checked 3-d transposed convolution as two 2-d ones.
Tensor conv_transpose_3d(const TransposeArgs& a, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  check_conv_transpose(a, input, weight, bias);
  const bool batched = input.dim() == 5;
  const Tensor x = batched ? input : unsqueeze(input, 0);
  const int64_t N = x.size(0), C_in = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t G = a.groups, Cg = weight.size(1), kD = weight.size(2), C_out = Cg * G;
  // Every depth slice through every depth tap: [N D, G kD Cg, Ho, Wo], channels in (group, kd, c) order.
  const Tensor slices = permute(x, {0, 2, 1, 3, 4}).reshape({N * D, C_in, H, W});
  const Tensor taps_w = permute(weight, {0, 2, 1, 3, 4}).reshape({C_in, kD * Cg, weight.size(3), weight.size(4)});
  const TransposeArgs hw{a.op,
                         2,
                         {a.stride[1], a.stride[2]},
                         {a.padding[1], a.padding[2]},
                         {a.output_padding[1], a.output_padding[2]},
                         {a.dilation[1], a.dilation[2]},
                         G};
  const Tensor y = conv_transpose(hw, slices, taps_w, {});
  const int64_t Ho = y.size(2), Wo = y.size(3);
  // [N, D, G, kD, Cg, Ho, Wo] -> [N C_out, kD, D, Ho Wo]: one image per (n, output channel), a
  // channel per depth tap.
  const Tensor taps =
      permute(y.reshape({N, D, G, kD, Cg, Ho, Wo}), {0, 2, 4, 3, 1, 5, 6}).reshape({N * C_out, kD, D, Ho * Wo});
  // Tap kd of input depth d lands on output depth d stride - padding + kd dilation: a transposed
  // convolution along the depth whose constant weight routes channel kd to kernel row kd.
  const Tensor route = eye(kD, TensorOptions(x.dtype()).device(x.device())).reshape({kD, 1, kD, 1});
  const TransposeArgs depth{a.op, 2, {a.stride[0], 1}, {a.padding[0], 0}, {a.output_padding[0], 0}, {a.dilation[0], 1},
                            1};
  const Tensor z = conv_transpose(depth, taps, route, {});  // [N C_out, 1, Do, Ho Wo]
  Tensor out = z.reshape({N, C_out, z.size(2), Ho, Wo});
  if (bias.defined()) out = add(out, view(bias, {1, C_out, 1, 1, 1}));
  return batched ? out : squeeze(out, 0);
}
}  // namespace

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int2 stride, Int2 padding,
                        Int2 output_padding, int64_t groups, Int2 dilation) {
  const TransposeArgs a{"conv_transpose2d",
                        2,
                        {stride.h, stride.w},
                        {padding.h, padding.w},
                        {output_padding.h, output_padding.w},
                        {dilation.h, dilation.w},
                        groups};
  return conv_transpose(a, input, weight, bias);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
                        int64_t output_padding, int64_t groups, int64_t dilation) {
  const TransposeArgs a{"conv_transpose1d", 1, {stride, 1}, {padding, 0}, {output_padding, 0}, {dilation, 1}, groups};
  return conv_transpose(a, input, weight, bias);
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int3 stride, Int3 padding,
                        Int3 output_padding, int64_t groups, Int3 dilation) {
  const TransposeArgs a{"conv_transpose3d",
                        3,
                        {stride.d, stride.h, stride.w},
                        {padding.d, padding.h, padding.w},
                        {output_padding.d, output_padding.h, output_padding.w},
                        {dilation.d, dilation.h, dilation.w},
                        groups};
  return conv_transpose_3d(a, input, weight, bias);
}

}  // namespace wick::nn::functional
