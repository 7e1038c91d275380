// F::adaptive_max_pool2d and F::adaptive_max_pool2d_with_indices: the maximum over each of
// PyTorch's adaptive windows, on max_pool2d's kernel (Note [Adaptive max pooling]).
//
// Note [Adaptive max pooling]
// Along each axis the windows [start(i), end(i)) (adaptive_bins.h) are laid side by side, each
// padded to K positions, K the longest window's length, by repeating its last position: the
// gathered positions P (out * K of them) hold window i at [i K, (i + 1) K). index_select gathers
// the input's rows at P_h and its columns at P_w; on that plane every window is one K_h x K_w
// block, and max_pool2d_with_indices with kernel = stride = (K_h, K_w) takes the maxima. Its
// kernel scans a block in row-major order and lets a later value replace the best when it is
// greater or NaN (math::pool_take): the first maximum, or the last NaN, which is PyTorch's rule
// for adaptive_max_pool2d too. The repeats change neither: a repeated column comes right after
// itself in its row and a repeated row right after itself, so the scan meets the window's own
// positions in row-major order, each original before its copies; the first maximum is met at an
// original, and the last NaN met is (a copy of) the window's last NaN. An all -inf window keeps
// its first position, as PyTorch.
//
// An axis whose size the output divides (in % out == 0) has its windows side by side already
// (K = in / out, P = 0, 1, ..., in - 1) and is not gathered, so sizes that divide both ways are
// plain max_pool2d with kernel = stride = (H / oh, W / ow), with no copy.
//
// The kernel's index of a maximum is g_h * (ow K_w) + g_w on the gathered plane; a table of that
// plane's size, P_h[g_h] * W + P_w[g_w], maps it to the input plane's h * W + w.
//
// The gradient: max_pool2d's backward puts each output's gradient at its maximum on the gathered
// plane, and index_select's backward adds that into the input, summed where windows overlap;
// both are differentiable, so the backward is too, and every op runs on every device.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "adaptive_bins.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

constexpr const char* kOp = "adaptive_max_pool2d";

// One axis's windows laid side by side (Note [Adaptive max pooling]): `positions` [out * K],
// int64 on `device`; `gather` is false where they are the identity 0, ..., in - 1.
struct AxisWindows {
  int64_t K = 0;
  bool gather = false;
  Tensor positions;
};

AxisWindows axis_windows(int64_t in, int64_t out, Device device) {
  AxisWindows a;
  if (in % out == 0) {
    a.K = in / out;
    a.positions = native::arange(Scalar(int64_t{0}), Scalar(in), Scalar(int64_t{1}), kInt64, device);
    return a;
  }
  // No window is longer than in / out + 2 (nor than in); the buffer for that bound is allocated
  // first, so an output size past memory is a typed error before any loop runs.
  const int64_t bound = std::min(in, in / out + 2);
  int64_t slots = 0;
  WICK_CHECK(!mul_overflow(out, bound, &slots), "{}: {} windows of up to {} positions overflow int64", kOp, out, bound);
  Tensor buf = native::empty({slots}, kInt64, kCPU);
  int64_t K = 0;
  for (int64_t i = 0; i < out; ++i)
    K = std::max(K, detail::adaptive_end(i, in, out) - detail::adaptive_start(i, in, out));
  int64_t* p = buf.data_ptr<int64_t>();
  for (int64_t i = 0; i < out; ++i) {
    const int64_t s = detail::adaptive_start(i, in, out), e = detail::adaptive_end(i, in, out);
    for (int64_t k = 0; k < K; ++k) p[i * K + k] = std::min(s + k, e - 1);  // the last position repeated
  }
  a.K = K;
  a.gather = true;
  a.positions = native::to(native::narrow(buf, 0, 0, out * K), device, kInt64);
  return a;
}

// max_pool2d_with_indices on the gathered plane; an error it still raises (a window past its tap
// limit, memory) keeps its class, with this op's name in front.
std::tuple<Tensor, Tensor> pool_blocks(const Tensor& plane, Int2 block) {
  try {
    return max_pool2d_with_indices(plane, block, block);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("{} (as max_pool2d over its windows): ", kOp));
  }
}

std::string size_text(OptionalInt2 s) {
  const auto one = [](std::optional<int64_t> v) { return v ? fmt::format("{}", *v) : std::string("None"); };
  return fmt::format("({}, {})", one(s.h), one(s.w));
}
}  // namespace

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, OptionalInt2 output_size) {
  WICK_CHECK(input.defined(), "{}: input is undefined", kOp);
  const int64_t d = input.dim();
  WICK_CHECK(d == 3 || d == 4, "{}: expected a 3-d [C, H, W] (unbatched) or 4-d [N, C, H, W] input, got shape {}{}",
             kOp, shape_str(input),
             d == 2 ? std::string("; adaptive_max_pool1d takes [N, C, L] or [C, L]") : std::string());
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", kOp, input.dtype());
  const int64_t H = input.size(-2), W = input.size(-1);
  WICK_CHECK(H > 0 && W > 0, "{}: input {} has an empty spatial dim, so a window would have no position", kOp,
             shape_str(input));
  const int64_t oh = output_size.h.value_or(H), ow = output_size.w.value_or(W);
  WICK_CHECK(oh > 0 && ow > 0, "{}: output_size {} must be positive (or None to keep the input's size); input shape {}",
             kOp, size_text(output_size), shape_str(input));
  DimVector out_shape(input.sizes());
  out_shape[static_cast<size_t>(d - 2)] = oh;
  out_shape[static_cast<size_t>(d - 1)] = ow;
  checked_numel(out_shape, kOp);  // a ValueError for an output past int64, before any window is built

  const AxisWindows rows = axis_windows(H, oh, input.device()), cols = axis_windows(W, ow, input.device());
  Tensor plane = input;
  if (rows.gather) plane = index_select(plane, d - 2, rows.positions);
  if (cols.gather) plane = index_select(plane, d - 1, cols.positions);
  auto [values, where] = pool_blocks(plane, Int2(rows.K, cols.K));
  if (!rows.gather && !cols.gather) return {values, where};
  // where indexes the gathered plane; the table gives each of its positions' place in the input.
  const Tensor table =
      native::binary(BinaryOp::Add, native::binary(BinaryOp::Mul, native::reshape(rows.positions, {-1, 1}), Scalar(W)),
                     native::reshape(cols.positions, {1, -1}));
  const Tensor flat = native::index_select(native::reshape(table, {-1}), 0, native::reshape(where, {-1}));
  return {values, native::reshape(flat, where.sizes())};
}

Tensor adaptive_max_pool2d(const Tensor& input, OptionalInt2 output_size) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, output_size));
}

}  // namespace wick::nn::functional
