#pragma once
// FoldOptions and UnfoldOptions: the options of Fold and Unfold (wick/nn/modules/fold.h), which
// are also F::fold's and F::unfold's (F::FoldFuncOptions, F::UnfoldFuncOptions in
// wick/nn/functional_options_pool.h), as LibTorch's torch/nn/options/fold.h. Read inside
// functional.h: Note [Options headers and functional.h] (wick/nn/modules/conv_size.h).
#include "wick/nn/arg.h"
#include "wick/nn/functional.h"  // Int2

namespace wick::nn {

/// Fold's options, as LibTorch: `FoldOptions({4, 5}, 2).padding(1)`.
struct FoldOptions {
  FoldOptions(Int2 output_size, Int2 kernel_size) : output_size_(output_size), kernel_size_(kernel_size) {}
  WICK_ARG(Int2, output_size);
  WICK_ARG(Int2, kernel_size);
  WICK_ARG(Int2, dilation) = 1;
  WICK_ARG(Int2, padding) = 0;
  WICK_ARG(Int2, stride) = 1;
};

/// Unfold's options, as LibTorch: `UnfoldOptions(3).stride(2)`.
struct UnfoldOptions {
  /* implicit */ UnfoldOptions(Int2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  WICK_ARG(Int2, kernel_size);
  WICK_ARG(Int2, dilation) = 1;
  WICK_ARG(Int2, padding) = 0;
  WICK_ARG(Int2, stride) = 1;
};

}  // namespace wick::nn
