#pragma once
// The Hardshrink, Softshrink and RReLU layers around nn::F's functions (functional_shrink.h),
// printing PyTorch 1.13's reprs. nn/src/modules_shrink.cpp.
#include <string>

#include "wick/nn/cloneable.h"
#include "wick/nn/functional_shrink.h"

namespace wick::nn {

/// F::hardshrink: `Hardshrink(0.3)`. Prints "Hardshrink(0.5)".
class HardshrinkImpl : public Cloneable<HardshrinkImpl> {
 public:
  explicit HardshrinkImpl(const HardshrinkOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const HardshrinkOptions& options() const { return options_; }

 private:
  HardshrinkOptions options_;
};
WICK_MODULE(Hardshrink);

/// F::softshrink: `Softshrink(0.3)`; lambda < 0 is a ValueError. Prints "Softshrink(0.5)".
class SoftshrinkImpl : public Cloneable<SoftshrinkImpl> {
 public:
  explicit SoftshrinkImpl(const SoftshrinkOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const SoftshrinkOptions& options() const { return options_; }

 private:
  SoftshrinkOptions options_;
};
WICK_MODULE(Softshrink);

/// F::rrelu with the layer's training flag: random slopes in training, (lower + upper) / 2 in
/// eval. lower > upper is a ValueError. Prints "RReLU(lower=0.125, upper=0.3333333333333333)".
class RReLUImpl : public Cloneable<RReLUImpl> {
 public:
  explicit RReLUImpl(const RReLUOptions& options = {});
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const RReLUOptions& options() const { return options_; }

 private:
  RReLUOptions options_;
};
WICK_MODULE(RReLU);

}  // namespace wick::nn
