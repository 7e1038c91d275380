#pragma once
// The loss modules of torch.nn: MSELoss, L1Loss, NLLLoss, CrossEntropyLoss, BCEWithLogitsLoss,
// BCELoss, SmoothL1Loss, HuberLoss, KLDivLoss, SoftMarginLoss, MarginRankingLoss,
// HingeEmbeddingLoss, CosineEmbeddingLoss, with LibTorch's options structs (defined in
// wick/nn/functional_options_loss.h, where the F:: overloads that take them are):
//
//   nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().label_smoothing(0.1).ignore_index(0));
//   Tensor l = loss(logits, targets);   // forward(input, target): F::cross_entropy with the options
//
// Each forward is its functional (functional.h, functional_loss.h) called with the options, so a
// module computes exactly what F:: does. A class weight (and BCEWithLogitsLoss's pos_weight) is a
// buffer named "weight" ("pos_weight"), as PyTorch registers it: it is in state_dict() and
// named_buffers() when given (a None entry otherwise), moves with to(), and forward reads the
// buffer, not the options. They print as PyTorch's repr: "CrossEntropyLoss()". The reduction and
// the options are checked when the module is built (ValueError naming it) and again by the
// functional at every call.
#include <cstdint>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/functional_options_loss.h"  // the options structs

namespace wick::nn {

/// F::mse_loss(input, target, reduction).
class MSELossImpl : public Cloneable<MSELossImpl> {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const MSELossOptions& options() const { return options_; }

 private:
  MSELossOptions options_;
};
WICK_MODULE(MSELoss);

/// F::l1_loss(input, target, reduction).
class L1LossImpl : public Cloneable<L1LossImpl> {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const L1LossOptions& options() const { return options_; }

 private:
  L1LossOptions options_;
};
WICK_MODULE(L1Loss);

/// F::nll_loss(input, target, weight, reduction, ignore_index); weight is a buffer.
class NLLLossImpl : public Cloneable<NLLLossImpl> {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const Tensor& weight() const { return buffer(weight_); }
  const NLLLossOptions& options() const { return options_; }

 private:
  NLLLossOptions options_;
  BufferSlot weight_;
};
WICK_MODULE(NLLLoss);

/// F::cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing); weight is
/// a buffer.
class CrossEntropyLossImpl : public Cloneable<CrossEntropyLossImpl> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const Tensor& weight() const { return buffer(weight_); }
  const CrossEntropyLossOptions& options() const { return options_; }

 private:
  CrossEntropyLossOptions options_;
  BufferSlot weight_;
};
WICK_MODULE(CrossEntropyLoss);

/// F::binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight); weight and
/// pos_weight are buffers.
class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const Tensor& weight() const { return buffer(weight_); }
  const Tensor& pos_weight() const { return buffer(pos_weight_); }
  const BCEWithLogitsLossOptions& options() const { return options_; }

 private:
  BCEWithLogitsLossOptions options_;
  BufferSlot weight_, pos_weight_;
};
WICK_MODULE(BCEWithLogitsLoss);

/// F::binary_cross_entropy(input, target, weight, reduction); weight is a buffer.
class BCELossImpl : public Cloneable<BCELossImpl> {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const Tensor& weight() const { return buffer(weight_); }
  const BCELossOptions& options() const { return options_; }

 private:
  BCELossOptions options_;
  BufferSlot weight_;
};
WICK_MODULE(BCELoss);

/// F::smooth_l1_loss(input, target, reduction, beta).
class SmoothL1LossImpl : public Cloneable<SmoothL1LossImpl> {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const SmoothL1LossOptions& options() const { return options_; }

 private:
  SmoothL1LossOptions options_;
};
WICK_MODULE(SmoothL1Loss);

/// F::huber_loss(input, target, reduction, delta).
class HuberLossImpl : public Cloneable<HuberLossImpl> {
 public:
  explicit HuberLossImpl(const HuberLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const HuberLossOptions& options() const { return options_; }

 private:
  HuberLossOptions options_;
};
WICK_MODULE(HuberLoss);

/// F::kl_div(input, target, reduction, log_target).
class KLDivLossImpl : public Cloneable<KLDivLossImpl> {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const KLDivLossOptions& options() const { return options_; }

 private:
  KLDivLossOptions options_;
};
WICK_MODULE(KLDivLoss);

/// F::soft_margin_loss(input, target, reduction).
class SoftMarginLossImpl : public Cloneable<SoftMarginLossImpl> {
 public:
  explicit SoftMarginLossImpl(const SoftMarginLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const SoftMarginLossOptions& options() const { return options_; }

 private:
  SoftMarginLossOptions options_;
};
WICK_MODULE(SoftMarginLoss);

/// F::margin_ranking_loss(input1, input2, target, margin, reduction).
class MarginRankingLossImpl : public Cloneable<MarginRankingLossImpl> {
 public:
  explicit MarginRankingLossImpl(const MarginRankingLossOptions& options = {});
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  const MarginRankingLossOptions& options() const { return options_; }

 private:
  MarginRankingLossOptions options_;
};
WICK_MODULE(MarginRankingLoss);

/// F::hinge_embedding_loss(input, target, margin, reduction).
class HingeEmbeddingLossImpl : public Cloneable<HingeEmbeddingLossImpl> {
 public:
  explicit HingeEmbeddingLossImpl(const HingeEmbeddingLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const HingeEmbeddingLossOptions& options() const { return options_; }

 private:
  HingeEmbeddingLossOptions options_;
};
WICK_MODULE(HingeEmbeddingLoss);

/// F::cosine_embedding_loss(input1, input2, target, margin, reduction).
class CosineEmbeddingLossImpl : public Cloneable<CosineEmbeddingLossImpl> {
 public:
  explicit CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& options = {});
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  const CosineEmbeddingLossOptions& options() const { return options_; }

 private:
  CosineEmbeddingLossOptions options_;
};
WICK_MODULE(CosineEmbeddingLoss);

}  // namespace wick::nn
