#pragma once
// LayerNorm (torch.nn.LayerNorm).
#include <utility>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// LayerNorm's options, as LibTorch: `LayerNormOptions({64}).eps(1e-6).elementwise_affine(false)`.
/// bias(false) keeps the weight and drops the bias (PyTorch's `bias=False`).
struct LayerNormOptions {
  /* implicit */ LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  WICK_ARG(std::vector<int64_t>, normalized_shape);
  WICK_ARG(double, eps) = 1e-5;
  /// Whether to learn weight (ones) and bias (zeros) of normalized_shape.
  WICK_ARG(bool, elementwise_affine) = true;
  WICK_ARG(bool, bias) = true;
};

/// Normalizes over the trailing dims `normalized_shape`. `tensor_options`: the parameters'
/// dtype and device (see LinearImpl).
class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  const LayerNormOptions& options() const { return options_; }

 private:
  LayerNormOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(LayerNorm);

}  // namespace wick::nn
