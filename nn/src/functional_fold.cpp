// F::unfold and F::fold: the arguments checked, then one index of block positions read by
// index_select (unfold) or written by index_add (fold) (Note [fold and unfold as index ops] in
// wick/nn/functional_fold.h).
#include <fmt/format.h>

#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

std::string pair_str(Int2 v) { return fmt::format("({}, {})", v.h, v.w); }

// kernel_size, dilation and stride at least 1, padding at least 0.
void check_geometry(const char* op, Int2 k, Int2 d, Int2 p, Int2 s) {
  WICK_CHECK(k.h > 0 && k.w > 0, "{}: kernel_size should be greater than zero, got {}", op, pair_str(k));
  WICK_CHECK(d.h > 0 && d.w > 0, "{}: dilation should be greater than zero, got {}", op, pair_str(d));
  WICK_CHECK(p.h >= 0 && p.w >= 0, "{}: padding should be non-negative, got {}", op, pair_str(p));
  WICK_CHECK(s.h > 0 && s.w > 0, "{}: stride should be greater than zero, got {}", op, pair_str(s));
}

// The blocks along one axis of `size` (padding p on each side), or 0 when the padded axis is
// shorter than the dilated kernel; every step checked against int64.
int64_t blocks(const char* op, int64_t size, int64_t k, int64_t d, int64_t p, int64_t s) {
  int64_t span = 0, twice = 0, padded = 0;
  WICK_CHECK(
      !mul_overflow(d, k - 1, &span) && !mul_overflow(p, int64_t{2}, &twice) && !add_overflow(size, twice, &padded),
      "{}: kernel_size {}, dilation {} and padding {} over a size of {} overflow int64", op, k, d, p, size);
  const int64_t room = padded - span - 1;
  return room < 0 ? 0 : room / s + 1;
}

// The blocks of an [H, W] plane; ValueError naming `what` (the input or the output_size) when the
// padded plane is smaller than the dilated kernel.
Int2 plane_blocks(const char* op, const std::string& what, int64_t H, int64_t W, Int2 k, Int2 d, Int2 p, Int2 s) {
  const Int2 b(blocks(op, H, k.h, d.h, p.h, s.h), blocks(op, W, k.w, d.w, p.w, s.w));
  WICK_CHECK(b.h >= 1 && b.w >= 1,
             "{}: {} of spatial size ({}, {}) padded by {} is smaller than the kernel {} dilated by {}: there is no "
             "block",
             op, what, H, W, pair_str(p), pair_str(k), pair_str(d));
  return b;
}

// Note [fold and unfold as index ops]: the flat position in the padded [Hp, Wp] plane of every
// (kernel position, block) pair, kernel position major.
Tensor block_index(int64_t Wp, Int2 k, Int2 d, Int2 s, Int2 b, Device device) {
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(k.h * k.w * b.h * b.w));
  for (int64_t ki = 0; ki < k.h; ++ki)
    for (int64_t kj = 0; kj < k.w; ++kj)
      for (int64_t oi = 0; oi < b.h; ++oi)
        for (int64_t oj = 0; oj < b.w; ++oj) idx.push_back((oi * s.h + ki * d.h) * Wp + oj * s.w + kj * d.w);
  const int64_t n = static_cast<int64_t>(idx.size());
  return wick::tensor(idx, {n}, TensorOptions(kInt64)).to(device);
}

void check_float(const char* op, const Tensor& input) {
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
}
}  // namespace

Tensor unfold(const Tensor& input, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride) {
  WICK_CHECK(input.defined(), "unfold: input is undefined");
  const int64_t r = input.dim();
  WICK_CHECK(r == 3 || r == 4, "unfold: expected a 3-d [C, H, W] (unbatched) or 4-d [N, C, H, W] input, got shape {}",
             shape_str(input));
  check_float("unfold", input);
  check_geometry("unfold", kernel_size, dilation, padding, stride);
  const Tensor x = r == 3 ? unsqueeze(input, 0) : input;
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  WICK_CHECK(C > 0 && H > 0 && W > 0,
             "unfold: input {} has an empty channel or spatial dim; only the batch dim may be empty", shape_str(input));
  const Int2 b = plane_blocks("unfold", "input " + shape_str(input), H, W, kernel_size, dilation, padding, stride);
  const int64_t Hp = H + 2 * padding.h, Wp = W + 2 * padding.w;
  int64_t K = 0, L = 0, CK = 0;
  WICK_CHECK(!mul_overflow(kernel_size.h, kernel_size.w, &K) && !mul_overflow(b.h, b.w, &L) && !mul_overflow(C, K, &CK),
             "unfold: kernel_size {} over input {} gives sizes past int64", pair_str(kernel_size), shape_str(input));
  checked_numel({N, C, Hp, Wp}, "unfold (the padded input)");
  checked_numel({N, CK, L}, "unfold (the columns)");
  // An empty batch: no block index (K * L entries, which may be far too many to build); the
  // empty columns still follow the input in the graph.
  if (N == 0) return reshape(x, {N, CK, L});  // only a batched input has N = 0

  const Tensor padded = padding.h || padding.w ? pad(x, {padding.w, padding.w, padding.h, padding.h}) : x;
  const Tensor idx = block_index(Wp, kernel_size, dilation, stride, b, x.device());
  const Tensor cols = index_select(reshape(padded, {N, C, Hp * Wp}), 2, idx);  // [N, C, K * L]
  const Tensor out = reshape(cols, {N, CK, L});
  return r == 3 ? squeeze(out, 0) : out;
}

Tensor fold(const Tensor& input, Int2 output_size, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride) {
  WICK_CHECK(input.defined(), "fold: input is undefined");
  const int64_t r = input.dim();
  WICK_CHECK(r == 2 || r == 3,
             "fold: expected a 2-d [C * kH * kW, L] (unbatched) or 3-d [N, C * kH * kW, L] input, got shape {}",
             shape_str(input));
  check_float("fold", input);
  check_geometry("fold", kernel_size, dilation, padding, stride);
  const int64_t H = output_size.h, W = output_size.w;
  WICK_CHECK(H > 0 && W > 0, "fold: output_size should be greater than zero, got {}", pair_str(output_size));
  const Tensor x = r == 2 ? unsqueeze(input, 0) : input;
  const int64_t N = x.size(0), CK = x.size(1), L = x.size(2);
  int64_t K = 0;
  WICK_CHECK(!mul_overflow(kernel_size.h, kernel_size.w, &K), "fold: kernel_size {} overflows int64",
             pair_str(kernel_size));
  WICK_CHECK(CK > 0 && CK % K == 0,
             "fold: dim {} of input {} ({}) must be a positive multiple of the kernel's {} * {} = {} positions (it "
             "is channels * kH * kW)",
             r - 2, shape_str(input), CK, kernel_size.h, kernel_size.w, K);
  const Int2 b = plane_blocks("fold", "output_size", H, W, kernel_size, dilation, padding, stride);
  int64_t blocks_hw = 0;
  const bool hw_overflows = mul_overflow(b.h, b.w, &blocks_hw);
  WICK_CHECK(!hw_overflows && blocks_hw == L,
             "fold: output_size {} with kernel_size {}, dilation {}, padding {} and stride {} holds {} * {} = {} "
             "blocks, but input {} has {} in its last dim",
             pair_str(output_size), pair_str(kernel_size), pair_str(dilation), pair_str(padding), pair_str(stride), b.h,
             b.w, hw_overflows ? std::string("more than int64 holds") : fmt::format("{}", blocks_hw), shape_str(input),
             L);
  const int64_t C = CK / K, Hp = H + 2 * padding.h, Wp = W + 2 * padding.w;
  checked_numel({N, C, Hp, Wp}, "fold (the padded output)");
  checked_numel({N, C, H, W}, "fold (the output)");
  if (N == 0) return reshape(x, {N, C, H, W});  // an empty batch, as unfold's; only a batched input has N = 0

  const Tensor idx = block_index(Wp, kernel_size, dilation, stride, b, x.device());
  const Tensor plane = index_add(zeros({N, C, Hp * Wp}, x.options()), 2, idx, reshape(x, {N, C, K * L}));
  Tensor out = view(plane, {N, C, Hp, Wp});
  if (padding.h || padding.w) out = contiguous(narrow(narrow(out, 2, padding.h, H), 3, padding.w, W));
  return r == 2 ? squeeze(out, 0) : out;
}

}  // namespace wick::nn::functional
