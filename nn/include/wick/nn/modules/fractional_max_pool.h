#pragma once
// FractionalMaxPool2d and FractionalMaxPool3d (torch.nn's), the layers around
// F::fractional_max_pool2d / 3d (Note [Fractional max pooling], nn/src/functional_fractional.cpp).
#include <tuple>

#include "wick/nn/cloneable.h"
#include "wick/nn/functional_fractional.h"

namespace wick::nn {

/// F::fractional_max_pool2d with the layer's options. As LibTorch, options._random_samples
/// becomes the buffer "_random_samples" (undefined: fresh samples each call; set it with
/// `buffers()` / `named_buffers()`, or by building the layer with them), so it follows to() and
/// replication; options() then holds no tensor. Prints "FractionalMaxPool2d()", as PyTorch.
class FractionalMaxPool2dImpl : public Cloneable<FractionalMaxPool2dImpl> {
 public:
  /// ValueError for both or neither of output_size and output_ratio, or a ratio outside (0, 1).
  explicit FractionalMaxPool2dImpl(const FractionalMaxPool2dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the indices of the maxima (for MaxUnpool2d).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  const FractionalMaxPool2dOptions& options() const { return options_; }

 private:
  FractionalMaxPool2dOptions options_;
  BufferSlot samples_;
};
WICK_MODULE(FractionalMaxPool2d);

/// FractionalMaxPool2d for [N, C, D, H, W] or [C, D, H, W] (F::fractional_max_pool3d).
class FractionalMaxPool3dImpl : public Cloneable<FractionalMaxPool3dImpl> {
 public:
  /// ValueError for both or neither of output_size and output_ratio, or a ratio outside (0, 1).
  explicit FractionalMaxPool3dImpl(const FractionalMaxPool3dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the indices of the maxima (for MaxUnpool3d).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  const FractionalMaxPool3dOptions& options() const { return options_; }

 private:
  FractionalMaxPool3dOptions options_;
  BufferSlot samples_;
};
WICK_MODULE(FractionalMaxPool3d);

}  // namespace wick::nn
