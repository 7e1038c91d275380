#pragma once
// cosine_similarity, pairwise_distance and pdist of wick::nn::functional (alias F), with LibTorch's
// options structs and PyTorch 1.13's eps rules. Included by wick/nn/functional.h; the layers
// (CosineSimilarity, PairwiseDistance) are in wick/nn/modules/distance.h. Composed of
// differentiable ops (nn/src/functional_distance.cpp).
#include "wick/autograd/functions.h"
#include "wick/nn/arg.h"

namespace wick::nn::functional {

/// cosine_similarity's arguments, as LibTorch's CosineSimilarityFuncOptions.
struct CosineSimilarityFuncOptions {
  WICK_ARG(int64_t, dim) = 1;
  WICK_ARG(double, eps) = 1e-8;
};
/// sum(x1 * x2, dim) / (max(|x1|, eps) max(|x2|, eps)) with the 2-norms taken along dim, as
/// PyTorch 1.13 (each norm is clamped on its own: later versions' rule too; the 1.13 docs'
/// max(|x1| |x2|, eps) is not what it computes). As in 1.13 the clamp is not differentiated:
/// below eps the gradient goes through the unclamped sum of squares (1.13 clamps it at eps^2 in
/// place under no_grad), so it is not the derivative of the value there. x1 and x2 broadcast; the result drops dim.
/// ValueError for shapes that do not broadcast or a dim out of range; TypeError for non-float
/// inputs or two dtypes.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});

/// pairwise_distance's arguments, as LibTorch's PairwiseDistanceFuncOptions.
struct PairwiseDistanceFuncOptions {
  WICK_ARG(double, p) = 2.0;
  WICK_ARG(double, eps) = 1e-6;
  WICK_ARG(bool, keepdim) = false;
};
/// The p-norm of x1 - x2 + eps over the last dim of the broadcast shape, as PyTorch 1.13
/// (eps is added to every difference, not clamped). x1 and x2 broadcast; 0-d inputs are a
/// ValueError.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options = {});

/// The p-norm distances between the rows i < j of a 2-d input (wick::pdist), as LibTorch's F::pdist.
inline Tensor pdist(const Tensor& input, double p = 2.0) { return wick::pdist(input, p); }

}  // namespace wick::nn::functional
