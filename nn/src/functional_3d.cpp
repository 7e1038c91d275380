// F::conv3d and the 3-d pooling functions: their arguments checked in 3-d terms, then composed of
// the 2-d functions and views (Note [3-d from 2-d]).
//
// Note [3-d from 2-d]
// conv3d: after the depth padding (F::pad), output depth o reads input depths o sD + kd dD for
// kd < kD. The kD strided depth slices are stacked, the output depth is folded into the batch and
// the kernel depth into the channels, group by group ([N Do, G kD C/G, H, W], channel order
// (group, kd, c)); the weight [O, C/G, kD, kH, kW] is laid out to match ([O, kD C/G, kH, kW]), so
// one conv2d with the same groups sums over kd, c, kh and kw at once and adds the bias once.
//
// Pooling: a 3-d window is the product of a depth interval and a (height, width) rectangle, and
// PyTorch's window bounds, ceil_mode clipping and divisors are computed per axis. So the 2-d
// function pools each depth slice ([N, C D, H, W]), and then pools the depth, run again on
// [N, C, D, Ho Wo] with kernel (kD, 1), stride (sD, 1), padding (pD, 0) and dilation (dD, 1):
// the max of maxes is the max and the first (d, h, w) maximum wins when each pass keeps its first;
// the avg divisor is the product of the per-axis ones (count_include_pad either way), and with a
// divisor_override the first pass sums (divisor 1) and the second divides. max_pool3d's index is
// d H W + h W + w: the depth pass's index is d (Ho Wo) + j for output column j, and the first
// pass's index at (d, j) is h W + w.
//
// Adaptive pooling: PyTorch's adaptive windows are per axis too, so adaptive_avg_pool3d and
// adaptive_max_pool3d run the 2-d function on each depth slice to (oH, oW) and then on
// [N, C, D, oH oW] to (oD, oH oW), whose width windows are single columns. adaptive_max_pool2d
// keeps the first maximum or the last NaN in row-major order (Note [Adaptive max pooling]); the
// two passes therefore keep the first maximum, or the last NaN, in (d, h, w) order, which is
// PyTorch's adaptive_max_pool3d rule; its indices are combined as max_pool3d's.
#include <fmt/format.h>

#include <string>
#include <tuple>
#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

std::string int3_str(Int3 v) { return fmt::format("({}, {}, {})", v.d, v.h, v.w); }

// Runs `run` (the composition); an error a 2-d function raises keeps its class, with
// "<op> (composed of <op2d>): " in front.
template <class Run>
auto composed(const char* op, const char* op2d, Run&& run) -> decltype(run()) {
  try {
    return run();
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("{} (composed of {}): ", op, op2d));
  }
}

// The input of every 3-d function: defined, [N, C, D, H, W] or [C, D, H, W], float.
void check_input(const char* op, const Tensor& input) {
  WICK_CHECK(input.defined(), "{}: input is undefined", op);
  const int64_t d = input.dim();
  WICK_CHECK(d == 4 || d == 5,
             "{}: expected a 4-d [C, D, H, W] (unbatched) or 5-d [N, C, D, H, W] input, got shape {}{}", op,
             shape_str(input), d == 3 ? "; give a single volume its channel dim with input.unsqueeze(0)" : "");
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
}

// A 5-d view of a 4-d (unbatched) input, and back.
Tensor batched(const Tensor& x) { return x.dim() == 4 ? unsqueeze(x, 0) : x; }
Tensor unbatched_like(const Tensor& y, const Tensor& input) { return input.dim() == 4 ? squeeze(y, 0) : y; }

void check_conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int3 stride, Int3 dilation,
                  int64_t groups) {
  check_input("conv3d", input);
  WICK_CHECK(weight.defined(), "conv3d: weight is undefined");
  WICK_CHECK(weight.dim() == 5, "conv3d: weight must be 5-d [out_channels, in_channels / groups, kD, kH, kW], got {}",
             shape_str(weight));
  WICK_CHECK(weight.size(2) > 0 && weight.size(3) > 0 && weight.size(4) > 0,
             "conv3d: kernel size should be greater than zero, got weight shape {}", shape_str(weight));
  WICK_CHECK_TYPE(input.dtype() == weight.dtype(), "conv3d: input is {} but weight is {}; convert one with .to(dtype)",
                  input.dtype(), weight.dtype());
  WICK_CHECK(input.device() == weight.device(),
             "conv3d: input is on {} but weight is on {}; move them to one device with .to(device)", input.device(),
             weight.device());
  WICK_CHECK(stride.d > 0 && stride.h > 0 && stride.w > 0 && dilation.d > 0 && dilation.h > 0 && dilation.w > 0,
             "conv3d: stride {} and dilation {} must be positive", int3_str(stride), int3_str(dilation));
  const int64_t C = input.size(-4), O = weight.size(0);
  WICK_CHECK(groups > 0, "conv3d: groups must be positive, got {}", groups);
  WICK_CHECK(C % groups == 0 && O % groups == 0,
             "conv3d: groups = {} must divide both the input channels ({}, input {}) and the output channels ({}, "
             "weight {})",
             groups, C, shape_str(input), O, shape_str(weight));
  WICK_CHECK(weight.size(1) == C / groups,
             "conv3d: input {} has {} channels, so weight {} should have {} input channels per group (in_channels / "
             "groups, groups = {}), not {}",
             shape_str(input), C, shape_str(weight), C / groups, groups, weight.size(1));
  if (bias.defined()) {
    WICK_CHECK(bias.dim() == 1 && bias.size(0) == O, "conv3d: bias must have shape [{}] (out_channels), got {}", O,
               shape_str(bias));
    WICK_CHECK_TYPE(bias.dtype() == weight.dtype(), "conv3d: bias is {} but weight is {}", bias.dtype(),
                    weight.dtype());
    WICK_CHECK(bias.device() == weight.device(), "conv3d: bias is on {} but weight is on {}", bias.device(),
               weight.device());
  }
}

// Along input dim `dim` (2, 3, 4 of the batched input): the size plus `total` padding must hold
// the dilated kernel.
void check_conv3d_extent(const Tensor& input, const Tensor& weight, int dim, int64_t total, int64_t dilation) {
  static const char* const names[] = {"depth", "height", "width"};
  const int64_t size = input.size(input.dim() - 5 + dim), k = weight.size(dim);
  int64_t span = 0, padded = 0;
  WICK_CHECK(!mul_overflow(dilation, k - 1, &span) && !add_overflow(span, int64_t{1}, &span) &&
                 !add_overflow(size, total, &padded),
             "conv3d: dilation, padding and kernel size over input {} give sizes past int64", shape_str(input));
  WICK_CHECK(padded >= span,
             "conv3d: the padded input {} {} ({} plus padding {} in all) is smaller than the dilated kernel {} (kernel "
             "size {}, dilation {}); input shape {}, weight shape {}",
             names[dim - 2], padded, size, total, span, k, dilation, shape_str(input), shape_str(weight));
}

// Note [3-d from 2-d]: x batched [N, C, D, H, W] with its depth already padded; `conv2d_run`
// runs conv2d on the folded input and weight with the height and width geometry.
template <class Conv2d>
Tensor conv3d_folded(const Tensor& x, const Tensor& weight, int64_t stride_d, int64_t dilation_d, int64_t groups,
                     Conv2d&& conv2d_run) {
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t O = weight.size(0), kD = weight.size(2), G = groups;
  const int64_t Do = (D - dilation_d * (kD - 1) - 1) / stride_d + 1;
  std::vector<Tensor> slices;
  for (int64_t kd = 0; kd < kD; ++kd)
    slices.push_back(slice(x, 2, kd * dilation_d, kd * dilation_d + (Do - 1) * stride_d + 1, stride_d));
  Tensor s = kD == 1 ? unsqueeze(slices[0], 2) : stack(slices, 2);  // [N, C, kD, Do, H, W]
  s = permute(s.reshape({N, G, C / G, kD, Do, H, W}), {0, 4, 1, 3, 2, 5, 6}).reshape({N * Do, C * kD, H, W});
  const Tensor w2 = permute(weight, {0, 2, 1, 3, 4}).reshape({O, kD * weight.size(1), weight.size(3), weight.size(4)});
  const Tensor y = conv2d_run(s, w2);  // [N Do, O, Ho, Wo]
  return permute(y.reshape({N, Do, O, y.size(2), y.size(3)}), {0, 2, 1, 3, 4});
}

// PyTorch's pooling_output_shape along one axis, every step checked against int64.
int64_t pooled_length(const char* op, int64_t L, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                      bool ceil_mode) {
  int64_t span = 0, padded = 0, num = 0;
  WICK_CHECK(!mul_overflow(dilation, k - 1, &span) && !add_overflow(L, 2 * pad, &padded) &&
                 !add_overflow(padded - span - 1, ceil_mode ? stride - 1 : 0, &num),
             "{}: kernel_size {}, padding {}, stride {} and dilation {} over a size of {} overflow int64", op, k, pad,
             stride, dilation, L);
  int64_t out = num / stride - (num < 0 && num % stride != 0 ? 1 : 0) + 1;  // floor(num / stride) + 1
  if (ceil_mode && out >= 1 && (out - 1) * stride >= L + pad) --out;        // the last window starts in the input
  return out;
}

// The pooling functions' checks; a stride of 0 becomes kernel_size.
void check_pool3d(const char* op, const Tensor& input, Int3 kernel_size, Int3& stride, Int3 padding, Int3 dilation,
                  bool ceil_mode) {
  check_input(op, input);
  const Int3 k = kernel_size;
  WICK_CHECK(k.d > 0 && k.h > 0 && k.w > 0, "{}: kernel_size must be greater than zero, got {}", op, int3_str(k));
  if (stride == Int3(0)) stride = k;
  WICK_CHECK(stride.d > 0 && stride.h > 0 && stride.w > 0,
             "{}: stride must be greater than zero, got {}; pass 0 (the default) for stride = kernel_size", op,
             int3_str(stride));
  WICK_CHECK(dilation.d > 0 && dilation.h > 0 && dilation.w > 0, "{}: dilation must be greater than zero, got {}", op,
             int3_str(dilation));
  const Int3 p = padding;
  WICK_CHECK(p.d >= 0 && p.h >= 0 && p.w >= 0 && p.d <= k.d / 2 && p.h <= k.h / 2 && p.w <= k.w / 2,
             "{}: padding {} must be non-negative and at most half the kernel size {}", op, int3_str(p), int3_str(k));
  const int64_t n = input.dim();
  const Int3 out(pooled_length(op, input.size(n - 3), k.d, p.d, stride.d, dilation.d, ceil_mode),
                 pooled_length(op, input.size(n - 2), k.h, p.h, stride.h, dilation.h, ceil_mode),
                 pooled_length(op, input.size(n - 1), k.w, p.w, stride.w, dilation.w, ceil_mode));
  WICK_CHECK(out.d > 0 && out.h > 0 && out.w > 0,
             "{}: input {} is too small for kernel_size {} with padding {} and dilation {}: the output would be {}", op,
             shape_str(input), int3_str(k), int3_str(p), int3_str(dilation), int3_str(out));
}

// [N, C, D, H, W] -> [N, C D, H, W] for the per-slice pass.
Tensor slices_as_batch(const Tensor& x) { return x.reshape({x.size(0), x.size(1) * x.size(2), x.size(3), x.size(4)}); }
// The per-slice pass's [N, C D, Ho, Wo] -> [N, C, D, Ho Wo] for the depth pass.
Tensor depth_plane(const Tensor& y, const Tensor& x) {
  return y.reshape({x.size(0), x.size(1), x.size(2), y.size(2) * y.size(3)});
}
// The depth pass's [N, C, Do, Ho Wo] -> [N, C, Do, Ho, Wo].
Tensor volume(const Tensor& z, const Tensor& slice_out) {
  return z.reshape({z.size(0), z.size(1), z.size(2), slice_out.size(2), slice_out.size(3)});
}

// The flat d H W + h W + w index of each maximum, from the per-slice pass's output y and indices
// hw (h W + w, [N, C D, Ho, Wo]) and the depth pass's indices dj (d (Ho Wo) + j, [N, C, Do, Ho Wo])
// over the batched input x; shaped as the output volume.
Tensor volume_index(const Tensor& x, const Tensor& y, const Tensor& hw, const Tensor& dj) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(3), W = x.size(4);
  const int64_t plane = y.size(2) * y.size(3);
  const Tensor h_w = gather(hw.reshape({N, C, -1}), 2, dj.reshape({N, C, -1})).reshape(dj.sizes());
  const Tensor j = arange(0, plane, 1, TensorOptions(kInt64).device(dj.device()));
  const Tensor d = (dj - j).to(kFloat64) / static_cast<double>(plane);  // exact: a multiple of plane
  return volume((d * static_cast<double>(H * W)).to(kInt64) + h_w, y);
}

// The adaptive 3-d functions' checks.
void check_adaptive3d(const char* op, const Tensor& input, Int3 output_size) {
  check_input(op, input);
  WICK_CHECK(output_size.d > 0 && output_size.h > 0 && output_size.w > 0,
             "{}: output_size must be positive, got {}; input shape {}", op, int3_str(output_size), shape_str(input));
  const int64_t n = input.dim();
  WICK_CHECK(input.size(n - 3) > 0 && input.size(n - 2) > 0 && input.size(n - 1) > 0,
             "{}: input {} has an empty spatial dim, so a window would have no position", op, shape_str(input));
}
}  // namespace

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int3 stride, Int3 padding, Int3 dilation,
              int64_t groups) {
  check_conv3d(input, weight, bias, stride, dilation, groups);
  WICK_CHECK(padding.d >= 0 && padding.h >= 0 && padding.w >= 0 && padding.d <= (int64_t{1} << 61) &&
                 padding.h <= (int64_t{1} << 61) && padding.w <= (int64_t{1} << 61),
             "conv3d: padding must be non-negative (and twice it within int64), got {}", int3_str(padding));
  check_conv3d_extent(input, weight, 2, 2 * padding.d, dilation.d);
  check_conv3d_extent(input, weight, 3, 2 * padding.h, dilation.h);
  check_conv3d_extent(input, weight, 4, 2 * padding.w, dilation.w);
  return composed("conv3d", "conv2d", [&] {
    Tensor x = batched(input);
    if (padding.d != 0) x = pad(x, {0, 0, 0, 0, padding.d, padding.d});
    const Tensor y = conv3d_folded(x, weight, stride.d, dilation.d, groups, [&](const Tensor& s, const Tensor& w2) {
      return conv2d(s, w2, bias, Int2(stride.h, stride.w), Int2(padding.h, padding.w), Int2(dilation.h, dilation.w),
                    groups);
    });
    return unbatched_like(y, input);
  });
}

// PyTorch's "same": dilation (k - 1) in all along each dim, the odd one after; the depth is padded
// here and conv2d's named padding does the same along the height and width.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int3 stride, PaddingMode padding,
              Int3 dilation, int64_t groups) {
  if (padding == PaddingMode::Valid) return conv3d(input, weight, bias, stride, 0, dilation, groups);
  check_conv3d(input, weight, bias, stride, dilation, groups);
  WICK_CHECK_NOT_IMPLEMENTED(stride == Int3(1),
                             "conv3d: padding=same needs stride 1 (as PyTorch), got stride {}; pad explicitly (F::pad) "
                             "for a strided convolution",
                             int3_str(stride));
  int64_t total[3] = {0, 0, 0};
  const int64_t dil[3] = {dilation.d, dilation.h, dilation.w};
  for (int i = 0; i < 3; ++i) {
    WICK_CHECK(!mul_overflow(dil[i], weight.size(2 + i) - 1, &total[i]),
               "conv3d: padding=same with dilation {} and weight {} gives a total padding past int64",
               int3_str(dilation), shape_str(weight));
    check_conv3d_extent(input, weight, 2 + i, total[i], dil[i]);
  }
  return composed("conv3d", "conv2d", [&] {
    Tensor x = batched(input);
    if (total[0] != 0) x = pad(x, {0, 0, 0, 0, total[0] / 2, total[0] - total[0] / 2});
    const Tensor y = conv3d_folded(x, weight, 1, dilation.d, groups, [&](const Tensor& s, const Tensor& w2) {
      return conv2d(s, w2, bias, Int2(1, 1), PaddingMode::Same, Int2(dilation.h, dilation.w), groups);
    });
    return unbatched_like(y, input);
  });
}

Tensor max_pool3d(const Tensor& input, Int3 kernel_size, Int3 stride, Int3 padding, Int3 dilation, bool ceil_mode) {
  check_pool3d("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode);
  return composed("max_pool3d", "max_pool2d", [&] {
    const Tensor x = batched(input);
    const Tensor y = max_pool2d(slices_as_batch(x), Int2(kernel_size.h, kernel_size.w), Int2(stride.h, stride.w),
                                Int2(padding.h, padding.w), Int2(dilation.h, dilation.w), ceil_mode);
    const Tensor z = max_pool2d(depth_plane(y, x), Int2(kernel_size.d, 1), Int2(stride.d, 1), Int2(padding.d, 0),
                                Int2(dilation.d, 1), ceil_mode);
    return unbatched_like(volume(z, y), input);
  });
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, Int3 kernel_size, Int3 stride, Int3 padding,
                                                   Int3 dilation, bool ceil_mode) {
  check_pool3d("max_pool3d_with_indices", input, kernel_size, stride, padding, dilation, ceil_mode);
  return composed("max_pool3d_with_indices", "max_pool2d_with_indices", [&] {
    const Tensor x = batched(input);
    auto [y, hw] =
        max_pool2d_with_indices(slices_as_batch(x), Int2(kernel_size.h, kernel_size.w), Int2(stride.h, stride.w),
                                Int2(padding.h, padding.w), Int2(dilation.h, dilation.w), ceil_mode);
    auto [z, dj] = max_pool2d_with_indices(depth_plane(y, x), Int2(kernel_size.d, 1), Int2(stride.d, 1),
                                           Int2(padding.d, 0), Int2(dilation.d, 1), ceil_mode);
    return std::make_tuple(unbatched_like(volume(z, y), input), unbatched_like(volume_index(x, y, hw, dj), input));
  });
}

Tensor avg_pool3d(const Tensor& input, Int3 kernel_size, Int3 stride, Int3 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  check_pool3d("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode);
  WICK_CHECK(divisor_override != 0,
             "avg_pool3d: divisor_override must not be zero (PyTorch: divisor must be not zero); leave it unset to "
             "divide by each window's size");
  return composed("avg_pool3d", "avg_pool2d", [&] {
    const Tensor x = batched(input);
    const std::optional<int64_t> sum_only = divisor_override ? std::optional<int64_t>(1) : std::nullopt;
    const Tensor y = avg_pool2d(slices_as_batch(x), Int2(kernel_size.h, kernel_size.w), Int2(stride.h, stride.w),
                                Int2(padding.h, padding.w), ceil_mode, count_include_pad, sum_only);
    const Tensor z = avg_pool2d(depth_plane(y, x), Int2(kernel_size.d, 1), Int2(stride.d, 1), Int2(padding.d, 0),
                                ceil_mode, count_include_pad, divisor_override);
    return unbatched_like(volume(z, y), input);
  });
}

Tensor adaptive_avg_pool3d(const Tensor& input, Int3 output_size) {
  check_adaptive3d("adaptive_avg_pool3d", input, output_size);
  return composed("adaptive_avg_pool3d", "adaptive_avg_pool2d", [&] {
    const Tensor x = batched(input);
    const Tensor y = adaptive_avg_pool2d(slices_as_batch(x), Int2(output_size.h, output_size.w));
    const Tensor z = adaptive_avg_pool2d(depth_plane(y, x), Int2(output_size.d, y.size(2) * y.size(3)));
    return unbatched_like(volume(z, y), input);
  });
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input, Int3 output_size) {
  check_adaptive3d("adaptive_max_pool3d", input, output_size);
  return composed("adaptive_max_pool3d", "adaptive_max_pool2d", [&] {
    const Tensor x = batched(input);
    auto [y, hw] = adaptive_max_pool2d_with_indices(slices_as_batch(x), Int2(output_size.h, output_size.w));
    auto [z, dj] = adaptive_max_pool2d_with_indices(depth_plane(y, x), Int2(output_size.d, y.size(2) * y.size(3)));
    return std::make_tuple(unbatched_like(volume(z, y), input), unbatched_like(volume_index(x, y, hw, dj), input));
  });
}

Tensor adaptive_max_pool3d(const Tensor& input, Int3 output_size) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, output_size));
}

}  // namespace wick::nn::functional
