#pragma once
// PixelShuffleOptions and PixelUnshuffleOptions: the options of PixelShuffle and PixelUnshuffle
// (wick/nn/modules/resize.h), which are also F::pixel_shuffle's and F::pixel_unshuffle's
// (F::PixelShuffleFuncOptions, F::PixelUnshuffleFuncOptions in
// wick/nn/functional_options_pool.h), as LibTorch's torch/nn/options/pixelshuffle.h.
#include <cstdint>
#include <utility>  // std::move in WICK_ARG

#include "wick/nn/arg.h"

namespace wick::nn {

/// PixelShuffle's options, as LibTorch: `PixelShuffleOptions(2)`.
struct PixelShuffleOptions {
  /* implicit */ PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
  WICK_ARG(int64_t, upscale_factor);
};

/// PixelUnshuffle's options, as LibTorch: `PixelUnshuffleOptions(2)`.
struct PixelUnshuffleOptions {
  /* implicit */ PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}  // NOLINT
  WICK_ARG(int64_t, downscale_factor);
};

}  // namespace wick::nn
