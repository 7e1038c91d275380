// F::local_response_norm, F::lp_pool1d / lp_pool2d and F::max_unpool1d / 2d / 3d: each checked,
// then composed of differentiable ops (wick/nn/functional_lp_unpool.h).
//
// Note [max_unpool as a scatter]
// max_unpool flattens input and indices to [M, Lin] (M the batch times the channels, Lin the
// spatial size) and scatter_adds the input into a zero [M, P] plane, P the output's spatial size,
// at the indices, which are checked to lie in [0, P) first. Indices repeat when max pooling windows
// overlap (stride < kernel_size) and pick one maximum twice; PyTorch's CPU kernel then writes each
// value in turn, so the last one stays. A scatter_add would sum them, so each row's last
// occurrence of every index is found first (a stable argsort of the row: in sorted order an
// element is the last of its index when the next one differs) and only those are added: a mask
// of ones and zeros, which carries no gradient. The gradient is then gather(grad, indices) times
// the mask: scatter_add's, the exact derivative of the forward. PyTorch's max_unpool backward
// gives every repeated index the gradient at its position (docs/modules.md).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

std::string list_str(const std::vector<int64_t>& v) {
  return v.size() == 1 ? fmt::format("({},)", v[0]) : fmt::format("({})", fmt::join(v, ", "));
}

void check_norm_type(const char* op, double norm_type) {
  WICK_CHECK(std::isfinite(norm_type) && norm_type != 0.0,
             "{}: norm_type must be finite and nonzero (the result is a power 1 / norm_type), got {}", op, norm_type);
}

// The lp pools' input: defined, float, of rank `spatial` + 1 or + 2.
void check_pool_input(const char* op, const Tensor& input, int64_t spatial) {
  WICK_CHECK(input.defined(), "{}: input is undefined", op);
  WICK_CHECK(input.dim() == spatial + 1 || input.dim() == spatial + 2,
             "{}: expected a {}-d (unbatched) or {}-d input, got shape {}", op, spatial + 1, spatial + 2,
             shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
}

// PyTorch 1.13's tail of lp_pool: (sign(s) * relu(|s|) * window)^(1 / p), where s is the window mean
// of x^p (sign(s) * relu(|s|) is s; kept for PyTorch's gradient of 0 at s = 0).
Tensor lp_tail(const Tensor& avg, double norm_type, int64_t window) {
  const Tensor s = wick::sign(avg) * wick::relu(wick::abs(avg));
  return wick::pow(s * static_cast<double>(window), 1.0 / norm_type);
}

// Everything the max_unpool functions share, for `k` spatial dims (Note [max_unpool as a
// scatter]); kernel, stride (0: the kernel) and padding have k entries.
Tensor max_unpool(const char* op, const Tensor& input, const Tensor& indices, std::vector<int64_t> kernel,
                  std::vector<int64_t> stride, std::vector<int64_t> padding,
                  const std::optional<std::vector<int64_t>>& output_size) {
  const int64_t k = static_cast<int64_t>(kernel.size());
  WICK_CHECK(input.defined() && indices.defined(), "{}: input and indices must be defined, got {} and {}", op,
             shape_str(input), shape_str(indices));
  const int64_t r = input.dim();
  WICK_CHECK(r == k + 1 || r == k + 2, "{}: expected a {}-d (unbatched) or {}-d input, got shape {}", op, k + 1, k + 2,
             shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  WICK_CHECK_TYPE(indices.dtype() == kInt64, "{}: indices must be int64 (as max_pool returns them), got {}", op,
                  indices.dtype());
  WICK_CHECK(indices.sizes() == input.sizes(), "{}: indices {} must have the input's shape {}", op, shape_str(indices),
             shape_str(input));
  WICK_CHECK(indices.device() == input.device(), "{}: input is on {} but indices are on {}; move them to one device",
             op, input.device(), indices.device());
  for (int64_t d = 0; d < k; ++d) {
    if (stride[d] == 0) stride[d] = kernel[d];
  }
  for (int64_t d = 0; d < k; ++d) {
    WICK_CHECK(kernel[d] > 0, "{}: kernel_size should be greater than zero, got {}", op, list_str(kernel));
    WICK_CHECK(stride[d] > 0, "{}: stride should be greater than zero, got {}; pass 0 for stride = kernel_size", op,
               list_str(stride));
    WICK_CHECK(padding[d] >= 0, "{}: padding should be non-negative, got {}", op, list_str(padding));
  }
  for (int64_t d = r - k - 1; d < r; ++d)
    WICK_CHECK(input.size(d) > 0, "{}: input {} has an empty channel or spatial dim; only the batch may be empty", op,
               shape_str(input));
  // PyTorch's _unpool_output_size: the default sizes, or output_size within a stride of them.
  std::vector<int64_t> def(static_cast<size_t>(k)), out(static_cast<size_t>(k));
  for (int64_t d = 0; d < k; ++d) {
    int64_t v = 0, twice = 0;
    WICK_CHECK(!mul_overflow(input.size(r - k + d) - 1, stride[d], &v) && !add_overflow(v, kernel[d], &v) &&
                   !mul_overflow(padding[d], int64_t{2}, &twice) && !add_overflow(v, -twice, &v),
               "{}: kernel_size {}, stride {} and padding {} over input {} overflow int64", op, list_str(kernel),
               list_str(stride), list_str(padding), shape_str(input));
    def[d] = v;
  }
  out = def;
  if (output_size) {
    const auto& o = *output_size;
    const int64_t n = static_cast<int64_t>(o.size());
    WICK_CHECK(n == k || n == k + 2, "{}: output_size should hold {} or {} sizes, got {}", op, k, k + 2, list_str(o));
    for (int64_t d = 0; d < k; ++d) {
      const int64_t want = o[static_cast<size_t>(n - k + d)];
      // The open interval (def - stride, def + stride), each end saturated at int64's limits.
      int64_t lo = 0, hi = 0;
      if (add_overflow(def[d], -stride[d], &lo)) lo = std::numeric_limits<int64_t>::min();
      if (add_overflow(def[d], stride[d], &hi)) hi = std::numeric_limits<int64_t>::max();
      WICK_CHECK(lo < want && want < hi,
                 "{}: invalid output_size {}: dim {} must be strictly between {} and {} (the size the input {} "
                 "unpools to is {}, give or take less than the stride {})",
                 op, list_str(o), d, lo, hi, shape_str(input), def[d], stride[d]);
      out[d] = want;
    }
  }
  for (int64_t d = 0; d < k; ++d)
    WICK_CHECK(out[d] > 0,
               "{}: the output size {} has an empty dim (kernel_size {}, stride {}, padding {}, input {}); give "
               "output_size",
               op, list_str(out), list_str(kernel), list_str(stride), list_str(padding), shape_str(input));
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().begin() + (r - k));
  const int64_t M = checked_numel(shape, op);
  shape.insert(shape.end(), out.begin(), out.end());
  checked_numel(shape, op);
  const int64_t P = checked_numel(out, op);
  const int64_t Lin = checked_numel(std::vector<int64_t>(input.sizes().begin() + (r - k), input.sizes().end()), op);
  if (input.numel() > 0) {
    const int64_t lo = wick::min(indices).item<int64_t>(), hi = wick::max(indices).item<int64_t>();
    WICK_CHECK_INDEX(lo >= 0 && hi < P,
                     "{}: indices hold values from {} to {}, outside [0, {}) of the output's {} plane; pass the "
                     "indices that max pooling returned for an input of that size",
                     op, lo, hi, P, list_str(out));
  }

  const Tensor x = reshape(input, {M, Lin}), idx = reshape(indices, {M, Lin});
  Tensor src = x;
  if (Lin > 1 && M > 0) {  // keep each index's last occurrence only
    const Tensor perm = wick::argsort(idx, 1);
    const Tensor sorted = gather(idx, 1, perm);
    const Tensor differs = ne(slice(sorted, 1, 0, Lin - 1), slice(sorted, 1, 1, Lin)).to(x.dtype());
    const Tensor last = cat({differs, ones({M, 1}, x.options())}, 1);
    src = x * scatter_add(zeros({M, Lin}, x.options()), 1, perm, last);
  }
  return reshape(scatter_add(zeros({M, P}, x.options()), 1, idx, src), shape);
}
}  // namespace

Tensor local_response_norm(const Tensor& input, int64_t size, double alpha, double beta, double k) {
  WICK_CHECK(input.defined(), "local_response_norm: input is undefined");
  WICK_CHECK(input.dim() >= 3, "local_response_norm: expected an input of 3 or more dims [N, C, *], got shape {}",
             shape_str(input));
  WICK_CHECK_TYPE(input.is_floating_point(), "local_response_norm: input must be float32 or float64, got {}",
                  input.dtype());
  WICK_CHECK(size > 0, "local_response_norm: size should be greater than zero, got {}", size);
  if (input.numel() == 0) return input;
  const int64_t N = input.size(0), C = input.size(1), R = input.numel() / (N * C);
  // PyTorch's composition: the squares padded along the channels and averaged over `size` of them.
  const Tensor sq = reshape(input * input, {N, 1, C, R});
  const Tensor padded = pad(sq, {0, 0, size / 2, (size - 1) / 2});
  const Tensor avg = reshape(avg_pool2d(padded, Int2(size, 1), Int2(1, 1)), input.sizes());
  return input / wick::pow(avg * alpha + k, beta);
}

Tensor lp_pool1d(const Tensor& input, double norm_type, int64_t kernel_size, int64_t stride, bool ceil_mode) {
  check_pool_input("lp_pool1d", input, 1);
  check_norm_type("lp_pool1d", norm_type);
  try {
    Tensor avg = avg_pool1d(wick::pow(input, norm_type), kernel_size, stride, 0, ceil_mode);
    return lp_tail(avg, norm_type, kernel_size);
  } catch (const Error& e) {
    rethrow_with_context(e, "lp_pool1d (as avg_pool1d of input^norm_type): ");
  }
}

Tensor lp_pool2d(const Tensor& input, double norm_type, Int2 kernel_size, Int2 stride, bool ceil_mode) {
  check_pool_input("lp_pool2d", input, 2);
  check_norm_type("lp_pool2d", norm_type);
  int64_t window = 0;
  WICK_CHECK(!mul_overflow(kernel_size.h, kernel_size.w, &window), "lp_pool2d: kernel_size ({}, {}) overflows int64",
             kernel_size.h, kernel_size.w);
  try {
    Tensor avg = avg_pool2d(wick::pow(input, norm_type), kernel_size, stride, 0, ceil_mode);
    return lp_tail(avg, norm_type, window);
  } catch (const Error& e) {
    rethrow_with_context(e, "lp_pool2d (as avg_pool2d of input^norm_type): ");
  }
}

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, int64_t kernel_size, int64_t stride, int64_t padding,
                    const std::optional<std::vector<int64_t>>& output_size) {
  return max_unpool("max_unpool1d", input, indices, {kernel_size}, {stride}, {padding}, output_size);
}

Tensor max_unpool2d(const Tensor& input, const Tensor& indices, Int2 kernel_size, Int2 stride, Int2 padding,
                    const std::optional<std::vector<int64_t>>& output_size) {
  return max_unpool("max_unpool2d", input, indices, {kernel_size.h, kernel_size.w}, {stride.h, stride.w},
                    {padding.h, padding.w}, output_size);
}

Tensor max_unpool3d(const Tensor& input, const Tensor& indices, Int3 kernel_size, Int3 stride, Int3 padding,
                    const std::optional<std::vector<int64_t>>& output_size) {
  return max_unpool("max_unpool3d", input, indices, {kernel_size.d, kernel_size.h, kernel_size.w},
                    {stride.d, stride.h, stride.w}, {padding.d, padding.h, padding.w}, output_size);
}

}  // namespace wick::nn::functional
