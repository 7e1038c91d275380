#pragma once
// Fold and Unfold (torch.nn's), the layers around F::fold and F::unfold
// (wick/nn/functional_fold.h).
//
// LibTorch declares them in torch/nn/modules/fold.h; so does wick. wick/nn/nn.h includes it.
#include <string>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/fold_options.h"  // FoldOptions, UnfoldOptions

namespace wick::nn {

/// F::fold with fixed geometry: [N, C * kH * kW, L] (or [C * kH * kW, L]) -> [N, C, H, W]; prints
/// as PyTorch's "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)".
class FoldImpl : public Cloneable<FoldImpl> {
 public:
  FoldImpl(Int2 output_size, Int2 kernel_size) : FoldImpl(FoldOptions(output_size, kernel_size)) {}
  /// ValueError for an output_size, kernel_size, dilation or stride below 1 or a negative padding.
  explicit FoldImpl(const FoldOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const FoldOptions& options() const { return options_; }

 private:
  FoldOptions options_;
};
WICK_MODULE(Fold);

/// F::unfold with fixed geometry: [N, C, H, W] (or [C, H, W]) -> [N, C * kH * kW, L]; prints as
/// PyTorch's "Unfold(kernel_size=3, dilation=1, padding=0, stride=2)".
class UnfoldImpl : public Cloneable<UnfoldImpl> {
 public:
  explicit UnfoldImpl(Int2 kernel_size) : UnfoldImpl(UnfoldOptions(kernel_size)) {}
  /// ValueError for a kernel_size, dilation or stride below 1 or a negative padding.
  explicit UnfoldImpl(const UnfoldOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const UnfoldOptions& options() const { return options_; }

 private:
  UnfoldOptions options_;
};
WICK_MODULE(Unfold);

}  // namespace wick::nn
