#pragma once
// AlphaDropout and FeatureAlphaDropout (torch.nn's), the layers around F::alpha_dropout and
// F::feature_alpha_dropout (Note [Alpha dropout], nn/src/functional_random.cpp).
#include <string>

#include "wick/nn/cloneable.h"
#include "wick/nn/functional_random.h"
#include "wick/nn/modules/dropout.h"

namespace wick::nn {

/// LibTorch's AlphaDropoutOptions and FeatureAlphaDropoutOptions: DropoutOptions (p, inplace).
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

/// F::alpha_dropout(input, p, is_training()): the identity in eval mode.
class AlphaDropoutImpl : public Cloneable<AlphaDropoutImpl> {
 public:
  /// ValueError for a p outside [0, 1].
  explicit AlphaDropoutImpl(const AlphaDropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  /// "p=0.5, inplace=False", as PyTorch.
  std::string extra_repr() const override;
  const AlphaDropoutOptions& options() const { return options_; }

 private:
  AlphaDropoutOptions options_;
};
WICK_MODULE(AlphaDropout);

/// F::feature_alpha_dropout(input, p, is_training()): whole channels of [N, C, *]; the identity
/// in eval mode.
class FeatureAlphaDropoutImpl : public Cloneable<FeatureAlphaDropoutImpl> {
 public:
  /// ValueError for a p outside [0, 1].
  explicit FeatureAlphaDropoutImpl(const FeatureAlphaDropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  /// "p=0.5, inplace=False", as PyTorch.
  std::string extra_repr() const override;
  const FeatureAlphaDropoutOptions& options() const { return options_; }

 private:
  FeatureAlphaDropoutOptions options_;
};
WICK_MODULE(FeatureAlphaDropout);

}  // namespace wick::nn
