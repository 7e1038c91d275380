#pragma once
// The margin and likelihood losses of torch.nn.functional: triplet_margin_loss,
// multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, poisson_nll_loss and
// gaussian_nll_loss, with PyTorch 1.13's names, argument order, defaults and values
// (nn/src/functional_loss_margin.cpp, nn/src/functional_loss_likelihood.cpp).
//
// Each is composed of differentiable ops, so it is twice differentiable in every floating tensor
// argument and runs on every device with no kernel of its own. The reduction is kNone, kMean
// (the default) or kSum. Every argument is checked before anything is computed: an undefined
// tensor, a shape, dtype or device that does not fit, a class index out of range or an option out
// of range is a typed wick::Error naming the loss and the shapes. Where wick differs from PyTorch
// 1.13: docs/modules.md, "Losses".
#include <cstdint>

#include "wick/nn/functional.h"

namespace wick::nn::functional {

/// max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise_distance (the
/// p-norm of a - b + eps over the last dim); with swap, d(anchor, negative) is replaced by
/// min(d(anchor, negative), d(positive, negative)). The three inputs have one dim count (as
/// PyTorch: ValueError otherwise) and broadcast; a [N, D] triplet gives [N] losses, a [D] or 0-d
/// one a 0-d loss. p is any order norm() takes (not NaN).
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin = 1.0,
                           double p = 2.0, double eps = 1e-6, bool swap = false, Reduction reduction = Reduction::Mean);

/// The multi-class hinge: for each sample i of input [N, C] (or [C], or 0-d) with class y =
/// target[i] (int64, in [0, C)), sum over c != y of w[y] * max(0, margin - x[i, y] + x[i, c])^p /
/// C, with p 1 or 2 (ValueError otherwise) and weight [C] (w = 1 when undefined). target is [N]
/// (or a 0-d index, which makes the unreduced loss 0-d, as PyTorch).
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p = 1, double margin = 1.0,
                         const Tensor& weight = {}, Reduction reduction = Reduction::Mean);

/// The multi-label hinge: target (int64, input's shape [N, C] or [C]) lists each sample's
/// classes, ended by the first -1 (entries after it are ignored but must be in [-1, C) too, as
/// PyTorch checks). Sample i's loss is the sum over listed classes j (a class listed twice counts
/// twice) and unlisted classes c of max(0, 1 - x[i, j] + x[i, c]), divided by C. A [C] input gives a
/// 0-d loss. The targets are read on the host (one copy); the pairs are an [N, C, C] tensor.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

/// -(t log(sigmoid(x)) + (1 - t) log(sigmoid(-x))) times weight, averaged over the last (class)
/// dim: input [N, C] gives [N] losses, [C] a 0-d one (0-d input: ValueError). target has input's
/// shape and dtype (or int64 labels); weight broadcasts to input (typically [C]).
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                   Reduction reduction = Reduction::Mean);

/// The Poisson negative log likelihood of target given the rate input: exp(input) - target *
/// input with log_input (input is the log rate), input - target * log(input + eps) without. full
/// adds Stirling's term target * log(target) - target + 0.5 * log(2 pi target) where target > 1.
/// input and target have one shape and dtype.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true, bool full = false,
                        double eps = 1e-8, Reduction reduction = Reduction::Mean);

/// The Gaussian negative log likelihood 0.5 * (log(v) + (input - target)^2 / v), plus 0.5 *
/// log(2 pi) with full, where v is var clamped below at eps. As PyTorch 1.13 the clamp is not
/// differentiated (the gradient in var is that of the formula at v). var has input's shape, or
/// input's shape without its last dim, or that with a last dim of 1 (one variance per sample,
/// broadcast over the last dim); anything else, or a negative entry, is a ValueError (one host
/// read). input and target have one shape and dtype.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full = false,
                         double eps = 1e-6, Reduction reduction = Reduction::Mean);

}  // namespace wick::nn::functional
