#pragma once
// Linear and Identity (torch.nn.Linear, torch.nn.Identity).
#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// y = x @ weight^T + bias. weight [out, in] ~ kaiming_uniform(a = sqrt(5)) (that is
/// U(-1/sqrt(in), 1/sqrt(in))), bias [out] ~ U(-1/sqrt(in), 1/sqrt(in)), as PyTorch.
/// `options` sets the parameters' dtype and device (default float32 on cpu:0).
class Linear : public Cloneable<Linear> {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, TensorOptions options = {});
  /// input [*, in_features] -> [*, out_features].
  Tensor forward(const Tensor& input);
  /// Re-draws weight and bias with the default initialization.
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  /// Undefined when constructed with bias = false.
  const Tensor& bias() const { return param(bias_); }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }

 private:
  int64_t in_features_, out_features_;
  ParamSlot weight_, bias_;
};

/// Returns its input.
class Identity : public Cloneable<Identity> {
 public:
  Identity() = default;
  Tensor forward(const Tensor& input) { return input; }
};

}  // namespace wick::nn
