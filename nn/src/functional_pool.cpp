// 2-d pooling on unfold2d (im2col): max over the window (padding reads -inf), mean over it
// (with PyTorch's divisor rules), and adaptive average pooling as two averaging matmuls.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "conv_ops.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// PyTorch's pooling_output_shape.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Checks and geometry shared by the pooling functions; x is made 4-d.
detail::ConvGeom pool_geometry(const char* op, const Tensor& input, Int2 k, Int2& stride, Int2 pad, Int2 dil,
                               bool ceil_mode) {
  WICK_CHECK(input.defined(), "{}: input is undefined", op);
  WICK_CHECK(input.dim() == 3 || input.dim() == 4, "{}: expected a 3-d [C, H, W] or 4-d [N, C, H, W] input, got {}",
             op, shape_of(input));
  WICK_CHECK(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  if (stride.h == 0 && stride.w == 0) stride = k;
  WICK_CHECK(k.h > 0 && k.w > 0 && stride.h > 0 && stride.w > 0 && dil.h > 0 && dil.w > 0,
             "{}: kernel_size ({}, {}), stride ({}, {}) and dilation ({}, {}) must be positive", op, k.h, k.w,
             stride.h, stride.w, dil.h, dil.w);
  WICK_CHECK(pad.h >= 0 && pad.w >= 0 && pad.h <= k.h / 2 && pad.w <= k.w / 2,
             "{}: padding ({}, {}) must be non-negative and at most half the kernel size ({}, {})", op, pad.h, pad.w,
             k.h, k.w);
  const int64_t off = input.dim() == 4 ? 1 : 0;
  detail::ConvGeom g;
  g.N = off ? input.size(0) : 1;
  g.C = input.size(off);
  g.H = input.size(off + 1);
  g.W = input.size(off + 2);
  g.kh = k.h; g.kw = k.w; g.sh = stride.h; g.sw = stride.w; g.ph = pad.h; g.pw = pad.w; g.dh = dil.h; g.dw = dil.w;
  g.oh = pooled_size(g.H, g.kh, g.ph, g.sh, g.dh, ceil_mode);
  g.ow = pooled_size(g.W, g.kw, g.pw, g.sw, g.dw, ceil_mode);
  WICK_CHECK(g.oh > 0 && g.ow > 0,
             "{}: input {} is too small for kernel ({}, {}) with padding ({}, {}) and dilation ({}, {}): the output "
             "would be {} x {}",
             op, shape_of(input), k.h, k.w, pad.h, pad.w, dil.h, dil.w, g.oh, g.ow);
  return g;
}

Tensor as4d(const Tensor& input) { return input.dim() == 4 ? input : unsqueeze(input, 0); }
Tensor restore(const Tensor& y, const Tensor& input) { return input.dim() == 4 ? y : squeeze(y, 0); }
}  // namespace

Tensor max_pool2d(const Tensor& input, Int2 kernel_size, Int2 stride, Int2 padding, Int2 dilation, bool ceil_mode) {
  const detail::ConvGeom g = pool_geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  Tensor cols = detail::unfold2d(as4d(input), g, -INFINITY);  // [N, C*kk, L]
  Tensor windows = view(cols, {g.N, g.C, g.kk(), g.L()});
  Tensor y = std::get<0>(max(windows, 2));
  return restore(view(y, {g.N, g.C, g.oh, g.ow}), input);
}

Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, Int2 stride, Int2 padding, bool ceil_mode,
                  bool count_include_pad) {
  const detail::ConvGeom g = pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode);
  // PyTorch's divisor per output position (windows clipped at H + pad; padding counted or not).
  std::vector<double> divisor(static_cast<size_t>(g.L()));
  for (int64_t i = 0; i < g.oh; ++i)
    for (int64_t j = 0; j < g.ow; ++j) {
      int64_t hs = i * g.sh - g.ph, ws = j * g.sw - g.pw;
      int64_t he = std::min(hs + g.kh, g.H + g.ph), we = std::min(ws + g.kw, g.W + g.pw);
      const int64_t pool = (he - hs) * (we - ws);
      hs = std::max<int64_t>(hs, 0);
      ws = std::max<int64_t>(ws, 0);
      he = std::min(he, g.H);
      we = std::min(we, g.W);
      divisor[static_cast<size_t>(i * g.ow + j)] = static_cast<double>(count_include_pad ? pool : (he - hs) * (we - ws));
    }
  Tensor div_t = native::to(native::from_blob_copy(divisor.data(), {g.L()}, kFloat64, input.device()),
                            input.device(), input.dtype());
  Tensor cols = detail::unfold2d(as4d(input), g, 0.0);
  Tensor sums = sum(view(cols, {g.N, g.C, g.kk(), g.L()}), {2});
  return restore(view(div(sums, div_t), {g.N, g.C, g.oh, g.ow}), input);
}

namespace {
// The [out, in] matrix whose row i averages PyTorch's adaptive window i.
Tensor adaptive_matrix(int64_t in, int64_t out, const Tensor& like) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t s = (i * in) / out, e = ((i + 1) * in + out - 1) / out;
    for (int64_t k = s; k < e; ++k) m[static_cast<size_t>(i * in + k)] = 1.0 / static_cast<double>(e - s);
  }
  return native::to(native::from_blob_copy(m.data(), {out, in}, kFloat64, like.device()), like.device(), like.dtype());
}
}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size) {
  WICK_CHECK(input.defined() && (input.dim() == 3 || input.dim() == 4),
             "adaptive_avg_pool2d: expected a 3-d or 4-d input, got {}",
             input.defined() ? shape_of(input) : std::string("undefined"));
  WICK_CHECK(input.is_floating_point(), "adaptive_avg_pool2d: input must be float32 or float64, got {}",
             input.dtype());
  WICK_CHECK(output_size.h > 0 && output_size.w > 0, "adaptive_avg_pool2d: output_size ({}, {}) must be positive",
             output_size.h, output_size.w);
  const int64_t H = input.size(-2), W = input.size(-1);
  WICK_CHECK(H > 0 && W > 0, "adaptive_avg_pool2d: input {} has an empty spatial dim", shape_of(input));
  if (H % output_size.h == 0 && W % output_size.w == 0) {
    const Int2 k(H / output_size.h, W / output_size.w);
    return avg_pool2d(input, k, k, 0, false, true);
  }
  // Windows are products of a row interval and a column interval: average rows, then columns.
  Tensor ph = adaptive_matrix(H, output_size.h, input);  // [oh, H]
  Tensor pw = adaptive_matrix(W, output_size.w, input);  // [ow, W]
  return matmul(matmul(ph, input), pw.t());
}

}  // namespace wick::nn::functional
