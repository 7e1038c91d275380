#pragma once
// torch.cdist: the p-norm distances between the rows of two batches of matrices, composed of
// differentiable ops (autograd/src/ops_cdist.cpp).
#include <cstdint>
#include <optional>

#include "wick/core/tensor.h"

namespace wick {

/// out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p for x1 [B..., P, M] and x2 [B..., R, M]
/// (batch dims broadcast): [B..., P, R], as torch.cdist in PyTorch 1.13, for any p >= 0 (0 counts
/// the nonzero differences, inf takes the largest). The gradients are PyTorch's _cdist_backward:
/// 0 where the distance is 0 (p > 0), sign(diff) for p = 1, 0 for p = 0, 0 at a zero difference
/// for p < 1, and for p = inf the whole gradient to each difference whose magnitude ties the
/// largest. Differentiable twice (PyTorch's _cdist_backward is not).
///
/// `compute_mode` is LibTorch's (0 or none: matrix products for p = 2 once P or R is over 25,
/// 1: always, 2: never) and is checked but not used: wick always takes the differences, which
/// is PyTorch's compute_mode 2 (exact where |x|^2 - 2 x.y + |y|^2 cancels; it holds a
/// [B..., P, R, M] temporary). ValueError for inputs under 2 dims, column counts that differ,
/// batch dims that do not broadcast, p < 0 or NaN, a compute_mode other than 0, 1 or 2;
/// TypeError for non-floating inputs or two dtypes.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0, std::optional<int64_t> compute_mode = std::nullopt);

}  // namespace wick
