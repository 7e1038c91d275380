// F::interpolate (nearest, nearest-exact, linear, bilinear, trilinear, bicubic, area) and
// F::pixel_shuffle / F::pixel_unshuffle, with PyTorch 1.13's rules (torch/nn/functional.py's
// interpolate, ATen's UpSample.h source-index helpers and its CPU kernels).
//
// Each resized dim is index_select with an index computed on the host (nearest), or the sum of
// two (linear) or four (bicubic) index_selects weighted per output position; area is adaptive
// average pooling, as PyTorch computes it. The gradient is then those ops' (an input position
// read twice gets both contributions), twice differentiable, the same on every device, with no
// kernel of its own.
#include <fmt/format.h>

#include <algorithm>
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
    case InterpolateMode::Trilinear:
      return "trilinear";
    case InterpolateMode::Bicubic:
      return "bicubic";
    case InterpolateMode::Area:
      return "area";
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

// An input rank as interpolate's messages name it: "4-d [N, C, H, W]".
std::string rank_text(int64_t rank) {
  static const char* const dims[] = {"[N, C, W]", "[N, C, H, W]", "[N, C, D, H, W]"};
  return fmt::format("{}-d {}", rank, dims[rank - 3]);
}

// PyTorch's nearest index. Its CPU kernels differ: the generic one (3-d inputs, and 4-d and 5-d
// inputs with several channels) computes the position in the input's type (double for float64,
// float for float32); the channels-last one, which PyTorch takes for a 4-d or 5-d input with one
// channel (contiguous in both formats), computes it in float (nearest_idx) and reads dst when
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

// PyTorch's source scale and position (area_pixel_compute_scale / _source_index, in the input's
// type T). (dst + 0.5) is a double in PyTorch's expression, so the product is a double before
// the cast. The linear modes clamp a negative position at 0, bicubic does not.
template <typename T>
T source_scale(const Axis& a, bool align_corners) {
  if (align_corners) return a.out > 1 ? static_cast<T>(a.in - 1) / static_cast<T>(a.out - 1) : T(0);
  return a.scale && *a.scale > 0 ? static_cast<T>(1.0 / *a.scale) : static_cast<T>(a.in) / static_cast<T>(a.out);
}
template <typename T>
T source_position(T scale, int64_t j, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<T>(j);
  const T x = static_cast<T>(static_cast<double>(scale) * (static_cast<double>(j) + 0.5) - 0.5);
  return !cubic && x < 0 ? T(0) : x;
}

// The taps of one resized dim: for each k, the input position output j reads (index[k][j]) and
// its weight (weight[k][j], in the input's dtype), both on the host.
struct Taps {
  std::vector<Tensor> index, weight;
  Taps(int64_t n, int64_t out, DType dt) {
    for (int64_t k = 0; k < n; ++k) {
      index.push_back(native::empty({out}, kInt64, kCPU));
      weight.push_back(native::empty({out}, dt, kCPU));
    }
  }
  template <typename T>
  void set(size_t k, int64_t j, int64_t src, T w) {
    index[k].data_ptr<int64_t>()[j] = src;
    weight[k].data_ptr<T>()[j] = w;
  }
};

// Linear: floor(x) and the next position (itself at the end) with weights 1 - frac and frac,
// as compute_source_index_and_lambda (which the caller skips when out == in: a copy).
template <typename T>
void linear_taps(const Axis& a, bool align_corners, Taps& taps) {
  const T scale = source_scale<T>(a, align_corners);
  for (int64_t j = 0; j < a.out; ++j) {
    const T x = source_position<T>(scale, j, align_corners, false);
    const int64_t p = static_cast<int64_t>(x);
    const T lambda = std::min(std::max(x - static_cast<T>(p), T(0)), T(1));
    taps.set<T>(0, j, p, T(1) - lambda);
    taps.set<T>(1, j, p + (p < a.in - 1 ? 1 : 0), lambda);
  }
}

// Bicubic: positions floor(x) - 1 .. floor(x) + 2 clamped into [0, in - 1], weighted by Keys'
// cubic convolution with A = -0.75 (get_cubic_upsample_coefficients); PyTorch floors with floorf,
// i.e. in float even for a double x.
template <typename T>
void cubic_taps(const Axis& a, bool align_corners, Taps& taps) {
  const T A = T(-0.75);
  auto near = [A](T x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };       // |x| <= 1
  auto far = [A](T x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  const T scale = source_scale<T>(a, align_corners);
  for (int64_t j = 0; j < a.out; ++j) {
    const T x = source_position<T>(scale, j, align_corners, true);
    const int64_t p = static_cast<int64_t>(std::floor(static_cast<float>(x)));
    const T t = x - static_cast<T>(p);
    const T w[4] = {far(t + T(1)), near(t), near(T(1) - t), far(T(2) - t)};
    for (int64_t k = 0; k < 4; ++k)
      taps.set<T>(static_cast<size_t>(k), j, std::clamp(p + k - 1, int64_t{0}, a.in - 1), w[k]);
  }
}

// Resizes dim a.dim of x: sum over taps k of index_select(x, a.dim, index[k]) * weight[k], the
// weights broadcast over the dims after a.dim; summed in tap order, as PyTorch's kernel.
Tensor resize_taps(const Tensor& x, const Axis& a, bool align_corners, bool cubic) {
  Taps taps(cubic ? 4 : 2, a.out, x.dtype());
  dispatch_floating(x.dtype(), "interpolate", [&]<typename T>() {
    cubic ? cubic_taps<T>(a, align_corners, taps) : linear_taps<T>(a, align_corners, taps);
  });
  const Device dev = x.device();
  std::vector<int64_t> wshape(static_cast<size_t>(x.dim() - a.dim), 1);
  wshape[0] = a.out;
  Tensor out;
  for (size_t k = 0; k < taps.index.size(); ++k) {
    const Tensor term = mul(index_select(x, a.dim, native::to(taps.index[k], dev, kInt64)),
                            reshape(native::to(taps.weight[k], dev, x.dtype()), wshape));
    out = k == 0 ? term : add(out, term);
  }
  return out;
}

// Area: adaptive average pooling to the output sizes, as PyTorch's interpolate.
Tensor resize_area(const Tensor& x, const std::vector<Axis>& axes) {
  if (axes.size() == 1) return adaptive_avg_pool1d(x, axes[0].out);
  if (axes.size() == 2) return adaptive_avg_pool2d(x, Int2(axes[0].out, axes[1].out));
  return adaptive_avg_pool3d(x, Int3(axes[0].out, axes[1].out, axes[2].out));
}
}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options) {
  WICK_CHECK(input.defined(), "interpolate: input is undefined");
  const InterpolateMode mode = options.mode();
  const char* name = interpolate_mode_name(mode);
  const std::string shape = detail::shape_str(input);
  const bool nearest = mode == kNearest || mode == kNearestExact;
  WICK_CHECK(!((nearest || mode == kArea) && options.align_corners()),
             "interpolate: align_corners can only be set with the interpolating modes (linear, bilinear, bicubic, "
             "trilinear); mode {} takes none (leave it unset)",
             name);
  const int64_t rank = input.dim();
  // The ranks the mode takes: one for the linear family and bicubic, 3 to 5 for nearest and area.
  const int64_t lo = mode == kBilinear || mode == kBicubic ? 4 : mode == kTrilinear ? 5 : 3;
  const int64_t hi = mode == kLinear ? 3 : nearest || mode == kArea ? 5 : lo;
  std::string takes;
  for (int64_t r = lo; r <= hi; ++r) takes += (r == lo ? "" : r == hi ? " or " : ", ") + rank_text(r);
  WICK_CHECK_NOT_IMPLEMENTED(rank >= lo && rank <= hi, "interpolate: mode {} takes a {} input, got the {}-d input {}",
                             name, takes, rank, shape);
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
  // area always works from an output size (PyTorch recomputes a scale factor into one)
  const bool recompute = options.recompute_scale_factor().value_or(false) || mode == kArea;
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
  if (mode == kArea) return resize_area(input, axes);
  const bool align_corners = options.align_corners().value_or(false);
  Tensor out = input;
  for (const Axis& a : axes) {
    if (nearest)
      out = index_select(out, a.dim,
                         native::to(nearest_index(a, mode == kNearestExact, rank >= 4 && input.size(1) == 1,
                                                  input.dtype() == kFloat64),
                                    input.device(), kInt64));
    else if (mode == kBicubic)
      out = resize_taps(out, a, align_corners, true);
    else if (a.out != a.in)  // the linear modes copy a dim whose size does not change, as PyTorch
      out = resize_taps(out, a, align_corners, false);
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
