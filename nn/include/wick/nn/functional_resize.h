#pragma once
// Resizing functions of wick::nn::functional (alias F): interpolate (nearest, nearest-exact,
// linear, bilinear, trilinear, bicubic, area), pixel_shuffle and pixel_unshuffle, with
// torch.nn.functional's names and PyTorch 1.13's semantics. Included by wick/nn/functional.h;
// the layers are in wick/nn/modules/resize.h.
//
// interpolate is composed of differentiable ops (index_select with an index computed on the
// host; for the linear modes a weighted sum of two index_selects per resized dim, for bicubic of
// four; area is adaptive average pooling), so its gradient, double backward and every device come
// from those ops (nn/src/functional_interpolate.cpp).
#include <cstdint>
#include <optional>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/nn/arg.h"

namespace wick::nn::functional {

/// interpolate's modes, as LibTorch's torch::kNearest, kNearestExact, kLinear, kBilinear,
/// kTrilinear, kBicubic, kArea (one enum rather than LibTorch's variant of tag types). Linear
/// takes a 3-d input [N, C, W], bilinear and bicubic a 4-d one [N, C, H, W], trilinear a 5-d one
/// [N, C, D, H, W]; the nearest modes and area a 3-d, 4-d or 5-d one.
enum class InterpolateMode { Nearest, NearestExact, Linear, Bilinear, Trilinear, Bicubic, Area };
inline constexpr InterpolateMode kNearest = InterpolateMode::Nearest;
inline constexpr InterpolateMode kNearestExact = InterpolateMode::NearestExact;
inline constexpr InterpolateMode kLinear = InterpolateMode::Linear;
inline constexpr InterpolateMode kBilinear = InterpolateMode::Bilinear;
inline constexpr InterpolateMode kTrilinear = InterpolateMode::Trilinear;
inline constexpr InterpolateMode kBicubic = InterpolateMode::Bicubic;
inline constexpr InterpolateMode kArea = InterpolateMode::Area;
/// "nearest", "nearest-exact", "linear", "bilinear", "trilinear", "bicubic", "area": PyTorch's
/// spelling.
const char* interpolate_mode_name(InterpolateMode mode);

/// interpolate's arguments, as LibTorch's InterpolateFuncOptions:
/// `InterpolateFuncOptions().scale_factor(std::vector<double>{2}).mode(kBilinear)`. size and
/// scale_factor hold one value for every spatial dim or one per spatial dim; exactly one is set.
struct InterpolateFuncOptions {
  WICK_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  WICK_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  WICK_ARG(InterpolateMode, mode) = kNearest;
  /// Linear modes and bicubic only (unset means false); set with a nearest mode or area it is a
  /// ValueError.
  WICK_ARG(std::optional<bool>, align_corners) = std::nullopt;
  /// When true, the output size floor(in * scale_factor) is computed first and the source
  /// positions use in / out, as if that size had been given; otherwise they use 1 / scale_factor.
  WICK_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
};

/// torch.nn.functional.interpolate of PyTorch 1.13 on a float input [N, C, W], [N, C, H, W] or
/// [N, C, D, H, W] (which rank each mode takes: InterpolateMode). Output size: `size`, or
/// floor(in * scale_factor) per dim. Source positions, per dim, as PyTorch's CPU kernels: with
/// scale s = 1 / scale_factor when a scale factor is used (and not recomputed), else in / out;
/// nearest reads floor(dst * s), nearest-exact floor((dst + 0.5) s), both clamped to in - 1,
/// computed in the input's type (a 4-d or 5-d input with one channel: in float, reading dst when
/// out == in and dst / 2 when out == 2 in, as PyTorch's channels-last kernel, which it takes for
/// such an input); linear, bilinear and trilinear read x = s (dst + 0.5) - 0.5 clamped at 0
/// (align_corners: x = dst (in - 1) / (out - 1)) and mix floor(x) and the next position with
/// weights 1 - frac and frac, and copy a dim whose size does not change; bicubic reads the same x
/// unclamped, mixes the 4 positions floor(x) - 1 .. floor(x) + 2, each clamped into [0, in - 1],
/// with Keys' cubic convolution weights (A = -0.75) of t = x - floor(x) (floor taken in float, as
/// PyTorch's floorf), so it may overshoot the input's range; area is adaptive_avg_pool1d/2d/3d
/// to the output size (a scale factor is always recomputed into a size). ValueError for both or
/// neither of size and scale_factor, a count of them that is neither 1 nor the spatial rank, a
/// non-positive output size or scale factor (PyTorch's area returns an empty tensor for an output
/// size of 0), align_corners with a nearest mode or area, or recompute_scale_factor with a size;
/// NotImplementedError for a rank the mode does not take; TypeError for a non-float input.
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

/// [*, C r^2, H, W] -> [*, C, H r, W r], as torch.nn.functional.pixel_shuffle (a reshape, a
/// permute and a reshape). ValueError for fewer than 3 dims, upscale_factor below 1, or channels
/// not divisible by upscale_factor^2.
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
/// [*, C, H r, W r] -> [*, C r^2, H, W], pixel_shuffle's inverse. ValueError for fewer than 3
/// dims, downscale_factor below 1, or a height or width not divisible by downscale_factor.
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

}  // namespace wick::nn::functional
