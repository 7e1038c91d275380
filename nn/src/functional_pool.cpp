// 2-d pooling: max pooling on the backend's max_pool2d kernel (values and positions in one pass;
// the backward scatters the output-sized gradient), mean pooling on unfold2d (im2col) with
// PyTorch's divisor rules, and adaptive average pooling as two averaging matmuls.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "adaptive_bins.h"
#include "conv_ops.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"
#include "wick/core/backend.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
std::string shape_of(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// PyTorch's pooling_output_shape; every step checked, so a huge kernel, dilation or stride is a
// ValueError rather than a wrapped size.
int64_t pooled_size(const char* op, int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                    bool ceil_mode) {
  int64_t span = 0, padded = 0, num = 0;
  WICK_CHECK(!mul_overflow(dilation, k - 1, &span) && !add_overflow(in, 2 * pad, &padded) &&
                 !add_overflow(padded - span - 1, ceil_mode ? stride - 1 : 0, &num),
             "{}: kernel {}, padding {}, stride {} and dilation {} over an input of size {} overflow int64", op, k, pad,
             stride, dilation, in);
  int64_t out = num / stride - (num < 0 && num % stride != 0 ? 1 : 0) + 1;  // floor(num / stride) + 1
  if (ceil_mode && out >= 1 && (out - 1) * stride >= in + pad) --out;       // out >= 1: (out - 1) * stride <= num
  return out;
}

// Checks and geometry shared by the pooling functions; x is made 4-d.
detail::ConvGeom pool_geometry(const char* op, const Tensor& input, Int2 k, Int2& stride, Int2 pad, Int2 dil,
                               bool ceil_mode) {
  WICK_CHECK(input.defined(), "{}: input is undefined", op);
  WICK_CHECK(input.dim() == 3 || input.dim() == 4, "{}: expected a 3-d [C, H, W] or 4-d [N, C, H, W] input, got {}", op,
             shape_of(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  if (stride.h == 0 && stride.w == 0) stride = k;
  WICK_CHECK(k.h > 0 && k.w > 0 && stride.h > 0 && stride.w > 0 && dil.h > 0 && dil.w > 0,
             "{}: kernel_size ({}, {}), stride ({}, {}) and dilation ({}, {}) must be positive", op, k.h, k.w, stride.h,
             stride.w, dil.h, dil.w);
  WICK_CHECK(pad.h >= 0 && pad.w >= 0 && pad.h <= k.h / 2 && pad.w <= k.w / 2,
             "{}: padding ({}, {}) must be non-negative and at most half the kernel size ({}, {})", op, pad.h, pad.w,
             k.h, k.w);
  const int64_t off = input.dim() == 4 ? 1 : 0;
  detail::ConvGeom g;
  g.N = off ? input.size(0) : 1;
  g.C = input.size(off);
  g.H = input.size(off + 1);
  g.W = input.size(off + 2);
  g.kh = k.h;
  g.kw = k.w;
  g.sh = stride.h;
  g.sw = stride.w;
  g.ph = pad.h;
  g.pw = pad.w;
  g.dh = dil.h;
  g.dw = dil.w;
  g.oh = pooled_size(op, g.H, g.kh, g.ph, g.sh, g.dh, ceil_mode);
  g.ow = pooled_size(op, g.W, g.kw, g.pw, g.sw, g.dw, ceil_mode);
  WICK_CHECK(g.oh > 0 && g.ow > 0,
             "{}: input {} is too small for kernel ({}, {}) with padding ({}, {}) and dilation ({}, {}): the output "
             "would be {} x {}",
             op, shape_of(input), k.h, k.w, pad.h, pad.w, dil.h, dil.w, g.oh, g.ow);
  // wick reads every tap of a window, padding included (PyTorch clips windows to the input), so
  // the taps of one window are bounded; that also keeps every product below int64.
  constexpr int64_t kMaxTaps = int64_t{1} << 30;
  int64_t taps = 0, windows = 0, columns = 0, elements = 0;
  WICK_CHECK_NOT_IMPLEMENTED(!mul_overflow(k.h, k.w, &taps) && taps <= kMaxTaps,
                             "{}: a kernel of {} x {} is larger than wick's pooling supports ({} taps in a window): "
                             "wick reads every tap of a window, padding included",
                             op, k.h, k.w, kMaxTaps);
  WICK_CHECK(!mul_overflow(g.oh, g.ow, &windows) && !mul_overflow(g.N * g.C, taps, &columns) &&
                 !mul_overflow(columns, windows, &elements),
             "{}: input {} with kernel ({}, {}) gives {} x {} windows of {} taps for each of its {} planes, more "
             "elements than int64 counts",
             op, shape_of(input), k.h, k.w, g.oh, g.ow, taps, g.N * g.C);
  return g;
}

Tensor as4d(const Tensor& input) { return input.dim() == 4 ? input : unsqueeze(input, 0); }
Tensor restore(const Tensor& y, const Tensor& input) { return input.dim() == 4 ? y : squeeze(y, 0); }
}  // namespace

namespace {
// True when some window of one axis lies wholly in the padding or past the end (dilation can
// step over the whole input): PyTorch leaves such an output -inf with an index outside the
// plane; wick takes the unfold path there, whose gradient for that output goes nowhere.
bool axis_has_empty_window(int64_t size, int64_t out, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
  for (int64_t o = 0; o < out; ++o) {
    // The window's first tap at or past index 0 (taps are start + t * dilation), if it has one,
    // must land before `size`. One step per window, however large the kernel.
    const int64_t start = o * stride - pad;
    const int64_t t = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    if (t >= k || start + t * dilation >= size) return true;
  }
  return false;
}
bool has_empty_window(const detail::ConvGeom& g) {
  return axis_has_empty_window(g.H, g.oh, g.kh, g.sh, g.ph, g.dh) ||
         axis_has_empty_window(g.W, g.ow, g.kw, g.sw, g.pw, g.dw);
}

// The reference formulation: max over the unfolded windows (padding reads -inf). Used where a
// window may be empty.
Tensor max_pool2d_unfolded(const Tensor& input, const detail::ConvGeom& g) {
  Tensor cols = detail::unfold2d(as4d(input), g, -INFINITY);  // [N, C*kk, L]
  Tensor windows = view(cols, {g.N, g.C, g.kk(), g.L()});
  Tensor y = std::get<0>(max(windows, 2));
  return restore(view(y, {g.N, g.C, g.oh, g.ow}), input);
}

// grad_input [N, C, H, W] = zeros with grad_out added at each maximum's position. Differentiable
// (through scatter_add) when the backward itself is recorded (create_graph); otherwise one
// backend pass.
Tensor max_pool2d_input_grad(const Tensor& grad_out, const Tensor& indices, const detail::ConvGeom& g) {
  if (GradMode::is_enabled()) {
    Tensor flat = zeros({g.N, g.C, g.H * g.W}, grad_out.options());
    return view(scatter_add(flat, 2, indices, reshape(grad_out, {g.N, g.C, g.L()})), {g.N, g.C, g.H, g.W});
  }
  Tensor gx = native::empty({g.N, g.C, g.H, g.W}, grad_out.dtype(), grad_out.device());
  if (gx.numel() == 0) return gx;
  const Tensor gy = native::contiguous(grad_out);
  backend(gx.device())
      .max_pool2d_backward(detail::window_args(g, gx.dtype(), g.N * g.C), gy.data_ptr(),
                           static_cast<const int64_t*>(indices.data_ptr()), gx.data_ptr());
  return gx;
}
}  // namespace

namespace {
// max_pool2d on the backend kernel, for a geometry without empty windows: values, indices, and
// the backward node.
std::tuple<Tensor, Tensor> max_pool2d_kernel(const Tensor& input, const detail::ConvGeom& g) {
  const Tensor x = native::contiguous(as4d(input));
  Tensor y = native::empty({g.N, g.C, g.oh, g.ow}, x.dtype(), x.device());
  Tensor idx = native::empty({g.N, g.C, g.oh, g.ow}, kInt64, x.device());
  if (y.numel()) {
    backend(x.device())
        .max_pool2d(detail::window_args(g, x.dtype(), g.N * g.C), x.data_ptr(), y.data_ptr(),
                    static_cast<int64_t*>(idx.data_ptr()));
  }
  if (autograd::needs_grad({&input})) {
    // The indices are saved with their version: the caller gets them too, and a backward after
    // an in-place change to them fails with the saved-tensor error instead of scattering to
    // arbitrary positions.
    const DimVector in_shape(input.sizes());
    autograd::record_function("MaxPool2DWithIndicesBackward", {input}, {y},
                              [g, in_shape](const autograd::variable_list& grads,
                                            const autograd::variable_list& saved) -> autograd::variable_list {
                                const Tensor flat_idx = native::view(saved[0], {g.N, g.C, g.L()});
                                return {reshape(max_pool2d_input_grad(grads[0], flat_idx, g), in_shape)};
                              },
                              {idx});
  }
  return {restore(y, input), restore(idx, input)};
}
}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Int2 kernel_size, Int2 stride, Int2 padding,
                                                   Int2 dilation, bool ceil_mode) {
  const detail::ConvGeom g = pool_geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  WICK_CHECK(!has_empty_window(g),
             "max_pool2d_with_indices: input {} with kernel ({}, {}), padding ({}, {}) and dilation ({}, {}) has a "
             "window with no input position, whose index would be undefined; use max_pool2d, or less padding or "
             "dilation",
             shape_of(input), g.kh, g.kw, g.ph, g.pw, g.dh, g.dw);
  return max_pool2d_kernel(input, g);
}

Tensor max_pool2d(const Tensor& input, Int2 kernel_size, Int2 stride, Int2 padding, Int2 dilation, bool ceil_mode) {
  const detail::ConvGeom g = pool_geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  return has_empty_window(g) ? max_pool2d_unfolded(input, g) : std::get<0>(max_pool2d_kernel(input, g));
}

Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, Int2 stride, Int2 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const detail::ConvGeom g = pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode);
  WICK_CHECK(divisor_override != 0,
             "avg_pool2d: divisor_override must not be zero (PyTorch: divisor must be not "
             "zero); leave it unset to divide by each window's size");
  // The output's size is checked first (a typed error, never a wrapped product), and an empty
  // output needs no divisors.
  if (checked_numel({g.N, g.C, g.oh, g.ow}, "avg_pool2d") == 0)
    return restore(native::empty({g.N, g.C, g.oh, g.ow}, input.dtype(), input.device()), input);
  if (divisor_override) {  // one divisor for every window
    Tensor cols = detail::unfold2d(as4d(input), g, 0.0);
    Tensor sums = sum(view(cols, {g.N, g.C, g.kk(), g.L()}), {2});
    Tensor div_t = native::scalar_tensor(static_cast<double>(*divisor_override), input.dtype(), input.device());
    return restore(view(div(sums, div_t), {g.N, g.C, g.oh, g.ow}), input);
  }
  // PyTorch's divisor per output position (windows clipped at H + pad; padding counted or not).
  Tensor divisor_t = native::empty({g.L()}, kFloat64, kCPU);
  double* divisor = divisor_t.data_ptr<double>();
  for (int64_t i = 0; i < g.oh; ++i)
    for (int64_t j = 0; j < g.ow; ++j) {
      int64_t hs = i * g.sh - g.ph, ws = j * g.sw - g.pw;
      int64_t he = std::min(hs + g.kh, g.H + g.ph), we = std::min(ws + g.kw, g.W + g.pw);
      const int64_t pool = (he - hs) * (we - ws);
      hs = std::max<int64_t>(hs, 0);
      ws = std::max<int64_t>(ws, 0);
      he = std::min(he, g.H);
      we = std::min(we, g.W);
      divisor[i * g.ow + j] = static_cast<double>(count_include_pad ? pool : (he - hs) * (we - ws));
    }
  Tensor div_t = native::to(divisor_t, input.device(), input.dtype());
  Tensor cols = detail::unfold2d(as4d(input), g, 0.0);
  Tensor sums = sum(view(cols, {g.N, g.C, g.kk(), g.L()}), {2});
  return restore(view(div(sums, div_t), {g.N, g.C, g.oh, g.ow}), input);
}

namespace {
// PyTorch's adaptive windows along one dim of `in` elements cut into `out`: window i is
// [floor(i in / out), ceil((i + 1) in / out)). As tensors on `like`'s device: `index` [out * K]
// the elements of each window, K at least the longest window's length, a shorter window
// repeating its first element; `mask` [out, K] which of those are the window's own; `inv_len`
// [out] 1 / its length, in `like`'s dtype. Allocated as tensors, so a size past int64 or memory
// is a typed error (ValueError, OutOfMemoryError) before any index is computed.
struct AdaptiveWindows {
  Tensor index, mask, inv_len;
};
AdaptiveWindows adaptive_windows(int64_t in, int64_t out, const Tensor& like) {
  const auto start = [&](int64_t i) { return detail::adaptive_start(i, in, out); };
  const auto end = [&](int64_t i) { return detail::adaptive_end(i, in, out); };
  AdaptiveWindows w;
  // No window is longer than ceil(in / out) + 1 (nor than in); the slots past a window's end
  // are masked, so a bound serves.
  const int64_t K = std::min(in, in / out + 2);
  Tensor index = native::empty({out, K}, kInt64, kCPU);
  Tensor mask = native::empty({out, K}, kBool, kCPU);
  Tensor inv = native::empty({out}, kFloat64, kCPU);
  int64_t* ix = index.data_ptr<int64_t>();
  bool* mk = mask.data_ptr<bool>();
  double* iv = inv.data_ptr<double>();
  for (int64_t i = 0; i < out; ++i) {
    const int64_t s = start(i), e = end(i);
    for (int64_t k = 0; k < K; ++k) {
      ix[i * K + k] = s + k < e ? s + k : s;
      mk[i * K + k] = s + k < e;
    }
    iv[i] = 1.0 / static_cast<double>(e - s);
  }
  w.index = native::to(native::reshape(index, {out * K}), like.device(), kInt64);
  w.mask = native::to(mask, like.device(), kBool);
  w.inv_len = native::to(inv, like.device(), like.dtype());
  return w;
}

// The mean of each window along the last (`last`) or the second-to-last dim of x. The elements
// outside a window are selected out with where(), never multiplied by 0: an inf or NaN then
// reaches only the windows that hold it, as in PyTorch, where a product with zero weights turned
// the rest of its plane into NaN (0 * inf).
Tensor window_means(const Tensor& x, bool last, const AdaptiveWindows& w) {
  const int64_t out = w.mask.size(0), K = w.mask.size(1);
  const int64_t d = x.dim() - (last ? 1 : 2);
  Tensor picked = index_select(x, d, w.index);  // [..., out * K(, W)]
  std::vector<int64_t> shape(picked.sizes().begin(), picked.sizes().end());
  shape[static_cast<size_t>(d)] = out;
  shape.insert(shape.begin() + d + 1, K);  // [..., out, K(, W)]
  picked = reshape(picked, shape);
  const Tensor mask = last ? w.mask : native::reshape(w.mask, {out, K, 1});
  const Tensor inv = last ? w.inv_len : native::reshape(w.inv_len, {out, 1});
  return mul(sum(where(mask, picked, 0.0), {d + 1}), inv);
}
}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size) {
  WICK_CHECK(input.defined() && (input.dim() == 3 || input.dim() == 4),
             "adaptive_avg_pool2d: expected a 3-d or 4-d input, got {}",
             input.defined() ? shape_of(input) : std::string("undefined"));
  WICK_CHECK_TYPE(input.is_floating_point(), "adaptive_avg_pool2d: input must be float32 or float64, got {}",
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
  const AdaptiveWindows rows = adaptive_windows(H, output_size.h, input);
  const AdaptiveWindows cols = adaptive_windows(W, output_size.w, input);
  return window_means(window_means(input, false, rows), true, cols);
}

}  // namespace wick::nn::functional
