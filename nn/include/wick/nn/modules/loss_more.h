#pragma once
// The margin and likelihood loss modules of torch.nn: TripletMarginLoss, MultiMarginLoss,
// MultiLabelMarginLoss, MultiLabelSoftMarginLoss, PoissonNLLLoss and GaussianNLLLoss, with
// LibTorch's options structs (all but GaussianNLLLossOptions defined in
// wick/nn/functional_options_loss.h, where the F:: overloads that take them are):
//
//   nn::TripletMarginLoss loss(nn::TripletMarginLossOptions().margin(0.5).swap(true));
//   Tensor l = loss(anchor, positive, negative);   // F::triplet_margin_loss with the options
//
// Each forward is its functional (functional_loss_more.h) called with the options, so a module
// computes exactly what F:: does. MultiMarginLoss's and MultiLabelSoftMarginLoss's weight is a
// buffer named "weight", as PyTorch registers it (a None entry when not given). They print as
// PyTorch's repr: "TripletMarginLoss()". The reduction and the options are checked when the
// module is built (ValueError naming it) and again by the functional at every call.
#include <cstdint>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/functional_options_loss.h"  // the options structs
#include "wick/nn/modules/loss.h"

namespace wick::nn {

/// PyTorch's GaussianNLLLoss arguments (LibTorch 1.13 has no such module).
struct GaussianNLLLossOptions {
  /// Add 0.5 * log(2 pi).
  WICK_ARG(bool, full) = false;
  /// The variance is clamped below at eps.
  WICK_ARG(double, eps) = 1e-6;
  WICK_ARG(Reduction, reduction) = kMean;
};

/// F::triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction).
class TripletMarginLossImpl : public Cloneable<TripletMarginLossImpl> {
 public:
  explicit TripletMarginLossImpl(const TripletMarginLossOptions& options = {});
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  const TripletMarginLossOptions& options() const { return options_; }

 private:
  TripletMarginLossOptions options_;
};
WICK_MODULE(TripletMarginLoss);

/// F::multi_margin_loss(input, target, p, margin, weight, reduction); weight is a buffer.
class MultiMarginLossImpl : public Cloneable<MultiMarginLossImpl> {
 public:
  explicit MultiMarginLossImpl(const MultiMarginLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const Tensor& weight() const { return buffer(weight_); }
  const MultiMarginLossOptions& options() const { return options_; }

 private:
  MultiMarginLossOptions options_;
  BufferSlot weight_;
};
WICK_MODULE(MultiMarginLoss);

/// F::multilabel_margin_loss(input, target, reduction).
class MultiLabelMarginLossImpl : public Cloneable<MultiLabelMarginLossImpl> {
 public:
  explicit MultiLabelMarginLossImpl(const MultiLabelMarginLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const MultiLabelMarginLossOptions& options() const { return options_; }

 private:
  MultiLabelMarginLossOptions options_;
};
WICK_MODULE(MultiLabelMarginLoss);

/// F::multilabel_soft_margin_loss(input, target, weight, reduction); weight is a buffer.
class MultiLabelSoftMarginLossImpl : public Cloneable<MultiLabelSoftMarginLossImpl> {
 public:
  explicit MultiLabelSoftMarginLossImpl(const MultiLabelSoftMarginLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const Tensor& weight() const { return buffer(weight_); }
  const MultiLabelSoftMarginLossOptions& options() const { return options_; }

 private:
  MultiLabelSoftMarginLossOptions options_;
  BufferSlot weight_;
};
WICK_MODULE(MultiLabelSoftMarginLoss);

/// F::poisson_nll_loss(input, target, log_input, full, eps, reduction).
class PoissonNLLLossImpl : public Cloneable<PoissonNLLLossImpl> {
 public:
  explicit PoissonNLLLossImpl(const PoissonNLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  const PoissonNLLLossOptions& options() const { return options_; }

 private:
  PoissonNLLLossOptions options_;
};
WICK_MODULE(PoissonNLLLoss);

/// F::gaussian_nll_loss(input, target, var, full, eps, reduction).
class GaussianNLLLossImpl : public Cloneable<GaussianNLLLossImpl> {
 public:
  explicit GaussianNLLLossImpl(const GaussianNLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var);
  const GaussianNLLLossOptions& options() const { return options_; }

 private:
  GaussianNLLLossOptions options_;
};
WICK_MODULE(GaussianNLLLoss);

}  // namespace wick::nn
