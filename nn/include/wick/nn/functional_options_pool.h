#pragma once
// LibTorch's functional options for pooling, padding, pixel shuffle and fold / unfold, and the
// F:: overloads that take them: `F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2))`,
// `F::pad(x, F::PadFuncOptions({1, 2}).mode(kReflect))`, as torch/nn/functional/pooling.h,
// padding.h, pixelshuffle.h and fold.h. Included by wick/nn/functional.h at its end.
//
// As in LibTorch, F::XFuncOptions is the layer's XOptions (wick/nn/modules/pooling_options.h,
// fold_options.h, pixel_shuffle_options.h), except MaxUnpoolFuncOptions (the layer's options plus
// output_size) and PadFuncOptions, which are their own. Each overload forwards the options to
// wick's positional function of the same name (nn/src/functional_options_pool.cpp), so values,
// gradients, devices and errors are that function's. Where the options default the stride to the
// kernel size, an explicit stride of 0 is refused (ValueError naming the op), as LibTorch's
// functions refuse it, while the positional functions read 0 as "stride = kernel_size".
//
// The option structs are declared here before they are named, and their headers included at the
// end: Note [Options headers and functional.h] (wick/nn/modules/conv_size.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/nn/arg.h"
#include "wick/nn/functional.h"  // Int2, OptionalInt2, PadMode; it includes this file at its end (both #pragma once)
#include "wick/nn/int3.h"
#include "wick/nn/modules/conv_size.h"

namespace wick::nn {

template <size_t D>
struct MaxPoolOptions;
template <size_t D>
struct AvgPoolOptions;
template <class output_size_t>
struct AdaptiveAvgPoolOptions;
template <class output_size_t>
struct AdaptiveMaxPoolOptions;
struct LPPool1dOptions;
struct LPPool2dOptions;
struct FoldOptions;
struct UnfoldOptions;
struct PixelShuffleOptions;
struct PixelUnshuffleOptions;

namespace functional {

using AvgPool1dFuncOptions = AvgPoolOptions<1>;
using AvgPool2dFuncOptions = AvgPoolOptions<2>;
using AvgPool3dFuncOptions = AvgPoolOptions<3>;
using MaxPool1dFuncOptions = MaxPoolOptions<1>;
using MaxPool2dFuncOptions = MaxPoolOptions<2>;
using MaxPool3dFuncOptions = MaxPoolOptions<3>;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPoolOptions<int64_t>;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPoolOptions<OptionalInt2>;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPoolOptions<Int3>;
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPoolOptions<int64_t>;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPoolOptions<Int2>;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPoolOptions<Int3>;
using LPPool1dFuncOptions = LPPool1dOptions;
using LPPool2dFuncOptions = LPPool2dOptions;
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;

/// F::max_unpool1d / 2d / 3d's options, as LibTorch's MaxUnpoolFuncOptions<D>: the layer's
/// kernel_size, stride (defaults to kernel_size) and padding (0), and output_size ({L}, {H, W} or
/// {D, H, W}, or the whole shape; unset: the default size), as the positional functions' last
/// argument. Sizes are int64_t, Int2 or Int3 (LibTorch's ExpandingArray<D>).
template <size_t D>
struct MaxUnpoolFuncOptions {
  using size_type = conv_size_t<D>;

  /* implicit */ MaxUnpoolFuncOptions(size_type kernel_size)  // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  WICK_ARG(size_type, kernel_size);
  WICK_ARG(size_type, stride);
  WICK_ARG(size_type, padding) = 0;
  WICK_ARG(std::optional<std::vector<int64_t>>, output_size) = std::nullopt;
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;

/// F::pad's options, as LibTorch's: the (before, after) pairs from the last dim, the mode
/// (kConstant, the default, kReflect, kReplicate or kCircular; kZeros is Conv2d's and refused by
/// F::pad) and the fill value of mode constant (0). As LibTorch, a value of 0 is passed on as
/// "none", so the other modes take the default value and refuse any other.
struct PadFuncOptions {
  /* implicit */ PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT
  WICK_ARG(std::vector<int64_t>, pad);
  WICK_ARG(PadMode, mode) = PadMode::Constant;
  WICK_ARG(double, value) = 0;
};

// ---- pooling: each is the positional function of its name with the options' fields ----
/// avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
/// divisor_override). LibTorch's ignores divisor_override here; wick's honours it, as its
/// AvgPool1d layer does (docs/modules.md). ValueError for a stride of 0.
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);
/// avg_pool2d with the options' fields; ValueError for a stride entry of 0.
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
/// avg_pool3d with the options' fields; ValueError for a stride entry of 0.
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);
/// max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode); ValueError for a stride of 0.
Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
/// max_pool1d_with_indices with the options' fields; ValueError for a stride of 0.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& options);
/// max_pool2d with the options' fields; ValueError for a stride entry of 0.
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
/// max_pool2d_with_indices with the options' fields; ValueError for a stride entry of 0.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options);
/// max_pool3d with the options' fields; ValueError for a stride entry of 0.
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
/// max_pool3d_with_indices with the options' fields; ValueError for a stride entry of 0.
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& options);
/// adaptive_max_pool1d(input, output_size).
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
/// adaptive_max_pool1d_with_indices(input, output_size).
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& options);
/// adaptive_max_pool2d(input, output_size); an entry left out keeps the input's size.
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
/// adaptive_max_pool2d_with_indices(input, output_size).
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);
/// adaptive_max_pool3d(input, output_size).
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
/// adaptive_max_pool3d_with_indices(input, output_size).
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& options);
/// adaptive_avg_pool1d(input, output_size).
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options);
/// adaptive_avg_pool2d(input, output_size).
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
/// adaptive_avg_pool3d(input, output_size).
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options);
/// max_unpool1d(input, indices, kernel_size, stride, padding, output_size); ValueError for a
/// stride of 0.
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options);
/// max_unpool2d with the options' fields; ValueError for a stride entry of 0.
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options);
/// max_unpool3d with the options' fields; ValueError for a stride entry of 0.
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options);
/// lp_pool1d(input, norm_type, kernel_size, stride, ceil_mode); ValueError for a stride of 0.
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
/// lp_pool2d with the options' fields; ValueError for a stride entry of 0.
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);

// ---- padding, pixel shuffle, fold ----
/// pad(input, pad, mode, value), value 0 passed as none (see PadFuncOptions).
Tensor pad(const Tensor& input, const PadFuncOptions& options);
/// pixel_shuffle(input, upscale_factor).
Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
/// pixel_unshuffle(input, downscale_factor).
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);
/// fold(input, output_size, kernel_size, dilation, padding, stride).
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
/// unfold(input, kernel_size, dilation, padding, stride).
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);

}  // namespace functional
}  // namespace wick::nn

#include "wick/nn/modules/fold_options.h"           // FoldOptions, UnfoldOptions
#include "wick/nn/modules/pixel_shuffle_options.h"  // PixelShuffleOptions, PixelUnshuffleOptions
#include "wick/nn/modules/pooling_options.h"        // MaxPoolOptions<D>, ..., LPPool1dOptions, LPPool2dOptions
