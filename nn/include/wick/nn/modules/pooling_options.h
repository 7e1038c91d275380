#pragma once
// The pooling layers' options, written once over the number of spatial axes, as LibTorch's
// templates in torch/nn/options/pooling.h: MaxPoolOptions<D>, AvgPoolOptions<D>,
// AdaptiveAvgPoolOptions<output_size_t> and AdaptiveMaxPoolOptions<output_size_t>. MaxPool1dOptions
// to AdaptiveMaxPool3dOptions are aliases of them, as LibTorch's.
//
// Sizes are conv_size_t<D> (int64_t, Int2 or Int3: the types F::max_pool1d / 2d / 3d take, where
// LibTorch has ExpandingArray<D>). The adaptive options' output_size_t is what F's function takes:
// int64_t (1-d), Int2 (AdaptiveAvgPool2d), OptionalInt2 (AdaptiveMaxPool2d, LibTorch's
// ExpandingArrayWithOptionalElem<2>) or Int3 (3-d; LibTorch's 3-d may leave entries out, wick's
// takes three sizes). LPPool1dOptions and LPPool2dOptions (LibTorch's LPPoolOptions<D>, one struct
// each in wick) are here too, as in LibTorch's options/pooling.h.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "wick/nn/arg.h"
#include "wick/nn/functional.h"  // Int2, OptionalInt2
#include "wick/nn/int3.h"
#include "wick/nn/modules/conv_options.h"
#include "wick/nn/modules/conv_size.h"  // conv_size_t<D>: Note [Options headers and functional.h]

namespace wick::nn {

/// A D-d max pooling's options, as LibTorch: `MaxPool2dOptions(3).stride(2).padding(1)`. stride
/// defaults to kernel_size; a stride of 0 is refused by the layer's constructor (ValueError,
/// "stride should not be zero", as LibTorch), although F::max_pool2d reads 0 as "stride =
/// kernel_size".
template <size_t D>
struct MaxPoolOptions {
  using size_type = conv_size_t<D>;

  /* implicit */ MaxPoolOptions(size_type kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(size_type, kernel_size);
  WICK_ARG(size_type, stride);
  WICK_ARG(size_type, padding) = 0;
  WICK_ARG(size_type, dilation) = 1;
  WICK_ARG(bool, ceil_mode) = false;
};

using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;

/// A D-d average pooling's options, as LibTorch: `AvgPool2dOptions(3).stride(2).count_include_pad(false)`.
/// stride defaults to kernel_size; a stride of 0 is refused by the layer's constructor, as
/// MaxPoolOptions'.
template <size_t D>
struct AvgPoolOptions {
  using size_type = conv_size_t<D>;

  /* implicit */ AvgPoolOptions(size_type kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(size_type, kernel_size);
  WICK_ARG(size_type, stride);
  WICK_ARG(size_type, padding) = 0;
  WICK_ARG(bool, ceil_mode) = false;
  WICK_ARG(bool, count_include_pad) = true;
  /// Every window's divisor, when set (F::avg_pool2d's last argument); 0 is refused by the
  /// constructor (PyTorch refuses it at forward). Not printed, as PyTorch's AvgPool2d does not
  /// print it. PyTorch 1.13's AvgPool1d has no such argument; LibTorch's options carry one.
  WICK_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;

/// An adaptive average pooling's options, as LibTorch: `AdaptiveAvgPool2dOptions({1, 1})`.
template <class output_size_t>
struct AdaptiveAvgPoolOptions {
  /* implicit */ AdaptiveAvgPoolOptions(output_size_t output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(output_size_t, output_size);
};

using AdaptiveAvgPool1dOptions = AdaptiveAvgPoolOptions<int64_t>;
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<Int2>;
using AdaptiveAvgPool3dOptions = AdaptiveAvgPoolOptions<Int3>;

/// An adaptive max pooling's options, as LibTorch: `AdaptiveMaxPool1dOptions(5)`,
/// `AdaptiveMaxPool2dOptions({2, 3})`, or `AdaptiveMaxPool2dOptions({std::nullopt, 3})` to keep
/// the input's height (PyTorch's `(None, 3)`).
template <class output_size_t>
struct AdaptiveMaxPoolOptions {
  /* implicit */ AdaptiveMaxPoolOptions(output_size_t output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(output_size_t, output_size);
};

using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<int64_t>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<OptionalInt2>;
using AdaptiveMaxPool3dOptions = AdaptiveMaxPoolOptions<Int3>;

/// LPPool1d's options, as LibTorch: `LPPool1dOptions(2, 3).stride(2).ceil_mode(true)`. stride
/// defaults to kernel_size.
struct LPPool1dOptions {
  LPPool1dOptions(double norm_type, int64_t kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  WICK_ARG(double, norm_type);
  WICK_ARG(int64_t, kernel_size);
  WICK_ARG(int64_t, stride);
  WICK_ARG(bool, ceil_mode) = false;
};

/// LPPool2d's options, as LibTorch: `LPPool2dOptions(2, {3, 2}).stride(1)`. stride defaults to
/// kernel_size.
struct LPPool2dOptions {
  LPPool2dOptions(double norm_type, Int2 kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  WICK_ARG(double, norm_type);
  WICK_ARG(Int2, kernel_size);
  WICK_ARG(Int2, stride);
  WICK_ARG(bool, ceil_mode) = false;
};

}  // namespace wick::nn
