#pragma once
// CosineSimilarity and PairwiseDistance (torch.nn's), on F::cosine_similarity and
// F::pairwise_distance; forward takes the two inputs. No parameters or buffers.
#include <string>

#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// CosineSimilarity's options, as LibTorch: `CosineSimilarityOptions().dim(0)`.
using CosineSimilarityOptions = functional::CosineSimilarityFuncOptions;
/// PairwiseDistance's options, as LibTorch: `PairwiseDistanceOptions().p(1).keepdim(true)`.
using PairwiseDistanceOptions = functional::PairwiseDistanceFuncOptions;

/// F::cosine_similarity with a fixed dim and eps; prints as PyTorch's "CosineSimilarity()".
class CosineSimilarityImpl : public Cloneable<CosineSimilarityImpl> {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) { return F::cosine_similarity(x1, x2, options_); }
  const CosineSimilarityOptions& options() const { return options_; }

 private:
  CosineSimilarityOptions options_;
};
WICK_MODULE(CosineSimilarity);

/// F::pairwise_distance with fixed p, eps and keepdim; prints as PyTorch's "PairwiseDistance()".
class PairwiseDistanceImpl : public Cloneable<PairwiseDistanceImpl> {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {}) : options_(options) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) { return F::pairwise_distance(x1, x2, options_); }
  const PairwiseDistanceOptions& options() const { return options_; }

 private:
  PairwiseDistanceOptions options_;
};
WICK_MODULE(PairwiseDistance);

}  // namespace wick::nn
