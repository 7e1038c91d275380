#pragma once
// Bilinear (torch.nn.Bilinear): y = x1^T A x2 + b, on F::bilinear.
#include <string>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// Bilinear's options: `BilinearOptions(in1, in2, out).bias(false)`, as LibTorch.
struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  WICK_ARG(int64_t, in1_features);
  WICK_ARG(int64_t, in2_features);
  WICK_ARG(int64_t, out_features);
  /// Whether to learn an additive bias.
  WICK_ARG(bool, bias) = true;
};

/// F::bilinear with weight [out, in1, in2] and bias [out], both ~ U(-1/sqrt(in1), 1/sqrt(in1)),
/// as PyTorch. `tensor_options` sets the parameters' dtype and device, as LinearImpl's (Note
/// [Layer dtype at construction] in docs/modules.md). Prints as PyTorch's
/// "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)".
class BilinearImpl : public Cloneable<BilinearImpl> {
 public:
  BilinearImpl(int64_t in1_features, int64_t in2_features, int64_t out_features, TensorOptions tensor_options = {})
      : BilinearImpl(BilinearOptions(in1_features, in2_features, out_features), tensor_options) {}
  explicit BilinearImpl(const BilinearOptions& options, TensorOptions tensor_options = {});
  /// input1 [*, in1], input2 [*, in2] (the same leading dims) -> [*, out].
  Tensor forward(const Tensor& input1, const Tensor& input2);
  /// Re-draws weight and bias with the default initialization.
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  /// Undefined when constructed with bias(false).
  const Tensor& bias() const { return param(bias_); }
  const BilinearOptions& options() const { return options_; }

 private:
  BilinearOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(Bilinear);

}  // namespace wick::nn
