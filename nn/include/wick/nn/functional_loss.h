#pragma once
// The losses of torch.nn.functional beyond nll_loss, cross_entropy, mse_loss, l1_loss and
// binary_cross_entropy_with_logits (functional.h): binary_cross_entropy, smooth_l1_loss,
// huber_loss, kl_div, soft_margin_loss, margin_ranking_loss, hinge_embedding_loss,
// cosine_embedding_loss, with PyTorch 1.13's names, defaults and values (nn/src/functional_loss_more.cpp).
//
// Each is composed of differentiable ops (binary_cross_entropy of one node whose backward is
// written on them), so it is twice differentiable in every floating tensor argument and runs on
// every device. The reduction defaults to mean; kBatchMean is kl_div's only (ValueError
// elsewhere). Every argument is checked before anything is computed: an undefined tensor, shapes
// that differ, a non-float input or an out-of-range option is a typed wick::Error naming the loss.
// Inputs and targets must have one shape where PyTorch broadcasts some of them (with a warning
// or silently): docs/modules.md, "Losses".
#include "wick/nn/functional.h"

namespace wick::nn {
namespace detail {
/// ValueError naming `op` unless r is kNone, kMean or kSum (or kBatchMean, where batchmean_ok).
void check_reduction(const char* op, Reduction r, bool batchmean_ok = false);
}  // namespace detail
}  // namespace wick::nn

namespace wick::nn::functional {

/// -w * (t * log(x) + (1 - t) * log(1 - x)), each log clamped at -100 as PyTorch, so x = 0 or
/// 1 gives a finite loss. input holds probabilities in [0, 1] (ValueError otherwise: one host
/// read), target has input's shape and dtype. weight broadcasts to input. The gradient is
/// PyTorch's: w * (x - t) / max(x * (1 - x), eps) for the input (eps = float(1e-12), as PyTorch), w * (log(1 - x) -
/// log(x)) for the target (infinite at 0 and 1), and the unweighted loss for weight (which PyTorch refuses to
/// differentiate).
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = Reduction::Mean);
/// d = input - target: 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere. beta = 0 is
/// l1_loss; beta < 0 is a ValueError.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
/// d = input - target: 0.5 d^2 where |d| < delta, delta * (|d| - 0.5 delta) elsewhere. delta
/// must be > 0 (ValueError).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean, double delta = 1.0);
/// The Kullback-Leibler divergence of input (log-probabilities) from target: target *
/// (log(target) - input), 0 where target is 0 (PyTorch's xlogy); with log_target, target holds
/// log-probabilities: exp(target) * (target - input). kBatchMean divides the sum by input.size(0)
/// (the mathematical KL divergence per sample); kMean, the default as in PyTorch, divides by the
/// element count.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
              bool log_target = false);
/// log(1 + exp(-target * input)), target holding 1 or -1; computed without overflow.
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
/// max(0, -target * (input1 - input2) + margin), target holding 1 or -1; the three of one shape.
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                           Reduction reduction = Reduction::Mean);
/// input where target != -1, plus max(0, margin - input) where target != 1 (PyTorch's formula,
/// so a target other than 1 and -1 gets both terms).
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            Reduction reduction = Reduction::Mean);
/// cos = sum(x1 * x2) / sqrt((sum(x1^2) + eps) * (sum(x2^2) + eps)) over the last dim of
/// input1, input2 ([N, D] with target [N], or [D] with a 0-d target); loss 1 - cos where target
/// is 1, max(0, cos - margin) where it is -1, 0 elsewhere. eps is PyTorch's float(1e-12).
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                             Reduction reduction = Reduction::Mean);

}  // namespace wick::nn::functional
