#pragma once
// MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool1d (torch.nn's), on F::max_pool1d,
// F::avg_pool1d, F::adaptive_avg_pool1d and F::adaptive_max_pool1d. Each takes [N, C, L] or an
// unbatched [C, L].
//
// LibTorch declares these beside the 2-d pooling layers in torch/nn/modules/pooling.h
// (MaxPoolImpl<1, ...>); wick keeps one concept per file, and gives the 1-d layers their own
// header. wick/nn/nn.h includes both.
#include <optional>
#include <string>
#include <tuple>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// MaxPool1d's options, as LibTorch: `MaxPool1dOptions(3).stride(2).padding(1)`. stride defaults
/// to kernel_size; a stride of 0 is refused by the constructor (ValueError, "stride should not
/// be zero", as LibTorch), although F::max_pool1d reads 0 as "stride = kernel_size".
struct MaxPool1dOptions {
  /* implicit */ MaxPool1dOptions(int64_t kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(int64_t, kernel_size);
  WICK_ARG(int64_t, stride);
  WICK_ARG(int64_t, padding) = 0;
  WICK_ARG(int64_t, dilation) = 1;
  WICK_ARG(bool, ceil_mode) = false;
};

/// F::max_pool1d with fixed geometry; prints as PyTorch's
/// "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)".
class MaxPool1dImpl : public Cloneable<MaxPool1dImpl> {
 public:
  /// kernel_size and stride `kernel_size`.
  explicit MaxPool1dImpl(int64_t kernel_size) : MaxPool1dImpl(MaxPool1dOptions(kernel_size)) {}
  /// ValueError for a kernel_size below 1 or a stride of 0 or below.
  explicit MaxPool1dImpl(const MaxPool1dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the position l of each maximum (PyTorch's return_indices=True,
  /// F::max_pool1d_with_indices), as LibTorch's forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const MaxPool1dOptions& options() const { return options_; }

 private:
  MaxPool1dOptions options_;
};
WICK_MODULE(MaxPool1d);

/// AvgPool1d's options, as LibTorch: `AvgPool1dOptions(3).stride(2).count_include_pad(false)`.
/// stride defaults to kernel_size; a stride of 0 is refused by the constructor, as MaxPool1d's.
struct AvgPool1dOptions {
  /* implicit */ AvgPool1dOptions(int64_t kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(int64_t, kernel_size);
  WICK_ARG(int64_t, stride);
  WICK_ARG(int64_t, padding) = 0;
  WICK_ARG(bool, ceil_mode) = false;
  WICK_ARG(bool, count_include_pad) = true;
  /// Every window's divisor, when set (F::avg_pool1d); 0 is refused by the constructor. PyTorch
  /// 1.13's AvgPool1d has no such argument; LibTorch's options carry one.
  WICK_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

/// F::avg_pool1d with fixed geometry; prints as PyTorch's
/// "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))" (1-tuples: PyTorch stores them so).
class AvgPool1dImpl : public Cloneable<AvgPool1dImpl> {
 public:
  explicit AvgPool1dImpl(int64_t kernel_size) : AvgPool1dImpl(AvgPool1dOptions(kernel_size)) {}
  /// ValueError for a kernel_size below 1, a stride of 0 or below, or a divisor_override of 0.
  explicit AvgPool1dImpl(const AvgPool1dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AvgPool1dOptions& options() const { return options_; }

 private:
  AvgPool1dOptions options_;
};
WICK_MODULE(AvgPool1d);

/// AdaptiveAvgPool1d's options, as LibTorch: `AdaptiveAvgPool1dOptions(5)`.
struct AdaptiveAvgPool1dOptions {
  /* implicit */ AdaptiveAvgPool1dOptions(int64_t output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(int64_t, output_size);
};

/// F::adaptive_avg_pool1d to a fixed output length; prints as PyTorch's
/// "AdaptiveAvgPool1d(output_size=5)". An output_size below 1 is refused when built
/// (ValueError), as F::adaptive_avg_pool1d would refuse it at every forward.
class AdaptiveAvgPool1dImpl : public Cloneable<AdaptiveAvgPool1dImpl> {
 public:
  explicit AdaptiveAvgPool1dImpl(int64_t output_size) : AdaptiveAvgPool1dImpl(AdaptiveAvgPool1dOptions(output_size)) {}
  explicit AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveAvgPool1dOptions& options() const { return options_; }

 private:
  AdaptiveAvgPool1dOptions options_;
};
WICK_MODULE(AdaptiveAvgPool1d);

/// AdaptiveMaxPool1d's options, as LibTorch: `AdaptiveMaxPool1dOptions(5)`.
struct AdaptiveMaxPool1dOptions {
  /* implicit */ AdaptiveMaxPool1dOptions(int64_t output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(int64_t, output_size);
};

/// F::adaptive_max_pool1d to a fixed output length; prints as PyTorch's
/// "AdaptiveMaxPool1d(output_size=5)". An output_size below 1 is refused when built
/// (ValueError).
class AdaptiveMaxPool1dImpl : public Cloneable<AdaptiveMaxPool1dImpl> {
 public:
  explicit AdaptiveMaxPool1dImpl(int64_t output_size) : AdaptiveMaxPool1dImpl(AdaptiveMaxPool1dOptions(output_size)) {}
  explicit AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the position l of each maximum (PyTorch's return_indices=True), as
  /// LibTorch's forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveMaxPool1dOptions& options() const { return options_; }

 private:
  AdaptiveMaxPool1dOptions options_;
};
WICK_MODULE(AdaptiveMaxPool1d);

}  // namespace wick::nn
