#pragma once
// The Connectionist Temporal Classification loss (torch.nn.functional.ctc_loss) with LibTorch's
// names and PyTorch 1.13's semantics: `F::ctc_loss(log_probs, targets, input_lengths,
// target_lengths, F::CTCLossFuncOptions().blank(0).zero_infinity(true))`. The options serve the
// CTCLoss layer too (wick/nn/modules/loss_ctc.h). nn/src/functional_ctc.cpp, Note [CTC as a
// composite].
#include <cstdint>

#include "wick/nn/arg.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// CTCLoss's and F::ctc_loss's options, as LibTorch's CTCLossOptions.
struct CTCLossOptions {
  /// The blank label's class index, in [0, C).
  WICK_ARG(int64_t, blank) = 0;
  /// kMean divides each sequence's loss by its target length (at least 1), then averages over the
  /// batch, as PyTorch; kSum sums the losses; kNone returns them ([N], or 0-d when unbatched).
  WICK_ARG(Reduction, reduction) = kMean;
  /// Replace an infinite loss (an impossible alignment: the input too short for the target) and
  /// its gradient with 0.
  WICK_ARG(bool, zero_infinity) = false;
};

namespace functional {

using CTCLossFuncOptions = CTCLossOptions;

/// The negative log likelihood of each target sequence under the per-step class distributions
/// log_probs, summed over every alignment (the alpha recursion of Graves et al. 2006, in log
/// space), as torch.nn.functional.ctc_loss of PyTorch 1.13:
///   log_probs       [T, N, C] (or unbatched [T, C]), float32 or float64: log-probabilities, as
///                   log_softmax gives them (never normalized here);
///   targets         int64, padded [N, S] (row n's first target_lengths[n] entries are its labels;
///                   the rest is ignored) or the N targets concatenated, 1-d of
///                   sum(target_lengths) entries; labels in [0, C) and never the blank;
///   input_lengths   int64, N entries in [0, T]: sequence n uses steps [0, input_lengths[n]);
///   target_lengths  int64, N entries in [0, S] (padded).
/// The targets and lengths are read on the host, from any device. The loss is differentiable in
/// log_probs, twice (a composite of differentiable ops), on every device. The gradient is
/// PyTorch's: it adds exp(log_probs[t, n, c]) * (the loss's gradient) for t < input_lengths[n] to
/// the exact derivative, i.e. it is the exact gradient w.r.t. the logits whose log_softmax
/// log_probs is, as PyTorch's kernels compute it; through log_softmax both agree. An input of
/// length 0 has loss 0 for an empty target and inf otherwise (PyTorch 1.13 returns memory it
/// never wrote there). An infinite loss without zero_infinity has the gradient exp(log_probs)
/// where PyTorch's is NaN. Bad arguments are typed wick::Errors naming ctc_loss and the shapes:
/// TypeError for a dtype, ValueError for a shape, a length or the blank, IndexError for a label
/// out of range.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options = {});

}  // namespace functional

}  // namespace wick::nn
