#pragma once
// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, AdaptiveMaxPool2d (torch.nn's).
#include <optional>
#include <string>
#include <tuple>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// MaxPool2d's options, as LibTorch: `MaxPool2dOptions(3).stride(2).padding(1)`. stride
/// defaults to kernel_size; a stride of 0 is refused by the constructor (ValueError, "stride
/// should not be zero", as LibTorch), although F::max_pool2d reads 0 as "stride = kernel_size".
struct MaxPool2dOptions {
  /* implicit */ MaxPool2dOptions(Int2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(Int2, kernel_size);
  WICK_ARG(Int2, stride);
  WICK_ARG(Int2, padding) = 0;
  WICK_ARG(Int2, dilation) = 1;
  WICK_ARG(bool, ceil_mode) = false;
};

/// F::max_pool2d with fixed geometry.
class MaxPool2dImpl : public Cloneable<MaxPool2dImpl> {
 public:
  /// kernel_size and stride `kernel_size`.
  explicit MaxPool2dImpl(Int2 kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  /// ValueError for a kernel_size or a stride with a zero.
  explicit MaxPool2dImpl(const MaxPool2dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the flat h * W + w position of each maximum (PyTorch's return_indices=True,
  /// F::max_pool2d_with_indices), as LibTorch's forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const MaxPool2dOptions& options() const { return options_; }

 private:
  MaxPool2dOptions options_;
};
WICK_MODULE(MaxPool2d);

/// AvgPool2d's options, as LibTorch: `AvgPool2dOptions(3).stride(2).count_include_pad(false)`.
/// stride defaults to kernel_size; a stride of 0 is refused by the constructor, as MaxPool2d's.
struct AvgPool2dOptions {
  /* implicit */ AvgPool2dOptions(Int2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(Int2, kernel_size);
  WICK_ARG(Int2, stride);
  WICK_ARG(Int2, padding) = 0;
  WICK_ARG(bool, ceil_mode) = false;
  WICK_ARG(bool, count_include_pad) = true;
  /// Every window's divisor, when set (F::avg_pool2d); 0 is refused by the constructor (PyTorch
  /// refuses it at forward). Not printed, as PyTorch's AvgPool2d does not print it.
  WICK_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

/// F::avg_pool2d with fixed geometry.
class AvgPool2dImpl : public Cloneable<AvgPool2dImpl> {
 public:
  explicit AvgPool2dImpl(Int2 kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  /// ValueError for a kernel_size or a stride with a zero, or a divisor_override of 0.
  explicit AvgPool2dImpl(const AvgPool2dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AvgPool2dOptions& options() const { return options_; }

 private:
  AvgPool2dOptions options_;
};
WICK_MODULE(AvgPool2d);

/// AdaptiveAvgPool2d's options, as LibTorch: `AdaptiveAvgPool2dOptions({1, 1})`.
struct AdaptiveAvgPool2dOptions {
  /* implicit */ AdaptiveAvgPool2dOptions(Int2 output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(Int2, output_size);
};

/// F::adaptive_avg_pool2d to a fixed output size.
class AdaptiveAvgPool2dImpl : public Cloneable<AdaptiveAvgPool2dImpl> {
 public:
  explicit AdaptiveAvgPool2dImpl(Int2 output_size) : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveAvgPool2dOptions& options() const { return options_; }

 private:
  AdaptiveAvgPool2dOptions options_;
};
WICK_MODULE(AdaptiveAvgPool2d);

/// AdaptiveMaxPool2d's options, as LibTorch: `AdaptiveMaxPool2dOptions(3)`,
/// `AdaptiveMaxPool2dOptions({2, 3})`, or `AdaptiveMaxPool2dOptions({std::nullopt, 3})` to keep
/// the input's height (LibTorch's ExpandingArrayWithOptionalElem<2>, PyTorch's `(None, 3)`).
struct AdaptiveMaxPool2dOptions {
  /* implicit */ AdaptiveMaxPool2dOptions(OptionalInt2 output_size) : output_size_(output_size) {}  // NOLINT
  WICK_ARG(OptionalInt2, output_size);
};

/// F::adaptive_max_pool2d to a fixed output size; prints as PyTorch's
/// "AdaptiveMaxPool2d(output_size=(None, 3))". An output_size entry below 1 is refused when
/// built (ValueError), as F::adaptive_max_pool2d would refuse it at every forward.
class AdaptiveMaxPool2dImpl : public Cloneable<AdaptiveMaxPool2dImpl> {
 public:
  explicit AdaptiveMaxPool2dImpl(OptionalInt2 output_size)
      : AdaptiveMaxPool2dImpl(AdaptiveMaxPool2dOptions(output_size)) {}
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options);
  Tensor forward(const Tensor& input);
  /// The output and the flat h * W + w position of each maximum (PyTorch's return_indices=True),
  /// as LibTorch's forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveMaxPool2dOptions& options() const { return options_; }

 private:
  AdaptiveMaxPool2dOptions options_;
};
WICK_MODULE(AdaptiveMaxPool2d);

}  // namespace wick::nn
