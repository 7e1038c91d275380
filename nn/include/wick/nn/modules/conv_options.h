#pragma once
// ConvOptions<D> and ConvTransposeOptions<D>: the options of the convolution and transposed
// convolution layers over D = 1, 2 or 3 spatial axes, written once, as LibTorch's templates in
// torch/nn/options/conv.h. Conv1dOptions, Conv2dOptions, Conv3dOptions and ConvTranspose1dOptions,
// 2d and 3d are aliases of them, as LibTorch's.
//
// LibTorch's sizes are ExpandingArray<D> for every D; wick's are the types its functions take:
// int64_t for one axis (F::conv1d), Int2 for two (F::conv2d) and Int3 for three (F::conv3d), which
// conv_size_t<D> names. Int2 and Int3 expand one number to every axis, as ExpandingArray does.
//
// The functions' options, F::ConvFuncOptions<D> and F::ConvTransposeFuncOptions<D> (F::conv2d(x, w,
// F::Conv2dFuncOptions().stride(2))) are in wick/nn/functional_options_conv_norm.h, conv_size_t<D> in
// wick/nn/modules/conv_size.h; the positional forms (F::conv2d(x, w, b, stride, padding, dilation, groups)) stay too.
#include <cstddef>
#include <cstdint>
#include <variant>

#include "wick/nn/arg.h"
#include "wick/nn/functional.h"  // Int2, PaddingMode, PadMode
#include "wick/nn/int3.h"
#include "wick/nn/modules/conv_size.h"  // conv_size_t<D>

namespace wick::nn {

/// A D-d convolution's options, as LibTorch's: `Conv2dOptions(in, out, 3).stride(2).padding(1)`.
/// Sizes are conv_size_t<D> (`3` means 3 on every axis). padding is sizes or kSame / kValid
/// (LibTorch's padding_t; for D > 1 one number also sets every axis). padding_mode says what the
/// padding holds: kZeros (the default), kReflect, kReplicate or kCircular, as F::pad's modes;
/// kConstant is refused when the layer is built (ValueError, as PyTorch's "padding_mode must be
/// one of").
template <size_t D>
struct ConvOptions {
  using size_type = conv_size_t<D>;
  using padding_t = std::variant<size_type, PaddingMode>;

  ConvOptions(int64_t in_channels, int64_t out_channels, size_type kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  WICK_ARG(int64_t, in_channels);
  WICK_ARG(int64_t, out_channels);
  WICK_ARG(size_type, kernel_size);
  WICK_ARG(size_type, stride) = 1;
  WICK_ARG(size_type, dilation) = 1;
  WICK_ARG(int64_t, groups) = 1;
  WICK_ARG(bool, bias) = true;
  WICK_ARG(PadMode, padding_mode) = kZeros;

 public:
  /// Zero padding on each side (a size or kSame / kValid).
  ConvOptions& padding(size_type p) {
    padding_ = p;
    return *this;
  }
  ConvOptions& padding(int64_t p) requires(D > 1) { return padding(size_type(p)); }
  ConvOptions& padding(PaddingMode p) {
    padding_ = p;
    return *this;
  }
  const padding_t& padding() const noexcept { return padding_; }

 private:
  padding_t padding_ = size_type(0);
};

using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

/// A D-d transposed convolution's options, as LibTorch's:
/// `ConvTranspose2dOptions(in, out, 4).stride(2).padding(1)`; sizes are conv_size_t<D>, as
/// ConvOptions'. padding_mode must be kZeros (the default), the only mode PyTorch's transposed
/// convolutions take.
template <size_t D>
struct ConvTransposeOptions {
  using size_type = conv_size_t<D>;

  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, size_type kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  WICK_ARG(int64_t, in_channels);
  WICK_ARG(int64_t, out_channels);
  WICK_ARG(size_type, kernel_size);
  WICK_ARG(size_type, stride) = 1;
  WICK_ARG(size_type, padding) = 0;
  WICK_ARG(size_type, output_padding) = 0;
  WICK_ARG(int64_t, groups) = 1;
  WICK_ARG(bool, bias) = true;
  WICK_ARG(size_type, dilation) = 1;
  WICK_ARG(PadMode, padding_mode) = kZeros;
};

using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

}  // namespace wick::nn
