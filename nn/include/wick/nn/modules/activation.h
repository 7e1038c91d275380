#pragma once
// Parameter-free layers: ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, Flatten.
#include <string>
#include <utility>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  ReLUImpl() = default;
  Tensor forward(const Tensor& input);
};
WICK_MODULE(ReLU);

/// GELU's options, as LibTorch: `GELUOptions().approximate("tanh")`.
struct GELUOptions {
  /// "none" (exact, erf) or "tanh".
  WICK_ARG(std::string, approximate) = "none";
};

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

/// x * sigmoid(x) (torch.nn.SiLU).
class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  SiLUImpl() = default;
  Tensor forward(const Tensor& input);
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
