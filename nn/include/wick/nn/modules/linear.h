#pragma once
// Linear and Identity (torch.nn.Linear, torch.nn.Identity).
#include <utility>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// Linear's options: `LinearOptions(in, out).bias(false)`, as LibTorch.
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  WICK_ARG(int64_t, in_features);
  WICK_ARG(int64_t, out_features);
  /// Whether to learn an additive bias.
  WICK_ARG(bool, bias) = true;
};

/// y = x @ weight^T + bias. weight [out, in] ~ kaiming_uniform(a = sqrt(5)) (that is
/// U(-1/sqrt(in), 1/sqrt(in))), bias [out] ~ U(-1/sqrt(in), 1/sqrt(in)), as PyTorch.
///
/// `tensor_options` sets the parameters' dtype and device (default float32 on cpu:0), as
/// PyTorch's `nn.Linear(..., dtype=, device=)`. LibTorch has no such argument (one constructs in
/// float32 and calls ->to(kFloat64)); wick takes it so a float64 layer draws its initial values
/// in float64 and allocates once (Note [Layer dtype at construction] in docs/modules.md).
class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, TensorOptions tensor_options = {})
      : LinearImpl(LinearOptions(in_features, out_features), tensor_options) {}
  explicit LinearImpl(const LinearOptions& options, TensorOptions tensor_options = {});
  /// input [*, in_features] -> [*, out_features].
  Tensor forward(const Tensor& input);
  /// Re-draws weight and bias with the default initialization.
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  /// Undefined when constructed with bias(false).
  const Tensor& bias() const { return param(bias_); }
  int64_t in_features() const { return options_.in_features(); }
  int64_t out_features() const { return options_.out_features(); }
  const LinearOptions& options() const { return options_; }

 private:
  LinearOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(Linear);

/// Returns its input.
class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  IdentityImpl() = default;
  Tensor forward(const Tensor& input) { return input; }
};
WICK_MODULE(Identity);

}  // namespace wick::nn
