#pragma once
// LayerNorm (torch.nn.LayerNorm).
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// Normalizes over the trailing dims `normalized_shape`; weight (ones) and bias (zeros) of that
/// shape when elementwise_affine (bias None when bias = false).
class LayerNorm : public Cloneable<LayerNorm> {
 public:
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     bool bias = true, TensorOptions options = {});
  Tensor forward(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }

 private:
  std::vector<int64_t> normalized_shape_;
  double eps_;
  bool elementwise_affine_;
  ParamSlot weight_, bias_;
};

}  // namespace wick::nn
