// F::grid_sample (bilinear / trilinear, nearest, bicubic; zeros, border and reflection padding),
// with PyTorch 1.13's rules (ATen's GridSampler.h and its CPU kernels).
//
// Note [grid_sample as gathers]
// Each spatial axis turns its grid coordinate into a pixel position (unnormalize, then the
// padding mode's clamp or reflection, written on differentiable ops with PyTorch's one-sided
// gradients at the borders) and then into taps: an int64 index, a validity mask and a weight
// (bilinear: floor and floor + 1 weighted 1 - t and t, t = pos - floor(pos); bicubic: the four
// positions around floor(pos), each padded on its own, with Keys' weights of t; nearest: the
// rounded position). Every combination of one tap per axis is one gather from the input
// flattened to [N, C, prod(spatial)], at the clamped flat index, times the product of the taps'
// weights with invalid taps' weights zeroed. Indices are always clamped into the input, so no
// position reads outside it; a non-finite or huge position becomes -100 first, as PyTorch's
// safe_downgrade_to_int_range. The gradient in input is gather's (a scatter-add), the gradient
// in grid flows through the weights (zero for nearest, whose output is tied to round(pos) only
// to give the grid PyTorch's zero gradient); double backward and every device come with them.
#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

const char* grid_sample_padding_name(GridSamplePadding mode) {
  switch (mode) {
    case GridSamplePadding::Zeros:
      return "zeros";
    case GridSamplePadding::Border:
      return "border";
    case GridSamplePadding::Reflection:
      return "reflection";
  }
  return "?";
}

GridSampleFuncOptions& GridSampleFuncOptions::padding_mode(PadMode mode) {
  WICK_CHECK(mode == PadMode::Zeros,
             "grid_sample: padding_mode {} is not one of grid_sample's modes zeros, border, reflection (use kZeros, "
             "F::kBorder or F::kReflection)",
             pad_mode_name(mode));
  padding_mode_ = GridSamplePadding::Zeros;
  return *this;
}

namespace {
// A 0-dim tensor of x's dtype and device holding v, for comparisons.
Tensor like(const Tensor& x, double v) { return scalar_tensor(v, x.options()); }
Tensor like_int(const Tensor& i, int64_t v) { return scalar_tensor(v, i.options()); }

// grid_sampler_unnormalize: -1 and 1 are the edge pixels' centres (align_corners) or outer edges.
Tensor unnormalize(const Tensor& g, int64_t size, bool align_corners) {
  const auto s = static_cast<double>(size);
  return align_corners ? (g + 1.0) * ((s - 1) / 2) : (g + 1.0) * (s / 2) - 0.5;
}

// clip_coordinates: x clamped into [0, size - 1], with gradient 1 strictly inside and 0 on and
// beyond the borders (PyTorch counts the borders as outside for the gradient).
Tensor clip(const Tensor& x, int64_t size) {
  const auto hi = static_cast<double>(size - 1);
  const Tensor inside = logical_and(gt(x, like(x, 0)), lt(x, like(x, hi)));
  return where(inside, x, clamp(x.detach(), 0.0, hi));
}

// reflect_coordinates: x reflected about twice_low / 2 and twice_high / 2 until it lies between
// them (gradient +-1: -1 left of the low bound at the first fold, and for every odd fold).
Tensor reflect(const Tensor& x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return zeros_like(x);
  const double lo = static_cast<double>(twice_low) / 2, span = static_cast<double>(twice_high - twice_low) / 2;
  const Tensor d = x - lo;
  const Tensor in = where(lt(d, like(d, 0)), -d, d);
  const Tensor flips = floor(in.detach() / span);
  const Tensor extra = in - flips * span;
  const Tensor odd = ne(remainder(flips, 2.0), like(flips, 0));
  return where(odd, (span - extra) + lo, extra + lo);
}

// compute_coordinates: the padding mode applied to a pixel position.
Tensor pad_position(const Tensor& x, int64_t size, GridSamplePadding padding, bool align_corners) {
  if (padding == GridSamplePadding::Border) return clip(x, size);
  if (padding == GridSamplePadding::Reflection)
    return clip(align_corners ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1), size);
  return x;
}

// safe_downgrade_to_int_range: a non-finite position, or one outside the int range, becomes -100
// (outside the input), so that its index is well defined.
Tensor safe(const Tensor& x) {
  const Tensor ok = logical_and(isfinite(x), logical_and(le(x, like(x, static_cast<double>(INT_MAX) - 1)),
                                                         ge(x, like(x, static_cast<double>(INT_MIN)))));
  return where(ok, x, -100.0);
}

// One tap of one axis: where it reads (int64, not clamped), and its weight (undefined: 1).
struct Tap {
  Tensor index, weight;
};

// Keys' cubic convolution weights (A = -0.75) of the four taps floor(x) - 1 .. floor(x) + 2,
// t = x - floor(x) (get_cubic_upsample_coefficients).
std::vector<Tensor> cubic_weights(const Tensor& t) {
  const double A = -0.75;
  auto near = [A](const Tensor& x) { return ((x * (A + 2) - (A + 3)) * x) * x + 1.0; };
  auto far = [A](const Tensor& x) { return ((x * A - 5 * A) * x + 8 * A) * x - 4 * A; };
  return {far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)};
}

// The taps of one axis of size `size` at grid coordinate g ([N, P]).
std::vector<Tap> axis_taps(const Tensor& g, int64_t size, InterpolateMode mode, GridSamplePadding padding,
                           bool align_corners) {
  if (mode == kBicubic) {
    // The position itself is not padded; each tap's integer position is (not differentiable).
    const Tensor x = unnormalize(g, size, align_corners);
    const Tensor x0 = floor(x.detach());
    const std::vector<Tensor> w = cubic_weights(x - x0);
    std::vector<Tap> taps;
    for (int64_t k = 0; k < 4; ++k) {
      const Tensor p = safe(pad_position(x0 + static_cast<double>(k - 1), size, padding, align_corners));
      taps.push_back({round(p).to(kInt64), w[static_cast<size_t>(k)]});
    }
    return taps;
  }
  const Tensor x = safe(pad_position(unnormalize(g, size, align_corners), size, padding, align_corners));
  if (mode == kNearest) {
    const Tensor r = round(x);  // halves to even, as PyTorch's nearbyint
    // r - r.detach() is 0 with round's zero gradient: the grid's gradient, as PyTorch's, is 0.
    const bool tie = GradMode::is_enabled() && r.requires_grad();
    return {{r.detach().to(kInt64), tie ? (r - r.detach()) + 1.0 : Tensor()}};
  }
  const Tensor x0 = floor(x.detach());
  const Tensor t = x - x0;
  const Tensor i0 = x0.to(kInt64);
  return {{i0, 1.0 - t}, {i0 + 1, t}};
}

std::string shapes(const Tensor& input, const Tensor& grid) {
  return fmt::format("input {}, grid {}", detail::shape_str(input), detail::shape_str(grid));
}

void check(const Tensor& input, const Tensor& grid, InterpolateMode mode) {
  WICK_CHECK(input.defined() && grid.defined(), "grid_sample: input or grid is undefined ({})", shapes(input, grid));
  const int64_t rank = input.dim();
  WICK_CHECK(rank == 4 || rank == 5,
             "grid_sample: input must be 4-d [N, C, H, W] or 5-d [N, C, D, H, W], got {}; grid must have the same "
             "rank ({})",
             rank, shapes(input, grid));
  WICK_CHECK(grid.dim() == rank, "grid_sample: input and grid must have the same rank ({})", shapes(input, grid));
  WICK_CHECK_TYPE(input.is_floating_point(), "grid_sample: input must be float32 or float64, got {} ({})",
                  input.dtype(), shapes(input, grid));
  WICK_CHECK_TYPE(grid.dtype() == input.dtype(),
                  "grid_sample: input ({}) and grid ({}) must have the same dtype; convert grid with .to({}) ({})",
                  input.dtype(), grid.dtype(), input.dtype(), shapes(input, grid));
  WICK_CHECK(input.device() == grid.device(), "grid_sample: input is on {} and grid on {}; move them to one device",
             input.device().str(), grid.device().str());
  WICK_CHECK(input.size(0) == grid.size(0), "grid_sample: input and grid must have the same batch size ({})",
             shapes(input, grid));
  WICK_CHECK(grid.size(-1) == rank - 2,
             "grid_sample: the grid's last dim must be {} (one coordinate per spatial dim of the {}-d input), got {} "
             "({})",
             rank - 2, rank, grid.size(-1), shapes(input, grid));
  for (int64_t d = 2; d < rank; ++d)
    WICK_CHECK(input.size(d) > 0, "grid_sample: input has an empty spatial dim {} ({})", d, shapes(input, grid));
  WICK_CHECK(mode == kBilinear || mode == kNearest || mode == kBicubic,
             "grid_sample: mode must be bilinear, nearest or bicubic, got {} ({})", interpolate_mode_name(mode),
             shapes(input, grid));
  WICK_CHECK_NOT_IMPLEMENTED(!(mode == kBicubic && rank == 5),
                             "grid_sample: bicubic takes a 4-d input only, got a 5-d one ({}); use bilinear "
                             "(trilinear on 5-d input) or nearest",
                             shapes(input, grid));
}
}  // namespace

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  const InterpolateMode mode = options.mode();
  check(input, grid, mode);
  const bool align_corners = options.align_corners().value_or(false);
  const int64_t n = input.size(0), c = input.size(1), spatial = input.dim() - 2;
  std::vector<int64_t> out_shape = {n, c};
  int64_t points = 1, length = 1;
  for (int64_t d = 1; d <= spatial; ++d) {
    out_shape.push_back(grid.size(d));
    points *= grid.size(d);
    length *= input.size(d + 1);
  }
  // Per axis (input dims 2 .. rank - 1): its taps and its stride in the flattened input.
  std::vector<std::vector<Tap>> taps;
  std::vector<int64_t> strides(static_cast<size_t>(spatial));
  int64_t stride = 1;
  for (int64_t k = spatial - 1; k >= 0; --k) {
    strides[static_cast<size_t>(k)] = stride;
    stride *= input.size(k + 2);
  }
  for (int64_t k = 0; k < spatial; ++k) {
    const Tensor g = reshape(select(grid, -1, spatial - 1 - k), {n, points});
    taps.push_back(axis_taps(g, input.size(k + 2), mode, options.padding_mode(), align_corners));
  }
  const Tensor flat = reshape(input, {n, c, length});
  // Every combination of one tap per axis, the last axis (x) fastest, as PyTorch sums them.
  std::vector<size_t> pick(static_cast<size_t>(spatial), 0);
  Tensor out;
  while (true) {
    Tensor index, valid, weight;
    for (int64_t k = spatial - 1; k >= 0; --k) {
      const auto ku = static_cast<size_t>(k);
      const Tap& t = taps[ku][pick[ku]];
      const int64_t size = input.size(k + 2);
      const Tensor ok = logical_and(ge(t.index, like_int(t.index, 0)), lt(t.index, like_int(t.index, size)));
      const Tensor at = clamp(t.index, int64_t{0}, size - 1) * strides[ku];
      index = index.defined() ? index + at : at;
      valid = valid.defined() ? logical_and(valid, ok) : ok;
      if (t.weight.defined()) weight = weight.defined() ? weight * t.weight : t.weight;
    }
    const Tensor w = weight.defined() ? where(valid, weight, 0.0) : valid.to(input.dtype());
    const Tensor value = gather(flat, 2, expand(unsqueeze(index, 1), {n, c, points}));
    const Tensor term = value * unsqueeze(w, 1);
    out = out.defined() ? out + term : term;
    int64_t k = spatial - 1;  // the next combination
    for (; k >= 0; --k) {
      const auto ku = static_cast<size_t>(k);
      if (++pick[ku] < taps[ku].size()) break;
      pick[ku] = 0;
    }
    if (k < 0) break;
  }
  return reshape(out, out_shape);
}

}  // namespace wick::nn::functional
