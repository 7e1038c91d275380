// The loss modules (wick/nn/modules/loss.h): each forward is its functional with the options;
// class weights are buffers, read through their slots so that to() and replicas see theirs.
#include "wick/core/error.h"
#include "wick/nn/modules/loss.h"

namespace wick::nn {

namespace {
// A weight buffer must be a tensor of a floating dtype (or None).
Tensor checked_weight(const char* module, const char* name, const Tensor& w) {
  WICK_CHECK_TYPE(!w.defined() || w.is_floating_point(), "{}: {} must be float32 or float64, got {}", module, name,
                  w.defined() ? w.dtype() : kFloat32);
  return w;
}
}  // namespace

MSELossImpl::MSELossImpl(const MSELossOptions& options) : options_(options) {
  detail::check_reduction("MSELoss", options_.reduction());
}
Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::mse_loss(input, target, options_.reduction());
}

L1LossImpl::L1LossImpl(const L1LossOptions& options) : options_(options) {
  detail::check_reduction("L1Loss", options_.reduction());
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::l1_loss(input, target, options_.reduction());
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options)
    : options_(options), weight_(register_buffer("weight", checked_weight("NLLLoss", "weight", options.weight()))) {
  detail::check_reduction("NLLLoss", options_.reduction());
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::nll_loss(input, target, weight(), options_.reduction(), options_.ignore_index());
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : options_(options),
      weight_(register_buffer("weight", checked_weight("CrossEntropyLoss", "weight", options.weight()))) {
  detail::check_reduction("CrossEntropyLoss", options_.reduction());
  WICK_CHECK(options_.label_smoothing() >= 0.0 && options_.label_smoothing() <= 1.0,
             "CrossEntropyLoss: label_smoothing must be in [0, 1], got {}", options_.label_smoothing());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::cross_entropy(input, target, weight(), options_.reduction(), options_.ignore_index(),
                          options_.label_smoothing());
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options)
    : options_(options),
      weight_(register_buffer("weight", checked_weight("BCEWithLogitsLoss", "weight", options.weight()))),
      pos_weight_(
          register_buffer("pos_weight", checked_weight("BCEWithLogitsLoss", "pos_weight", options.pos_weight()))) {
  detail::check_reduction("BCEWithLogitsLoss", options_.reduction());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::binary_cross_entropy_with_logits(input, target, weight(), options_.reduction(), pos_weight());
}

BCELossImpl::BCELossImpl(const BCELossOptions& options)
    : options_(options), weight_(register_buffer("weight", checked_weight("BCELoss", "weight", options.weight()))) {
  detail::check_reduction("BCELoss", options_.reduction());
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::binary_cross_entropy(input, target, weight(), options_.reduction());
}

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& options) : options_(options) {
  detail::check_reduction("SmoothL1Loss", options_.reduction());
  WICK_CHECK(options_.beta() >= 0.0, "SmoothL1Loss: beta must be >= 0 (0 is L1Loss), got {}", options_.beta());
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::smooth_l1_loss(input, target, options_.reduction(), options_.beta());
}

HuberLossImpl::HuberLossImpl(const HuberLossOptions& options) : options_(options) {
  detail::check_reduction("HuberLoss", options_.reduction());
  WICK_CHECK(options_.delta() > 0.0, "HuberLoss: delta must be > 0, got {}", options_.delta());
}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::huber_loss(input, target, options_.reduction(), options_.delta());
}

KLDivLossImpl::KLDivLossImpl(const KLDivLossOptions& options) : options_(options) {
  detail::check_reduction("KLDivLoss", options_.reduction(), true);
}
Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::kl_div(input, target, options_.reduction(), options_.log_target());
}

SoftMarginLossImpl::SoftMarginLossImpl(const SoftMarginLossOptions& options) : options_(options) {
  detail::check_reduction("SoftMarginLoss", options_.reduction());
}
Tensor SoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::soft_margin_loss(input, target, options_.reduction());
}

MarginRankingLossImpl::MarginRankingLossImpl(const MarginRankingLossOptions& options) : options_(options) {
  detail::check_reduction("MarginRankingLoss", options_.reduction());
}
Tensor MarginRankingLossImpl::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return F::margin_ranking_loss(input1, input2, target, options_.margin(), options_.reduction());
}

HingeEmbeddingLossImpl::HingeEmbeddingLossImpl(const HingeEmbeddingLossOptions& options) : options_(options) {
  detail::check_reduction("HingeEmbeddingLoss", options_.reduction());
}
Tensor HingeEmbeddingLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::hinge_embedding_loss(input, target, options_.margin(), options_.reduction());
}

CosineEmbeddingLossImpl::CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& options) : options_(options) {
  detail::check_reduction("CosineEmbeddingLoss", options_.reduction());
}
Tensor CosineEmbeddingLossImpl::forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
  return F::cosine_embedding_loss(input1, input2, target, options_.margin(), options_.reduction());
}

}  // namespace wick::nn
