#pragma once
// Spatial transformer functions of wick::nn::functional (alias F): affine_grid and grid_sample,
// with torch.nn.functional's names and PyTorch 1.13's semantics. Included by wick/nn/functional.h.
//
// Both are composed of differentiable ops (a matmul for affine_grid; for grid_sample floor,
// where, gather and arithmetic on the sample positions), so their gradients in the input, the
// grid and theta, double backward and every device come from those ops
// (nn/src/functional_grid_sample.cpp, nn/src/functional_affine_grid.cpp).
#include <cstdint>
#include <optional>

#include "wick/autograd/functions.h"
#include "wick/nn/arg.h"
#include "wick/nn/functional.h"
#include "wick/nn/functional_resize.h"

namespace wick::nn::functional {

/// grid_sample's padding modes, as LibTorch's torch::kZeros, kBorder, kReflection: what a sample
/// position outside the input reads. Zeros reads 0 there; border clamps the position into the
/// input; reflection reflects it about the input's border (the edge pixels' centres with
/// align_corners, their outer edges without) and then clamps it.
enum class GridSamplePadding { Zeros, Border, Reflection };
inline constexpr GridSamplePadding kBorder = GridSamplePadding::Border;
inline constexpr GridSamplePadding kReflection = GridSamplePadding::Reflection;
/// nn::kZeros (a PadMode, Conv2d's padding_mode) is also F::kZeros; grid_sample takes it as
/// GridSamplePadding::Zeros.
using wick::nn::kZeros;
/// "zeros", "border", "reflection": PyTorch's spelling.
const char* grid_sample_padding_name(GridSamplePadding mode);

/// grid_sample's arguments, as LibTorch's GridSampleFuncOptions:
/// `GridSampleFuncOptions().mode(kNearest).padding_mode(kBorder).align_corners(true)`.
struct GridSampleFuncOptions {
  /// kBilinear (trilinear on a 5-d input, as PyTorch's "bilinear"), kNearest, or kBicubic (4-d
  /// input only). Other InterpolateModes are ValueErrors at the call.
  WICK_ARG(InterpolateMode, mode) = kBilinear;
  WICK_ARG(GridSamplePadding, padding_mode) = GridSamplePadding::Zeros;
  /// Unset means false (PyTorch 1.13 warns and takes false).
  WICK_ARG(std::optional<bool>, align_corners) = std::nullopt;

 public:
  /// padding_mode(kZeros): the PadMode constant Conv2d shares. Another PadMode (kReflect,
  /// kReplicate, ...) is a ValueError naming grid_sample's three modes.
  GridSampleFuncOptions& padding_mode(PadMode mode);
};

/// torch.nn.functional.grid_sample of PyTorch 1.13: samples input [N, C, H, W] at the positions
/// grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo] (5-d: input [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] ->
/// [N, C, Do, Ho, Wo]). grid[..., 0] is x (along W), grid[..., 1] y (along H), grid[..., 2] z
/// (along D), each normalized: -1 and 1 are the centres of the edge pixels with align_corners,
/// their outer edges without (pixel position ((g + 1) S - 1) / 2; with align_corners
/// (g + 1) (S - 1) / 2). Positions outside the input follow padding_mode; a non-finite position
/// or one beyond the int range reads as far outside (0 with zeros padding), and no position ever
/// reads outside the input's memory. Bilinear (trilinear) mixes the 4 (8) neighbours with weights
/// of the fractional position; nearest reads the nearest pixel (halves to even); bicubic mixes
/// the 4 x 4 neighbours around floor(position) with Keys' weights (A = -0.75), each neighbour's
/// position padded as padding_mode says. Differentiable in input and grid (nearest: a zero grid
/// gradient, as PyTorch's), twice differentiable, on every device. Where a position sits exactly
/// on a border (or on a pixel, for the gradient of border and reflection clamping) the gradient
/// is PyTorch's one-sided choice. ValueError for a rank other than 4 or 5, input and grid of
/// different ranks, batch sizes or devices, a grid whose last dim is not the spatial rank, an
/// empty spatial dim of input, or a mode grid_sample does not take; NotImplementedError for
/// bicubic on 5-d input; TypeError for a non-float input or a grid of another dtype.
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});

/// torch.nn.functional.affine_grid of PyTorch 1.13: the grid [N, H, W, 2] that grid_sample reads
/// to apply the affine maps theta [N, 2, 3] to an output of size {N, C, H, W} (5-d: theta
/// [N, 3, 4], size {N, C, D, H, W}, grid [N, D, H, W, 3]). Each output pixel's normalized
/// position (x, y[, z], 1), with x running over W from -1 to 1 (times (W - 1) / W without
/// align_corners; 0 for W = 1), is multiplied by theta^T. Differentiable in theta (twice).
/// TypeError for a non-float theta; NotImplementedError for a size of neither 4 nor 5 entries;
/// ValueError for theta of another shape than [N, 2, 3] (4-d size) or [N, 3, 4] (5-d size), a
/// batch that differs from size[0], or a size entry below 1.
Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners = false);

}  // namespace wick::nn::functional
