#pragma once
// MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d (torch.nn's), on F::max_pool3d,
// F::avg_pool3d, F::adaptive_avg_pool3d and F::adaptive_max_pool3d. Each takes [N, C, D, H, W] or an unbatched [C, D,
// H, W].
//
// LibTorch declares these beside the 2-d pooling layers in torch/nn/modules/pooling.h; wick keeps
// one concept per file, as for the 1-d layers. wick/nn/nn.h includes it.
#include <optional>
#include <string>
#include <tuple>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// MaxPool3d's options, as LibTorch: `MaxPool3dOptions(3).stride(2).padding(1)`. stride defaults
/// to kernel_size; a stride with a 0 is refused by the constructor (ValueError, as LibTorch).
struct MaxPool3dOptions {
  /* implicit */ MaxPool3dOptions(Int3 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(Int3, kernel_size);
  WICK_ARG(Int3, stride);
  WICK_ARG(Int3, padding) = 0;
  WICK_ARG(Int3, dilation) = 1;
  WICK_ARG(bool, ceil_mode) = false;
};

/// F::max_pool3d with fixed geometry; prints as PyTorch's
/// "MaxPool3d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)" (a size whose
/// three entries are equal prints as one number, as PyTorch prints an int argument).
class MaxPool3dImpl : public Cloneable<MaxPool3dImpl> {
 public:
  explicit MaxPool3dImpl(const MaxPool3dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the flat position d H W + h W + w of each maximum (PyTorch's
  /// return_indices=True, F::max_pool3d_with_indices), as LibTorch's forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const MaxPool3dOptions& options() const { return options_; }

 private:
  MaxPool3dOptions options_;
};
WICK_MODULE(MaxPool3d);

/// AvgPool3d's options, as LibTorch: `AvgPool3dOptions(3).stride(2).count_include_pad(false)`.
struct AvgPool3dOptions {
  /* implicit */ AvgPool3dOptions(Int3 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(Int3, kernel_size);
  WICK_ARG(Int3, stride);
  WICK_ARG(Int3, padding) = 0;
  WICK_ARG(bool, ceil_mode) = false;
  WICK_ARG(bool, count_include_pad) = true;
  /// Every window's divisor, when set (F::avg_pool3d); 0 is refused by the constructor.
  WICK_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

/// F::avg_pool3d with fixed geometry; prints as PyTorch's
/// "AvgPool3d(kernel_size=3, stride=3, padding=0)".
class AvgPool3dImpl : public Cloneable<AvgPool3dImpl> {
 public:
  /// ValueError for a kernel_size below 1, a stride with a 0, or a divisor_override of 0.
  explicit AvgPool3dImpl(const AvgPool3dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AvgPool3dOptions& options() const { return options_; }

 private:
  AvgPool3dOptions options_;
};
WICK_MODULE(AvgPool3d);

/// AdaptiveAvgPool3d's options, as LibTorch: `AdaptiveAvgPool3dOptions({2, 3, 4})`. (LibTorch's
/// may leave entries out; wick's takes three sizes.)
struct AdaptiveAvgPool3dOptions {
  /* implicit */ AdaptiveAvgPool3dOptions(Int3 output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(Int3, output_size);
};

/// F::adaptive_avg_pool3d to a fixed output size; prints as PyTorch's
/// "AdaptiveAvgPool3d(output_size=(2, 3, 4))". A size below 1 is refused when built (ValueError).
class AdaptiveAvgPool3dImpl : public Cloneable<AdaptiveAvgPool3dImpl> {
 public:
  explicit AdaptiveAvgPool3dImpl(const AdaptiveAvgPool3dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveAvgPool3dOptions& options() const { return options_; }

 private:
  AdaptiveAvgPool3dOptions options_;
};
WICK_MODULE(AdaptiveAvgPool3d);

/// AdaptiveMaxPool3d's options, as LibTorch: `AdaptiveMaxPool3dOptions({2, 3, 4})`. (LibTorch's
/// may leave entries out; wick's takes three sizes, as AdaptiveAvgPool3dOptions.)
struct AdaptiveMaxPool3dOptions {
  /* implicit */ AdaptiveMaxPool3dOptions(Int3 output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(Int3, output_size);
};

/// F::adaptive_max_pool3d to a fixed output size; prints as PyTorch's
/// "AdaptiveMaxPool3d(output_size=(2, 3, 4))". A size below 1 is refused when built (ValueError).
class AdaptiveMaxPool3dImpl : public Cloneable<AdaptiveMaxPool3dImpl> {
 public:
  explicit AdaptiveMaxPool3dImpl(const AdaptiveMaxPool3dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the flat d H W + h W + w position of each maximum (PyTorch's
  /// return_indices=True), as LibTorch's forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveMaxPool3dOptions& options() const { return options_; }

 private:
  AdaptiveMaxPool3dOptions options_;
};
WICK_MODULE(AdaptiveMaxPool3d);

}  // namespace wick::nn
