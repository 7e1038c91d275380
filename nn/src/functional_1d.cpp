// F::conv1d and the 1-d pooling functions: their arguments checked in 1-d terms, then the 2-d
// function run on a unit height (Note [1-d on a unit height]).
//
// Note [1-d on a unit height]
// A 1-d window operation over [N, C, L] is the 2-d one over [N, C, 1, L] with a kernel of height
// 1, stride 1, padding 0 and dilation 1 along the height: every output row reads row 0 only, so
// the values, the gradients (and their own gradients), the tie and NaN rules of max pooling and
// the divisors of avg pooling are the 2-d function's, and so is every device the 2-d function
// runs on. The height is added and removed with unsqueeze / squeeze, views recorded in the graph
// (no copy). max_pool2d's index h * W + w is l for h = 0, PyTorch's 1-d index.
//
// The 2-d functions check their arguments too, but name themselves and the unit height's extra
// sizes ((1, 3) for a kernel of 3); so everything a caller can get wrong is checked here first,
// in 1-d terms, and what the 2-d function still refuses (a size past int64, a window with no
// input position for max_pool1d_with_indices, memory) keeps its class and gets the 1-d op's
// name in front (on_unit_height).
#include <fmt/format.h>

#include <string>
#include <tuple>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

// [N, C, L] -> [N, C, 1, L] and [C, L] -> [C, 1, L] (which the 2-d functions read as unbatched
// [C, H, W]); a weight [O, C / g, K] -> [O, C / g, 1, K].
Tensor with_height(const Tensor& t) { return unsqueeze(t, t.dim() - 1); }
// The inverse: drops the unit height, the second-to-last dim.
Tensor without_height(const Tensor& t) { return squeeze(t, t.dim() - 2); }

// Runs `run` (the 2-d function on a unit height); an error it raises keeps its class, with
// "<op> (as <op2d> on a unit height): " in front.
template <class Run>
auto on_unit_height(const char* op, const char* op2d, Run&& run) -> decltype(run()) {
  try {
    return run();
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("{} (as {} on a unit height): ", op, op2d));
  }
}

// The input of every 1-d function: defined, [N, C, L] or [C, L], float.
void check_input(const char* op, const char* op2d, const Tensor& input) {
  WICK_CHECK(input.defined(), "{}: input is undefined", op);
  const int64_t d = input.dim();
  WICK_CHECK(d == 2 || d == 3, "{}: expected a 2-d [C, L] (unbatched) or 3-d [N, C, L] input, got shape {}{}", op,
             shape_str(input),
             d == 4   ? fmt::format("; a 4-d [N, C, H, W] input is {}'s", op2d)
             : d == 1 ? std::string("; give a single signal its channel dim with input.unsqueeze(0)")
                      : std::string());
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
}

// conv1d's checks other than the padding and the length: input, weight and bias ranks, dtypes,
// devices and channels, stride, dilation and groups.
void check_conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t dilation,
                  int64_t groups) {
  check_input("conv1d", "conv2d", input);
  WICK_CHECK(weight.defined(), "conv1d: weight is undefined");
  WICK_CHECK(weight.dim() == 3,
             "conv1d: weight must be 3-d [out_channels, in_channels / groups, kernel_size], got shape {}",
             shape_str(weight));
  WICK_CHECK(weight.size(2) > 0, "conv1d: kernel size should be greater than zero, got weight shape {}",
             shape_str(weight));
  WICK_CHECK_TYPE(input.dtype() == weight.dtype(), "conv1d: input is {} but weight is {}; convert one with .to(dtype)",
                  input.dtype(), weight.dtype());
  WICK_CHECK(input.device() == weight.device(),
             "conv1d: input is on {} but weight is on {}; move them to one device with .to(device)", input.device(),
             weight.device());
  WICK_CHECK(stride > 0 && dilation > 0, "conv1d: stride ({}) and dilation ({}) must be positive", stride, dilation);
  const int64_t C = input.size(-2), O = weight.size(0);
  WICK_CHECK(groups > 0, "conv1d: groups must be positive, got {}", groups);
  WICK_CHECK(C % groups == 0 && O % groups == 0,
             "conv1d: groups = {} must divide both the input channels ({}, input {}) and the output channels ({}, "
             "weight {})",
             groups, C, shape_str(input), O, shape_str(weight));
  WICK_CHECK(weight.size(1) == C / groups,
             "conv1d: input {} has {} channels, so weight {} should have {} input channels per group (in_channels / "
             "groups, groups = {}), not {}",
             shape_str(input), C, shape_str(weight), C / groups, groups, weight.size(1));
  if (bias.defined()) {
    WICK_CHECK(bias.dim() == 1 && bias.size(0) == O, "conv1d: bias must have shape [{}] (out_channels), got {}", O,
               shape_str(bias));
    WICK_CHECK_TYPE(bias.dtype() == weight.dtype(), "conv1d: bias is {} but weight is {}", bias.dtype(),
                    weight.dtype());
    WICK_CHECK(bias.device() == weight.device(), "conv1d: bias is on {} but weight is on {}", bias.device(),
               weight.device());
  }
}

// The input's length plus `total_padding` must hold the dilated kernel, dilation (K - 1) + 1.
void check_conv1d_length(const Tensor& input, const Tensor& weight, int64_t total_padding, int64_t dilation) {
  const int64_t L = input.size(-1), K = weight.size(2);
  int64_t span = 0, padded = 0;
  WICK_CHECK(!mul_overflow(dilation, K - 1, &span) && !add_overflow(span, int64_t{1}, &span) &&
                 !add_overflow(L, total_padding, &padded),
             "conv1d: dilation {}, padding {} in all and kernel_size {} over input {} give sizes past int64", dilation,
             total_padding, K, shape_str(input));
  WICK_CHECK(padded >= span,
             "conv1d: the padded input length {} (length {} plus padding {} in all) is shorter than the dilated kernel "
             "{} (kernel_size {}, dilation {}); input shape {}, weight shape {}",
             padded, L, total_padding, span, K, dilation, shape_str(input), shape_str(weight));
}

// PyTorch's pooling_output_shape along L (functional_pool.cpp's for each 2-d axis), every step
// checked against int64.
int64_t pooled_length(const char* op, int64_t L, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                      bool ceil_mode) {
  int64_t span = 0, padded = 0, num = 0;
  WICK_CHECK(!mul_overflow(dilation, k - 1, &span) && !add_overflow(L, 2 * pad, &padded) &&
                 !add_overflow(padded - span - 1, ceil_mode ? stride - 1 : 0, &num),
             "{}: kernel_size {}, padding {}, stride {} and dilation {} over an input of length {} overflow int64", op,
             k, pad, stride, dilation, L);
  int64_t out = num / stride - (num < 0 && num % stride != 0 ? 1 : 0) + 1;  // floor(num / stride) + 1
  if (ceil_mode && out >= 1 && (out - 1) * stride >= L + pad) --out;        // the last window starts in the input
  return out;
}

// The pooling functions' checks; a stride of 0 becomes kernel_size.
void check_pool1d(const char* op, const char* op2d, const Tensor& input, int64_t kernel_size, int64_t& stride,
                  int64_t padding, int64_t dilation, bool ceil_mode) {
  check_input(op, op2d, input);
  WICK_CHECK(kernel_size > 0, "{}: kernel_size must be greater than zero, got {}", op, kernel_size);
  if (stride == 0) stride = kernel_size;
  WICK_CHECK(stride > 0, "{}: stride must be greater than zero, got {}; pass 0 (the default) for stride = kernel_size",
             op, stride);
  WICK_CHECK(dilation > 0, "{}: dilation must be greater than zero, got {}", op, dilation);
  WICK_CHECK(padding >= 0 && padding <= kernel_size / 2,
             "{}: padding {} must be non-negative and at most half the kernel size {}", op, padding, kernel_size);
  const int64_t L = input.size(-1);
  const int64_t out = pooled_length(op, L, kernel_size, padding, stride, dilation, ceil_mode);
  WICK_CHECK(out > 0,
             "{}: input {} of length {} is too small for kernel_size {} with padding {} and dilation {}: the output "
             "would have length {}",
             op, shape_str(input), L, kernel_size, padding, dilation, out);
}
}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  check_conv1d(input, weight, bias, stride, dilation, groups);
  int64_t total = 0;
  WICK_CHECK(padding >= 0 && !mul_overflow(padding, int64_t{2}, &total),
             "conv1d: padding must be non-negative (and twice it within int64), got {}", padding);
  check_conv1d_length(input, weight, total, dilation);
  return on_unit_height("conv1d", "conv2d", [&] {
    return without_height(conv2d(with_height(input), with_height(weight), bias, Int2(1, stride), Int2(0, padding),
                                 Int2(1, dilation), groups));
  });
}

// PyTorch's "same": dilation (K - 1) in all, the odd one on the right; conv2d's named padding
// does exactly that along the width, and pads nothing along a unit height.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, PaddingMode padding,
              int64_t dilation, int64_t groups) {
  if (padding == PaddingMode::Valid) return conv1d(input, weight, bias, stride, 0, dilation, groups);
  check_conv1d(input, weight, bias, stride, dilation, groups);
  WICK_CHECK_NOT_IMPLEMENTED(stride == 1,
                             "conv1d: padding=same needs stride 1 (as PyTorch), got stride {}; pad explicitly (F::pad) "
                             "for a strided convolution",
                             stride);
  int64_t total = 0;
  WICK_CHECK(!mul_overflow(dilation, weight.size(2) - 1, &total),
             "conv1d: padding=same with dilation {} and weight {} gives a total padding past int64", dilation,
             shape_str(weight));
  check_conv1d_length(input, weight, total, dilation);
  return on_unit_height("conv1d", "conv2d", [&] {
    return without_height(conv2d(with_height(input), with_height(weight), bias, Int2(1, 1), PaddingMode::Same,
                                 Int2(1, dilation), groups));
  });
}

Tensor max_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride, int64_t padding, int64_t dilation,
                  bool ceil_mode) {
  check_pool1d("max_pool1d", "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  return on_unit_height("max_pool1d", "max_pool2d", [&] {
    return without_height(max_pool2d(with_height(input), Int2(1, kernel_size), Int2(1, stride), Int2(0, padding),
                                     Int2(1, dilation), ceil_mode));
  });
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, int64_t kernel_size, int64_t stride,
                                                   int64_t padding, int64_t dilation, bool ceil_mode) {
  check_pool1d("max_pool1d_with_indices", "max_pool2d_with_indices", input, kernel_size, stride, padding, dilation,
               ceil_mode);
  return on_unit_height("max_pool1d_with_indices", "max_pool2d_with_indices", [&] {
    auto [values, indices] = max_pool2d_with_indices(with_height(input), Int2(1, kernel_size), Int2(1, stride),
                                                     Int2(0, padding), Int2(1, dilation), ceil_mode);
    return std::make_tuple(without_height(values), without_height(indices));
  });
}

Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride, int64_t padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  check_pool1d("avg_pool1d", "avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode);
  WICK_CHECK(divisor_override != 0,
             "avg_pool1d: divisor_override must not be zero (PyTorch: divisor must be not "
             "zero); leave it unset to divide by each window's size");
  return on_unit_height("avg_pool1d", "avg_pool2d", [&] {
    return without_height(avg_pool2d(with_height(input), Int2(1, kernel_size), Int2(1, stride), Int2(0, padding),
                                     ceil_mode, count_include_pad, divisor_override));
  });
}

Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size) {
  check_input("adaptive_avg_pool1d", "adaptive_avg_pool2d", input);
  WICK_CHECK(output_size > 0, "adaptive_avg_pool1d: output_size must be positive, got {}", output_size);
  WICK_CHECK(input.size(-1) > 0, "adaptive_avg_pool1d: input {} has length 0, so there is nothing to average",
             shape_str(input));
  return on_unit_height("adaptive_avg_pool1d", "adaptive_avg_pool2d",
                        [&] { return without_height(adaptive_avg_pool2d(with_height(input), Int2(1, output_size))); });
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input, int64_t output_size) {
  check_input("adaptive_max_pool1d", "adaptive_max_pool2d", input);
  WICK_CHECK(output_size > 0, "adaptive_max_pool1d: output_size must be positive, got {}", output_size);
  WICK_CHECK(input.size(-1) > 0, "adaptive_max_pool1d: input {} has length 0, so a window would have no position",
             shape_str(input));
  return on_unit_height("adaptive_max_pool1d", "adaptive_max_pool2d", [&] {
    auto [values, indices] = adaptive_max_pool2d_with_indices(with_height(input), OptionalInt2(1, output_size));
    return std::make_tuple(without_height(values), without_height(indices));
  });
}

Tensor adaptive_max_pool1d(const Tensor& input, int64_t output_size) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, output_size));
}

}  // namespace wick::nn::functional
