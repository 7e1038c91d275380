// The functional-options overloads of the losses (wick/nn/functional_options_loss.h): each calls
// the positional function of its name with the options' fields, in that function's order, so
// values, gradients, devices and errors are the positional function's.
#include "wick/nn/functional_options_loss.h"

#include "wick/core/error.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  return nll_loss(input, target, options.weight(), options.reduction(), options.ignore_index());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  return cross_entropy(input, target, options.weight(), options.reduction(), options.ignore_index(),
                       options.label_smoothing());
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return mse_loss(input, target, options.reduction());
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  return l1_loss(input, target, options.reduction());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  return binary_cross_entropy_with_logits(input, target, options.weight(), options.reduction(), options.pos_weight());
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options) {
  return binary_cross_entropy(input, target, options.weight(), options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options,
                      std::optional<double> beta) {
  // The default of SmoothL1LossOptions::beta: a trailing beta overrides only that.
  constexpr double kDefaultBeta = 1.0;
  WICK_CHECK(!beta || options.beta() == kDefaultBeta || options.beta() == *beta,
             "smooth_l1_loss: two different betas, options.beta() = {} and the beta argument = {}: give one (the "
             "beta argument is LibTorch 1.13's signature; options.beta() is read when it is left out)",
             options.beta(), beta.value_or(kDefaultBeta));
  return smooth_l1_loss(input, target, options.reduction(), beta.value_or(options.beta()));
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  return huber_loss(input, target, options.reduction(), options.delta());
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  return kl_div(input, target, options.reduction(), options.log_target());
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options) {
  return soft_margin_loss(input, target, options.reduction());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  return margin_ranking_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options) {
  return hinge_embedding_loss(input, target, options.margin(), options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  return cosine_embedding_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options) {
  return triplet_margin_loss(anchor, positive, negative, options.margin(), options.p(), options.eps(), options.swap(),
                             options.reduction());
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options) {
  return multi_margin_loss(input, target, options.p(), options.margin(), options.weight(), options.reduction());
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options) {
  return multilabel_margin_loss(input, target, options.reduction());
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options) {
  return multilabel_soft_margin_loss(input, target, options.weight(), options.reduction());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options) {
  return poisson_nll_loss(input, target, options.log_input(), options.full(), options.eps(), options.reduction());
}

}  // namespace wick::nn::functional
