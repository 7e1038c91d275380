// F::linear and F::conv2d: argument checks in front of the GEMM-based implementations.
#include <fmt/format.h>

#include "conv_ops.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

void check_floating(const char* op, const char* what, const Tensor& t) {
  WICK_CHECK_TYPE(t.is_floating_point(), "{}: {} must be float32 or float64, got {}", op, what, t.dtype());
}

// A 4-d weight whose kernel has no rows or no columns would give an output larger than the input
// (of zeros or the bias); PyTorch refuses it too.
void check_kernel_size(const Tensor& weight) {
  WICK_CHECK(weight.size(2) > 0 && weight.size(3) > 0,
             "conv2d: kernel size should be greater than zero, got kernel height {} and width {} (weight shape {})",
             weight.size(2), weight.size(3), shape_of(weight));
}
}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  WICK_CHECK(input.defined() && weight.defined(), "linear: input and weight must be defined");
  WICK_CHECK(weight.dim() == 2, "linear: weight must be 2-d [out_features, in_features], got shape {}",
             shape_of(weight));
  WICK_CHECK(input.dim() >= 1 && input.size(-1) == weight.size(1),
             "linear: input shape {} does not end in in_features = {} (weight shape {})", shape_of(input),
             weight.size(1), shape_of(weight));
  WICK_CHECK_TYPE(input.dtype() == weight.dtype(), "linear: input is {} but weight is {}; convert one with .to(dtype)",
                  input.dtype(), weight.dtype());
  if (bias.defined()) {
    WICK_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0),
               "linear: bias must have shape [{}] (out_features), got {}", weight.size(0), shape_of(bias));
    WICK_CHECK_TYPE(bias.dtype() == weight.dtype(), "linear: bias is {} but weight is {}", bias.dtype(),
                    weight.dtype());
  }
  WICK_CHECK(input.device() == weight.device() && (!bias.defined() || bias.device() == weight.device()),
             "linear: input is on {}, weight on {}{}{}: move them to one device with .to(device)", input.device(),
             weight.device(), bias.defined() ? ", bias on " : "",
             bias.defined() ? fmt::format("{}", bias.device()) : "");
  return wick::linear(input, weight, bias);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int2 stride, Int2 padding, Int2 dilation,
              int64_t groups) {
  WICK_CHECK(input.defined() && weight.defined(), "conv2d: input and weight must be defined");
  WICK_CHECK(input.dim() == 3 || input.dim() == 4,
             "conv2d: expected a 3-d [C, H, W] or 4-d [N, C, H, W] input, got shape {}", shape_of(input));
  WICK_CHECK(weight.dim() == 4, "conv2d: weight must be 4-d [out_channels, in_channels, kh, kw], got shape {}",
             shape_of(weight));
  check_kernel_size(weight);
  check_floating("conv2d", "input", input);
  WICK_CHECK_TYPE(input.dtype() == weight.dtype(), "conv2d: input is {} but weight is {}", input.dtype(),
                  weight.dtype());
  WICK_CHECK(input.device() == weight.device(), "conv2d: input is on {} but weight is on {}", input.device(),
             weight.device());
  WICK_CHECK(stride.h > 0 && stride.w > 0 && dilation.h > 0 && dilation.w > 0 && padding.h >= 0 && padding.w >= 0,
             "conv2d: stride ({}, {}) and dilation ({}, {}) must be positive and padding ({}, {}) non-negative",
             stride.h, stride.w, dilation.h, dilation.w, padding.h, padding.w);
  const bool batched = input.dim() == 4;
  const Tensor x = batched ? input : unsqueeze(input, 0);
  detail::ConvGeom g;
  g.N = x.size(0);
  g.C = x.size(1);
  g.H = x.size(2);
  g.W = x.size(3);
  g.O = weight.size(0);
  g.kh = weight.size(2);
  g.kw = weight.size(3);
  g.sh = stride.h;
  g.sw = stride.w;
  g.ph = padding.h;
  g.pw = padding.w;
  g.dh = dilation.h;
  g.dw = dilation.w;
  WICK_CHECK(groups > 0, "conv2d: groups must be positive, got {}", groups);
  WICK_CHECK(g.C % groups == 0 && g.O % groups == 0,
             "conv2d: groups = {} must divide both the input channels ({}) and the output channels ({}, weight {})",
             groups, g.C, g.O, shape_of(weight));
  g.G = groups;
  WICK_CHECK(weight.size(1) == g.C / groups,
             "conv2d: input has {} channels, so weight {} should have {} input channels per group (in_channels / "
             "groups, groups = {}), not {}",
             g.C, shape_of(weight), g.C / groups, groups, weight.size(1));
  if (bias.defined()) {
    WICK_CHECK(bias.dim() == 1 && bias.size(0) == g.O, "conv2d: bias must have shape [{}], got {}", g.O,
               shape_of(bias));
    WICK_CHECK_TYPE(bias.dtype() == weight.dtype(), "conv2d: bias is {} on {} but weight is {} on {}", bias.dtype(),
                    bias.device(), weight.dtype(), weight.device());
    WICK_CHECK(bias.device() == weight.device(), "conv2d: bias is {} on {} but weight is {} on {}", bias.dtype(),
               bias.device(), weight.dtype(), weight.device());
  }
  // Every size checked: a huge dilation or padding is a ValueError, never a wrapped geometry.
  int64_t eh = 0, ew = 0, padded_h = 0, padded_w = 0, two_ph = 0, two_pw = 0;
  WICK_CHECK(!mul_overflow(g.dh, g.kh - 1, &eh) && !add_overflow(eh, int64_t{1}, &eh) &&
                 !mul_overflow(g.dw, g.kw - 1, &ew) && !add_overflow(ew, int64_t{1}, &ew) &&
                 !mul_overflow(g.ph, int64_t{2}, &two_ph) && !add_overflow(g.H, two_ph, &padded_h) &&
                 !mul_overflow(g.pw, int64_t{2}, &two_pw) && !add_overflow(g.W, two_pw, &padded_w),
             "conv2d: dilation ({}, {}), padding ({}, {}) and kernel {} over input {} give sizes past int64", g.dh,
             g.dw, g.ph, g.pw, shape_of(weight), shape_of(input));
  WICK_CHECK(padded_h >= eh && padded_w >= ew,
             "conv2d: the padded input ({} x {}) is smaller than the dilated kernel ({} x {}); input shape {}, "
             "weight shape {}",
             padded_h, padded_w, eh, ew, shape_of(input), shape_of(weight));
  g.oh = (padded_h - eh) / g.sh + 1;
  g.ow = (padded_w - ew) / g.sw + 1;
  int64_t positions = 0;
  WICK_CHECK(!mul_overflow(g.oh, g.ow, &positions), "conv2d: an output of {} x {} positions is past int64 (input {})",
             g.oh, g.ow, shape_of(input));
  Tensor y = detail::conv2d_op(x, weight, bias, g);
  return batched ? y : squeeze(y, 0);
}

// PyTorch's "same": total padding d * (k - 1) per dim, half on each side; an odd total gets its
// extra row/column at the bottom/right through an explicit F::pad of the input.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int2 stride, PaddingMode padding,
              Int2 dilation, int64_t groups) {
  if (padding == PaddingMode::Valid) return conv2d(input, weight, bias, stride, 0, dilation, groups);
  WICK_CHECK(weight.defined() && weight.dim() == 4,
             "conv2d: weight must be a 4-d [out_channels, in_channels / groups, kh, kw] tensor");
  WICK_CHECK_NOT_IMPLEMENTED(
      stride.h == 1 && stride.w == 1,
      "conv2d: padding=same needs stride 1 (as PyTorch), got stride ({}, {}); pad explicitly for a strided "
      "convolution",
      stride.h, stride.w);
  WICK_CHECK(dilation.h > 0 && dilation.w > 0, "conv2d: dilation ({}, {}) must be positive", dilation.h, dilation.w);
  check_kernel_size(weight);
  int64_t total_h = 0, total_w = 0;
  WICK_CHECK(!mul_overflow(dilation.h, weight.size(2) - 1, &total_h) &&
                 !mul_overflow(dilation.w, weight.size(3) - 1, &total_w),
             "conv2d: padding=same with dilation ({}, {}) and kernel {} gives a total padding past int64", dilation.h,
             dilation.w, shape_of(weight));
  const int64_t extra_h = total_h % 2, extra_w = total_w % 2;
  const Tensor x = extra_h || extra_w ? pad(input, {0, extra_w, 0, extra_h}) : input;
  return conv2d(x, weight, bias, stride, Int2(total_h / 2, total_w / 2), dilation, groups);
}

}  // namespace wick::nn::functional
