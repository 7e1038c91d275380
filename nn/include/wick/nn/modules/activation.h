#pragma once
// The activation layers (ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax; LeakyReLU, ELU, SELU, CELU,
// Softplus, Hardtanh, ReLU6, Hardsigmoid, Hardswish, Mish, Softsign, Tanhshrink, Threshold, GLU,
// LogSigmoid, Softmin, LogSoftmax, and PReLU with its learned slopes) and Flatten. The options
// structs of the later ones are in wick/nn/functional_activation.h, shared with nn::F.
#include <string>
#include <utility>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional_activation.h"

namespace wick::nn {

/// F::relu. `ReLU(ReLUOptions().inplace(true))` (or `ReLU(true)`) writes into its input and
/// prints "ReLU(inplace=True)".
class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const ReLUOptions& options() const { return options_; }

 private:
  ReLUOptions options_;
};
WICK_MODULE(ReLU);

// GELUOptions (F::GELUFuncOptions too): wick/nn/functional_options_conv_norm.h.
class GELUImpl : public Cloneable<GELUImpl> {
 public:
  explicit GELUImpl(GELUOptions options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const GELUOptions& options() const { return options_; }

 private:
  GELUOptions options_;
};
WICK_MODULE(GELU);

/// x * sigmoid(x) (torch.nn.SiLU); with SiLUOptions(true), PyTorch's inplace, it prints
/// "SiLU(inplace=True)".
class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  explicit SiLUImpl(const SiLUOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const SiLUOptions& options() const { return options_; }

 private:
  SiLUOptions options_;
};
WICK_MODULE(SiLU);

class TanhImpl : public Cloneable<TanhImpl> {
 public:
  TanhImpl() = default;
  Tensor forward(const Tensor& input);
};
WICK_MODULE(Tanh);

class SigmoidImpl : public Cloneable<SigmoidImpl> {
 public:
  SigmoidImpl() = default;
  Tensor forward(const Tensor& input);
};
WICK_MODULE(Sigmoid);

/// Softmax's options, as LibTorch: `SoftmaxOptions(1)` (or `Softmax(1)`).
struct SoftmaxOptions {
  /* implicit */ SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  WICK_ARG(int64_t, dim);
};

/// softmax along `dim`.
class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const SoftmaxOptions& options() const { return options_; }

 private:
  SoftmaxOptions options_;
};
WICK_MODULE(Softmax);

// ---- the layers around nn::F's activations (nn/src/modules_activation.cpp) ----
// Each forward is the F:: function with the layer's options; each prints PyTorch's repr.

/// F::leaky_relu. Prints "LeakyReLU(negative_slope=0.01)".
class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const LeakyReLUOptions& options() const { return options_; }

 private:
  LeakyReLUOptions options_;
};
WICK_MODULE(LeakyReLU);

/// F::elu. Prints "ELU(alpha=1.0)".
class ELUImpl : public Cloneable<ELUImpl> {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const ELUOptions& options() const { return options_; }

 private:
  ELUOptions options_;
};
WICK_MODULE(ELU);

/// F::selu. Prints "SELU()".
class SELUImpl : public Cloneable<SELUImpl> {
 public:
  explicit SELUImpl(const SELUOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const SELUOptions& options() const { return options_; }

 private:
  SELUOptions options_;
};
WICK_MODULE(SELU);

/// F::celu; alpha 0 is a ValueError. Prints "CELU(alpha=1.0)".
class CELUImpl : public Cloneable<CELUImpl> {
 public:
  explicit CELUImpl(const CELUOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const CELUOptions& options() const { return options_; }

 private:
  CELUOptions options_;
};
WICK_MODULE(CELU);

/// F::softplus; beta 0 is a ValueError. Prints "Softplus(beta=1, threshold=20)": PyTorch's
/// defaults are Python ints, so integral values print without ".0" (a Python float 2.0 prints
/// "2.0" there and "2" here).
class SoftplusImpl : public Cloneable<SoftplusImpl> {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const SoftplusOptions& options() const { return options_; }

 private:
  SoftplusOptions options_;
};
WICK_MODULE(Softplus);

/// F::hardtanh; max_val must exceed min_val (ValueError; PyTorch asserts it). Prints
/// "Hardtanh(min_val=-1.0, max_val=1.0)".
class HardtanhImpl : public Cloneable<HardtanhImpl> {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const HardtanhOptions& options() const { return options_; }

 private:
  HardtanhOptions options_;
};
WICK_MODULE(Hardtanh);

/// F::relu6. Prints "ReLU6()".
class ReLU6Impl : public Cloneable<ReLU6Impl> {
 public:
  explicit ReLU6Impl(const ReLU6Options& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const ReLU6Options& options() const { return options_; }

 private:
  ReLU6Options options_;
};
WICK_MODULE(ReLU6);

/// F::hardsigmoid. Prints "Hardsigmoid()" (PyTorch leaves inplace out of its repr).
class HardsigmoidImpl : public Cloneable<HardsigmoidImpl> {
 public:
  explicit HardsigmoidImpl(const HardsigmoidOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  const HardsigmoidOptions& options() const { return options_; }

 private:
  HardsigmoidOptions options_;
};
WICK_MODULE(Hardsigmoid);

/// F::hardswish. Prints "Hardswish()" (PyTorch leaves inplace out of its repr).
class HardswishImpl : public Cloneable<HardswishImpl> {
 public:
  explicit HardswishImpl(const HardswishOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  const HardswishOptions& options() const { return options_; }

 private:
  HardswishOptions options_;
};
WICK_MODULE(Hardswish);

/// F::mish. Prints "Mish()", or "Mish(inplace=True)".
class MishImpl : public Cloneable<MishImpl> {
 public:
  explicit MishImpl(const MishOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const MishOptions& options() const { return options_; }

 private:
  MishOptions options_;
};
WICK_MODULE(Mish);

/// F::softsign.
class SoftsignImpl : public Cloneable<SoftsignImpl> {
 public:
  SoftsignImpl() = default;
  Tensor forward(const Tensor& input);
};
WICK_MODULE(Softsign);

/// F::tanhshrink.
class TanhshrinkImpl : public Cloneable<TanhshrinkImpl> {
 public:
  TanhshrinkImpl() = default;
  Tensor forward(const Tensor& input);
};
WICK_MODULE(Tanhshrink);

/// F::logsigmoid.
class LogSigmoidImpl : public Cloneable<LogSigmoidImpl> {
 public:
  LogSigmoidImpl() = default;
  Tensor forward(const Tensor& input);
};
WICK_MODULE(LogSigmoid);

/// F::threshold: `Threshold(0.1, 20.0)`. Prints "Threshold(threshold=0.1, value=20.0)".
class ThresholdImpl : public Cloneable<ThresholdImpl> {
 public:
  ThresholdImpl(double threshold, double value) : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& options) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const ThresholdOptions& options() const { return options_; }

 private:
  ThresholdOptions options_;
};
WICK_MODULE(Threshold);

/// F::glu. Prints "GLU(dim=-1)".
class GLUImpl : public Cloneable<GLUImpl> {
 public:
  explicit GLUImpl(const GLUOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const GLUOptions& options() const { return options_; }

 private:
  GLUOptions options_;
};
WICK_MODULE(GLU);

/// F::softmin along dim: `Softmin(1)`. Prints "Softmin(dim=1)".
class SoftminImpl : public Cloneable<SoftminImpl> {
 public:
  explicit SoftminImpl(const SoftminOptions& options) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const SoftminOptions& options() const { return options_; }

 private:
  SoftminOptions options_;
};
WICK_MODULE(Softmin);

/// F::log_softmax along dim: `LogSoftmax(1)`. Prints "LogSoftmax(dim=1)".
class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const LogSoftmaxOptions& options() const { return options_; }

 private:
  LogSoftmaxOptions options_;
};
WICK_MODULE(LogSoftmax);

/// F::prelu with a learned parameter "weight" of shape [num_parameters] (1, or the input's
/// channel count), filled with init, as PyTorch: state_dicts match. num_parameters must be >= 1
/// (ValueError). `tensor_options` sets the weight's dtype and device, as Linear's. Prints
/// "PReLU(num_parameters=1)".
class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {}, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  /// Fills weight with options().init() again.
  void reset_parameters();
  std::string extra_repr() const override;
  const Tensor& weight() const { return param(weight_); }
  const PReLUOptions& options() const { return options_; }

 private:
  PReLUOptions options_;
  ParamSlot weight_;
};
WICK_MODULE(PReLU);

/// Flatten's options, as LibTorch: `FlattenOptions().start_dim(0)`; the defaults keep the batch
/// dim.
struct FlattenOptions {
  WICK_ARG(int64_t, start_dim) = 1;
  WICK_ARG(int64_t, end_dim) = -1;
};

/// input.flatten(start_dim, end_dim).
class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const FlattenOptions& options() const { return options_; }

 private:
  FlattenOptions options_;
};
WICK_MODULE(Flatten);

}  // namespace wick::nn
