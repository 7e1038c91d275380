#pragma once
// CrossMapLRN2d (torch.nn.CrossMapLRN2d, LibTorch's torch::nn::CrossMapLRN2d): the legacy
// cross-channel response normalization with its own backward (Note [CrossMapLRN2d],
// nn/src/modules_cross_map_lrn2d.cpp).
#include <cstdint>
#include <string>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// CrossMapLRN2d's options, as LibTorch's: `CrossMapLRN2dOptions(5).alpha(1e-3).k(2)`. k is a
/// double (LibTorch: int64_t), since PyTorch takes a fractional k.
struct CrossMapLRN2dOptions {
  /* implicit */ CrossMapLRN2dOptions(int64_t size) : size_(size) {}  // NOLINT
  /// The number of neighbouring channels, >= 1.
  WICK_ARG(int64_t, size);
  WICK_ARG(double, alpha) = 1e-4;
  WICK_ARG(double, beta) = 0.75;
  WICK_ARG(double, k) = 1.0;
};

/// out = input * (k + alpha / size * window sum of input^2)^-beta over a 4-d [N, C, H, W] input
/// (ValueError for another rank), with PyTorch 1.13's windows and backward, which is not the
/// forward's exact derivative (Note [CrossMapLRN2d]). Differentiable once (not for size 1, where
/// PyTorch 1.13's backward fails too: ValueError), on every device.
/// Prints "CrossMapLRN2d(5, alpha=0.0001, beta=0.75, k=1)", as PyTorch.
class CrossMapLRN2dImpl : public Cloneable<CrossMapLRN2dImpl> {
 public:
  /// ValueError for size < 1.
  explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options);
  CrossMapLRN2dImpl(int64_t size) : CrossMapLRN2dImpl(CrossMapLRN2dOptions(size)) {}  // NOLINT
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const CrossMapLRN2dOptions& options() const { return options_; }

 private:
  CrossMapLRN2dOptions options_;
};
WICK_MODULE(CrossMapLRN2d);

}  // namespace wick::nn
