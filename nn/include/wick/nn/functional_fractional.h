#pragma once
// F::fractional_max_pool2d / 3d (torch.nn.functional's) and their options, which serve the layers
// too (wick/nn/modules/fractional_max_pool.h). Note [Fractional max pooling],
// nn/src/functional_fractional.cpp.
#include <optional>
#include <tuple>

#include "wick/core/tensor.h"
#include "wick/nn/arg.h"
#include "wick/nn/functional.h"
#include "wick/nn/int3.h"

namespace wick::nn {

/// An output ratio per spatial dim, each in (0, 1): `0.5` means {0.5, 0.5} (LibTorch's
/// ExpandingArray<2, double>).
struct Ratio2 {
  double h = 0, w = 0;
  Ratio2(double v) : h(v), w(v) {}  // NOLINT
  Ratio2(double h_, double w_) : h(h_), w(w_) {}
};
/// Ratio2 for [D, H, W].
struct Ratio3 {
  double d = 0, h = 0, w = 0;
  Ratio3(double v) : d(v), h(v), w(v) {}  // NOLINT
  Ratio3(double d_, double h_, double w_) : d(d_), h(h_), w(w_) {}
};

/// FractionalMaxPool2d's options, as LibTorch's: a kernel size and exactly one of output_size and
/// output_ratio; _random_samples, if defined, is the [N, C, 2] (unbatched: [1, C, 2]) tensor of
/// samples in [0, 1] that place the windows (entry 0 the width's, entry 1 the height's, as PyTorch);
/// undefined: drawn from wick's generator on each call.
struct FractionalMaxPool2dOptions {
  /* implicit */ FractionalMaxPool2dOptions(Int2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  WICK_ARG(Int2, kernel_size);
  WICK_ARG(std::optional<Int2>, output_size) = std::nullopt;
  WICK_ARG(std::optional<Ratio2>, output_ratio) = std::nullopt;
  WICK_ARG(Tensor, _random_samples);
};

/// FractionalMaxPool2dOptions for [N, C, D, H, W] or [C, D, H, W]; the samples are [N, C, 3]
/// (entries for depth, height, width, as PyTorch).
struct FractionalMaxPool3dOptions {
  /* implicit */ FractionalMaxPool3dOptions(Int3 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  WICK_ARG(Int3, kernel_size);
  WICK_ARG(std::optional<Int3>, output_size) = std::nullopt;
  WICK_ARG(std::optional<Ratio3>, output_ratio) = std::nullopt;
  WICK_ARG(Tensor, _random_samples);
};

namespace functional {

using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;

/// Fractional max pooling of [N, C, H, W] or [C, H, W] (PyTorch 1.13's windows and ties: the first
/// maximum, the last NaN): the output and the int64 indices of each maximum in its H * W plane.
/// The output size is output_size, or floor(input size * output_ratio). The gradient goes to the
/// maxima (repeated ones accumulate). ValueError for another rank, an empty non-batch dim, both or
/// neither of output_size / output_ratio, a ratio outside (0, 1), an output size + kernel - 1 past
/// the input, samples of another shape or outside [0, 1]; TypeError for a non-float input or samples.
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& options);
/// The output of fractional_max_pool2d_with_indices.
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
/// fractional_max_pool2d_with_indices for [N, C, D, H, W] or [C, D, H, W]; indices in D * H * W.
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& options);
/// The output of fractional_max_pool3d_with_indices.
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options);

}  // namespace functional
}  // namespace wick::nn
