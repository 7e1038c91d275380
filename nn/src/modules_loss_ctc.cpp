// The CTCLoss and TripletMarginWithDistanceLoss layers (wick/nn/modules/loss_ctc.h): each forward
// is its functional with the options.
#include "wick/core/error.h"
#include "wick/nn/functional_loss.h"
#include "wick/nn/modules/loss_ctc.h"

namespace wick::nn {

CTCLossImpl::CTCLossImpl(const CTCLossOptions& options) : options_(options) {
  detail::check_reduction("CTCLoss", options_.reduction());
  WICK_CHECK(options_.blank() >= 0, "CTCLoss: blank must be a class index (>= 0), got {}", options_.blank());
}
Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                            const Tensor& target_lengths) {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options_);
}

TripletMarginWithDistanceLossImpl::TripletMarginWithDistanceLossImpl(
    const TripletMarginWithDistanceLossOptions& options)
    : options_(options) {
  detail::check_reduction("TripletMarginWithDistanceLoss", options_.reduction());
}
Tensor TripletMarginWithDistanceLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                                  const Tensor& negative) {
  return F::triplet_margin_with_distance_loss(anchor, positive, negative, options_);
}

}  // namespace wick::nn
