#pragma once
// torch.nn.functional.triplet_margin_with_distance_loss with LibTorch's options:
//
//   auto cosine = [](const Tensor& a, const Tensor& b) { return 1.0 - F::cosine_similarity(a, b); };
//   F::triplet_margin_with_distance_loss(a, p, n, F::TripletMarginWithDistanceLossFuncOptions()
//                                                     .distance_function(cosine).margin(0.5));
//
// The options serve the TripletMarginWithDistanceLoss layer too (wick/nn/modules/loss_ctc.h).
// nn/src/functional_triplet.cpp.
#include <functional>
#include <optional>

#include "wick/nn/arg.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// TripletMarginWithDistanceLoss's options, as LibTorch's.
struct TripletMarginWithDistanceLossOptions {
  /// A distance between two batches of embeddings (anchor and positive, anchor and negative,
  /// positive and negative), e.g. [N, D] x [N, D] -> [N]; unset: F::pairwise_distance with its
  /// defaults (p = 2, eps = 1e-6).
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  WICK_ARG(std::optional<distance_function_t>, distance_function) = std::nullopt;
  WICK_ARG(double, margin) = 1.0;
  /// Use min(d(anchor, negative), d(positive, negative)) as the negative distance.
  WICK_ARG(bool, swap) = false;
  WICK_ARG(Reduction, reduction) = kMean;
};

namespace functional {

using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;

/// max(0, d(anchor, positive) - d(anchor, negative) + margin) (PyTorch 1.13's order of
/// operations), with d the distance function; with swap, d(anchor, negative) is replaced by
/// min(d(anchor, negative), d(positive, negative)) (a tie splits the gradient, as torch.min).
/// Reduced with kNone, kMean or kSum. As PyTorch, the inputs' shapes are the distance's business
/// (pairwise_distance broadcasts them); its results must be defined, floating tensors that
/// broadcast together (ValueError / TypeError naming triplet_margin_with_distance_loss).
/// Differentiable as far as the distance is (the default: twice, on every device).
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options = {});

}  // namespace functional

}  // namespace wick::nn
