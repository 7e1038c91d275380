#pragma once
// The CTCLoss and TripletMarginWithDistanceLoss layers with LibTorch's options structs:
//
//   nn::CTCLoss ctc(nn::CTCLossOptions().blank(0).zero_infinity(true));
//   Tensor l = ctc(log_probs, targets, input_lengths, target_lengths);   // F::ctc_loss
//   nn::TripletMarginWithDistanceLoss triplet(
//       nn::TripletMarginWithDistanceLossOptions().distance_function(my_distance).margin(0.5));
//
// Each forward is its functional with the options (functional_ctc.h,
// functional_triplet.h). Both print "CTCLoss()" and "TripletMarginWithDistanceLoss()":
// PyTorch's TripletMarginWithDistanceLoss holds its default distance as a child PairwiseDistance
// module, wick's distance is a std::function option and no child. The reduction and blank are
// checked when the layer is built (ValueError naming it) and again at every call.
#include "wick/nn/cloneable.h"
#include "wick/nn/functional_ctc.h"
#include "wick/nn/functional_triplet.h"

namespace wick::nn {

/// F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options).
class CTCLossImpl : public Cloneable<CTCLossImpl> {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options = {});
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  const CTCLossOptions& options() const { return options_; }

 private:
  CTCLossOptions options_;
};
WICK_MODULE(CTCLoss);

/// F::triplet_margin_with_distance_loss(anchor, positive, negative, options).
class TripletMarginWithDistanceLossImpl : public Cloneable<TripletMarginWithDistanceLossImpl> {
 public:
  explicit TripletMarginWithDistanceLossImpl(const TripletMarginWithDistanceLossOptions& options = {});
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  const TripletMarginWithDistanceLossOptions& options() const { return options_; }

 private:
  TripletMarginWithDistanceLossOptions options_;
};
WICK_MODULE(TripletMarginWithDistanceLoss);

}  // namespace wick::nn
