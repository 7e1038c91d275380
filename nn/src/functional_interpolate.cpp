// F::interpolate (nearest, nearest-exact, linear, bilinear) and F::pixel_shuffle /
// F::pixel_unshuffle, with PyTorch 1.13's rules (torch/nn/functional.py's interpolate, ATen's
// UpSample.h source-index helpers and its CPU kernels).
//
// Each resized dim is index_select with an index computed on the host (nearest), or the sum of
// two index_selects weighted per output position (linear); the gradient is then those ops'
// (an input position read twice gets both contributions), twice differentiable, the same on
// every device, with no kernel of its own.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

const char* interpolate_mode_name(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Nearest:
      return "nearest";
    case InterpolateMode::NearestExact:
      return "nearest-exact";
    case InterpolateMode::Linear:
      return "linear";
    case InterpolateMode::Bilinear:
      return "bilinear";
  }
  return "?";
}

namespace {
// One resized dim: its input and output sizes and the scale factor the kernel is given (unset
// when a size was given or the factor recomputed).
struct Axis {
  int64_t dim = 0, in = 0, out = 0;
  std::optional<double> scale;
};

template <typename T>
std::string list_str(const std::vector<T>& v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

// PyTorch's nearest index. Its CPU kernels differ: the generic one (3-d inputs, and 4-d inputs
// with several channels) computes the position in the input's type (double for float64, float
// for float32); the channels-last one, which PyTorch takes for a 4-d input with one channel
// (contiguous in both formats), computes it in float (nearest_idx) and reads dst when
// out == in and dst / 2 when out == 2 in (nearest only). Both clamp to in - 1.
Tensor nearest_index(const Axis& a, bool exact, bool channels_last, bool f64) {
  Tensor index = native::empty({a.out}, kInt64, kCPU);
  int64_t* ix = index.data_ptr<int64_t>();
  const bool shortcut = channels_last && !exact && (a.out == a.in || a.out == 2 * a.in);
  const double sd = a.scale && *a.scale > 0 ? 1.0 / *a.scale : static_cast<double>(a.in) / a.out;
  const float sf = a.scale && *a.scale > 0 ? static_cast<float>(1.0 / *a.scale)
                                           : static_cast<float>(a.in) / static_cast<float>(a.out);
  for (int64_t j = 0; j < a.out; ++j) {
    float pos;
    if (exact)
      pos = static_cast<float>((static_cast<double>(j) + 0.5) * (channels_last || !f64 ? static_cast<double>(sf) : sd));
    else
      pos = channels_last || !f64 ? static_cast<float>(j) * sf : static_cast<float>(static_cast<double>(j) * sd);
    int64_t src = static_cast<int64_t>(std::floor(pos));
    if (shortcut) src = a.out == a.in ? j : j >> 1;
    ix[j] = std::min(src, a.in - 1);
  }
  return index;
}

// PyTorch's linear source positions (area_pixel_compute_scale / _source_index, in the input's
// type T): the two positions each output reads and the weight of the second.
template <typename T>
void linear_positions(const Axis& a, bool align_corners, Tensor& i0, Tensor& i1, Tensor& w0, Tensor& w1) {
  i0 = native::empty({a.out}, kInt64, kCPU);
  i1 = native::empty({a.out}, kInt64, kCPU);
  const DType dt = std::is_same_v<T, double> ? kFloat64 : kFloat32;
  w0 = native::empty({a.out}, dt, kCPU);
  w1 = native::empty({a.out}, dt, kCPU);
  T scale;
  if (align_corners)
    scale = a.out > 1 ? static_cast<T>(a.in - 1) / static_cast<T>(a.out - 1) : T(0);
  else
    scale = a.scale && *a.scale > 0 ? static_cast<T>(1.0 / *a.scale) : static_cast<T>(a.in) / static_cast<T>(a.out);
  for (int64_t j = 0; j < a.out; ++j) {
    // (dst + 0.5) is a double in PyTorch's expression, so the product is a double before the cast.
    T x = align_corners ? scale * static_cast<T>(j) : static_cast<T>(static_cast<double>(scale) * (j + 0.5) - 0.5);
    if (x < 0) x = 0;
    const int64_t p = static_cast<int64_t>(x);
    const T lambda = std::min(std::max(x - static_cast<T>(p), T(0)), T(1));
    i0.data_ptr<int64_t>()[j] = p;
    i1.data_ptr<int64_t>()[j] = p + (p < a.in - 1 ? 1 : 0);
    w0.data_ptr<T>()[j] = T(1) - lambda;
    w1.data_ptr<T>()[j] = lambda;
  }
}

Tensor resize_linear(const Tensor& x, const Axis& a, bool align_corners) {
  Tensor i0, i1, w0, w1;
  dispatch_floating(x.dtype(), "interpolate",
                    [&]<typename T>() { linear_positions<T>(a, align_corners, i0, i1, w0, w1); });
  const Device dev = x.device();
  std::vector<int64_t> wshape(static_cast<size_t>(x.dim() - a.dim), 1);
  wshape[0] = a.out;  // broadcasts over the dims after a.dim
  const Tensor lo = index_select(x, a.dim, native::to(i0, dev, kInt64));
  const Tensor hi = index_select(x, a.dim, native::to(i1, dev, kInt64));
  return add(mul(lo, reshape(native::to(w0, dev, x.dtype()), wshape)),
             mul(hi, reshape(native::to(w1, dev, x.dtype()), wshape)));
}
}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options) {
  WICK_CHECK(input.defined(), "interpolate: input is undefined");
  const InterpolateMode mode = options.mode();
  const char* name = interpolate_mode_name(mode);
  const std::string shape = detail::shape_str(input);
  const bool nearest = mode == kNearest || mode == kNearestExact;
  WICK_CHECK(!(nearest && options.align_corners()),
             "interpolate: align_corners can only be set with the interpolating modes (linear, bilinear); mode {} "
             "takes none (leave it unset)",
             name);
  const int64_t rank = input.dim();
  WICK_CHECK_NOT_IMPLEMENTED(
      (nearest && (rank == 3 || rank == 4)) || (mode == kLinear && rank == 3) || (mode == kBilinear && rank == 4),
      "interpolate: mode {} takes a {} input, got the {}-d input {}", name,
      nearest ? "3-d [N, C, W] or 4-d [N, C, H, W]" : (mode == kLinear ? "3-d [N, C, W]" : "4-d [N, C, H, W]"), rank,
      shape);
  const auto& size = options.size();
  const auto& factor = options.scale_factor();
  WICK_CHECK(!(size && factor), "interpolate: only one of size and scale_factor should be set (input {})", shape);
  WICK_CHECK(size || factor, "interpolate: set either size or scale_factor (input {})", shape);
  const size_t spatial = static_cast<size_t>(rank - 2);
  const size_t given = size ? size->size() : factor->size();
  WICK_CHECK(given == 1 || given == spatial,
             "interpolate: input {} has {} spatial dims, but {} has {} values; give one, or one per spatial dim", shape,
             spatial, size ? "size" : "scale_factor", given);
  WICK_CHECK(!(size && options.recompute_scale_factor().value_or(false)),
             "interpolate: recompute_scale_factor is not meaningful with an explicit size (input {})", shape);
  const bool recompute = options.recompute_scale_factor().value_or(false);
  std::vector<Axis> axes(spatial);
  for (size_t i = 0; i < spatial; ++i) {
    Axis& a = axes[i];
    a.dim = static_cast<int64_t>(i) + 2;
    a.in = input.size(a.dim);
    if (size) {
      a.out = (*size)[given == 1 ? 0 : i];
    } else {
      const double s = (*factor)[given == 1 ? 0 : i];
      WICK_CHECK(s > 0 && std::isfinite(s), "interpolate: scale_factor must be positive and finite, got {} (input {})",
                 s, shape);
      const double o = std::floor(static_cast<double>(a.in) * s);
      WICK_CHECK(o < 9.2e18, "interpolate: scale_factor {} makes dim {} of input {} too large", s, a.dim, shape);
      a.out = static_cast<int64_t>(o);
      if (!recompute) a.scale = s;
    }
    WICK_CHECK(a.in > 0 && a.out > 0,
               "interpolate: input and output sizes should be greater than 0, but got input {} and output size {} "
               "for dim {} (mode {}); raise size or scale_factor",
               shape, a.out, a.dim, name);
  }
  dispatch_floating(input.dtype(), "interpolate", []<typename T>() {});
  Tensor out = input;
  for (const Axis& a : axes) {
    if (nearest)
      out = index_select(out, a.dim,
                         native::to(nearest_index(a, mode == kNearestExact, rank == 4 && input.size(1) == 1,
                                                  input.dtype() == kFloat64),
                                    input.device(), kInt64));
    else if (a.out != a.in)  // PyTorch copies a dim whose size does not change
      out = resize_linear(out, a, options.align_corners().value_or(false));
  }
  return out.is_same(input) ? clone(input) : out;
}

Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor) {
  WICK_CHECK(input.defined(), "pixel_shuffle: input is undefined");
  const std::string shape = detail::shape_str(input);
  WICK_CHECK(input.dim() >= 3, "pixel_shuffle: expects an input [*, C, H, W] of at least 3 dims, got {}", shape);
  WICK_CHECK(upscale_factor > 0, "pixel_shuffle: upscale_factor must be greater than 0, got {}", upscale_factor);
  const int64_t r = upscale_factor, d = input.dim(), c = input.size(d - 3), h = input.size(d - 2),
                w = input.size(d - 1);
  WICK_CHECK(c % (r * r) == 0,
             "pixel_shuffle: the channels {} of input {} are not divisible by upscale_factor^2 = {}; use C = "
             "out_channels * {}",
             c, shape, r * r, r * r);
  std::vector<int64_t> lead(input.sizes().begin(), input.sizes().end() - 3);
  const int64_t n = static_cast<int64_t>(lead.size());
  std::vector<int64_t> s1 = lead, perm, s2 = lead;
  for (int64_t v : {c / (r * r), r, r, h, w}) s1.push_back(v);
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  for (int64_t i : {0, 3, 1, 4, 2}) perm.push_back(n + i);  // [C, r, r, H, W] -> [C, H, r, W, r]
  for (int64_t v : {c / (r * r), h * r, w * r}) s2.push_back(v);
  return reshape(permute(reshape(input, s1), perm), s2);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor) {
  WICK_CHECK(input.defined(), "pixel_unshuffle: input is undefined");
  const std::string shape = detail::shape_str(input);
  WICK_CHECK(input.dim() >= 3, "pixel_unshuffle: expects an input [*, C, H, W] of at least 3 dims, got {}", shape);
  WICK_CHECK(downscale_factor > 0, "pixel_unshuffle: downscale_factor must be greater than 0, got {}",
             downscale_factor);
  const int64_t r = downscale_factor, d = input.dim(), c = input.size(d - 3), h = input.size(d - 2),
                w = input.size(d - 1);
  WICK_CHECK(h % r == 0 && w % r == 0,
             "pixel_unshuffle: the height {} and width {} of input {} must be divisible by downscale_factor {}", h, w,
             shape, r);
  std::vector<int64_t> lead(input.sizes().begin(), input.sizes().end() - 3);
  const int64_t n = static_cast<int64_t>(lead.size());
  std::vector<int64_t> s1 = lead, perm, s2 = lead;
  for (int64_t v : {c, h / r, r, w / r, r}) s1.push_back(v);
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  for (int64_t i : {0, 2, 4, 1, 3}) perm.push_back(n + i);  // [C, H, r, W, r] -> [C, r, r, H, W]
  for (int64_t v : {c * r * r, h / r, w / r}) s2.push_back(v);
  return reshape(permute(reshape(input, s1), perm), s2);
}

}  // namespace wick::nn::functional
