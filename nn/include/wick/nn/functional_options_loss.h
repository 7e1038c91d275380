#pragma once
// The losses' options structs and LibTorch 1.13's functional-options overloads of the losses:
//
//   F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().ignore_index(0).label_smoothing(0.1));
//   F::mse_loss(x, y, F::MSELossFuncOptions(kSum));
//
// The structs are the loss layers' options (wick/nn/modules/loss.h, loss_more.h), defined here
// so that functional.h, which includes this header at its end, needs no module header; the
// `...FuncOptions` names are aliases of them, as in LibTorch (with its spellings: the functional
// KLDivFuncOptions and Multilabel... next to the layers' KLDivLossOptions and MultiLabel...).
// Each overload calls the positional function of the same name with the options' fields
// (nn/src/functional_options_loss.cpp): same values, gradients, devices and errors.
//
// Where wick differs from LibTorch 1.13 (docs/modules.md, "The loss functions with LibTorch's options"):
// - The options argument has no default: `F::mse_loss(x, y)` is the positional call with its
//   defaults (the same loss), and a default on both overloads would make that call ambiguous.
//   So `F::mse_loss(x, y, {})` is the positional call with Reduction{}, which is kMean (the
//   enum's first value) as LibTorch's default options; but where the third argument is a margin,
//   p or flag, `{}` is that argument's zero (hinge_embedding_loss: margin 0, not LibTorch's 1):
//   write the FuncOptions() or leave the argument out.
// - A reduction is one enum (Reduction), so a loss refuses kBatchMean when called (ValueError
//   naming it) where LibTorch's variant refuses it when compiled; kl_div alone takes it.
// - L1LossOptions, SoftMarginLossOptions and MultiLabelMarginLossOptions are one type,
//   MSELossOptions (a reduction only), where LibTorch has three alike structs.
// - F::smooth_l1_loss honours options.beta(); LibTorch 1.13's ignores it and takes a trailing
//   `beta` argument instead, which wick takes too (see its contract).
#include <cstdint>
#include <optional>

#include "wick/nn/arg.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// The options of the losses with a reduction only (`MSELoss(kSum)` as in LibTorch).
struct MSELossOptions {
  /* implicit */ MSELossOptions(Reduction reduction = kMean) : reduction_(reduction) {}  // NOLINT
  WICK_ARG(Reduction, reduction);
};
using L1LossOptions = MSELossOptions;
using SoftMarginLossOptions = MSELossOptions;
/// MultiLabelMarginLoss takes a reduction only (`MultiLabelMarginLoss(kSum)` as in LibTorch).
using MultiLabelMarginLossOptions = MSELossOptions;

struct NLLLossOptions {
  /// One weight per class ([C]), or undefined.
  WICK_ARG(Tensor, weight);
  WICK_ARG(int64_t, ignore_index) = -100;
  WICK_ARG(Reduction, reduction) = kMean;
};

struct CrossEntropyLossOptions {
  WICK_ARG(Tensor, weight);
  WICK_ARG(int64_t, ignore_index) = -100;
  WICK_ARG(Reduction, reduction) = kMean;
  /// In [0, 1].
  WICK_ARG(double, label_smoothing) = 0.0;
};

struct BCEWithLogitsLossOptions {
  /// Multiplies each element's loss (broadcast to the input).
  WICK_ARG(Tensor, weight);
  WICK_ARG(Reduction, reduction) = kMean;
  /// Weighs the positive term, one per class (broadcast over the last dim).
  WICK_ARG(Tensor, pos_weight);
};

struct BCELossOptions {
  WICK_ARG(Tensor, weight);
  WICK_ARG(Reduction, reduction) = kMean;
};

struct SmoothL1LossOptions {
  /* implicit */ SmoothL1LossOptions(Reduction reduction = kMean) : reduction_(reduction) {}  // NOLINT
  WICK_ARG(Reduction, reduction);
  /// >= 0; 0 is L1Loss.
  WICK_ARG(double, beta) = 1.0;
};

struct HuberLossOptions {
  /* implicit */ HuberLossOptions(Reduction reduction = kMean) : reduction_(reduction) {}  // NOLINT
  WICK_ARG(Reduction, reduction);
  /// > 0.
  WICK_ARG(double, delta) = 1.0;
};

struct KLDivLossOptions {
  /* implicit */ KLDivLossOptions(Reduction reduction = kMean) : reduction_(reduction) {}  // NOLINT
  /// kNone, kMean (PyTorch's default: over all elements), kSum or kBatchMean (over the batch).
  WICK_ARG(Reduction, reduction);
  WICK_ARG(bool, log_target) = false;
};

/// MarginRankingLoss's and CosineEmbeddingLoss's (margin 0 by default).
struct MarginRankingLossOptions {
  WICK_ARG(double, margin) = 0.0;
  WICK_ARG(Reduction, reduction) = kMean;
};
using CosineEmbeddingLossOptions = MarginRankingLossOptions;

struct HingeEmbeddingLossOptions {
  WICK_ARG(double, margin) = 1.0;
  WICK_ARG(Reduction, reduction) = kMean;
};

struct TripletMarginLossOptions {
  WICK_ARG(double, margin) = 1.0;
  /// The order of the pairwise distance's norm.
  WICK_ARG(double, p) = 2.0;
  /// Added to every difference before the norm.
  WICK_ARG(double, eps) = 1e-6;
  /// Use min(d(anchor, negative), d(positive, negative)) as the negative distance.
  WICK_ARG(bool, swap) = false;
  WICK_ARG(Reduction, reduction) = kMean;
};

struct MultiMarginLossOptions {
  /// 1 or 2.
  WICK_ARG(int64_t, p) = 1;
  WICK_ARG(double, margin) = 1.0;
  /// One weight per class ([C]), or undefined.
  WICK_ARG(Tensor, weight);
  WICK_ARG(Reduction, reduction) = kMean;
};

struct MultiLabelSoftMarginLossOptions {
  /// Broadcast to the input (typically one per class, [C]), or undefined.
  WICK_ARG(Tensor, weight);
  WICK_ARG(Reduction, reduction) = kMean;
};

struct PoissonNLLLossOptions {
  /// The input is the log of the rate.
  WICK_ARG(bool, log_input) = true;
  /// Add Stirling's approximation of log(target!).
  WICK_ARG(bool, full) = false;
  /// Added to the rate under the log when log_input is false.
  WICK_ARG(double, eps) = 1e-8;
  WICK_ARG(Reduction, reduction) = kMean;
};

namespace functional {

using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using L1LossFuncOptions = L1LossOptions;
using MSELossFuncOptions = MSELossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;

// Each of these is the positional function of its name (functional.h, functional_loss.h,
// functional_loss_more.h) called with the options' fields, with its contract and its errors.

/// nll_loss(input, target, weight, reduction, ignore_index).
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options);
/// cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options);
/// mse_loss(input, target, reduction).
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options);
/// l1_loss(input, target, reduction).
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options);
/// binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options);
/// binary_cross_entropy(input, target, weight, reduction).
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options);
/// smooth_l1_loss(input, target, reduction, beta) with beta = options.beta(). The trailing
/// `beta` is LibTorch 1.13's signature (whose functional reads that and ignores options.beta()):
/// given, it is the beta used, and options.beta() must be it or the default 1.0 (ValueError
/// naming smooth_l1_loss otherwise: two different betas).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options,
                      std::optional<double> beta = std::nullopt);
/// huber_loss(input, target, reduction, delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options);
/// kl_div(input, target, reduction, log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options);
/// soft_margin_loss(input, target, reduction).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options);
/// margin_ranking_loss(input1, input2, target, margin, reduction).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options);
/// hinge_embedding_loss(input, target, margin, reduction).
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options);
/// cosine_embedding_loss(input1, input2, target, margin, reduction).
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options);
/// triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction).
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options);
/// multi_margin_loss(input, target, p, margin, weight, reduction).
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options);
/// multilabel_margin_loss(input, target, reduction).
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options);
/// multilabel_soft_margin_loss(input, target, weight, reduction).
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options);
/// poisson_nll_loss(input, target, log_input, full, eps, reduction).
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options);

}  // namespace functional

}  // namespace wick::nn
