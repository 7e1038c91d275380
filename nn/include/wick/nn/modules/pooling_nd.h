#pragma once
// The pooling layers written once over D = 1, 2 or 3 spatial axes, as LibTorch's
// (torch/nn/modules/pooling.h): MaxPoolImpl<D, Derived>, AvgPoolImpl<D, Derived>,
// AdaptiveAvgPoolImpl<D, output_size_t, Derived> and AdaptiveMaxPoolImpl<D, output_size_t,
// Derived>. Each layer is `class MaxPool2dImpl : public MaxPoolImpl<2, MaxPool2dImpl>` with the
// base's constructors, declared in pooling1d.h, pooling.h (2-d) and pooling3d.h; they differ in
// F's function (F::max_pool1d / 2d / 3d, ...) and in how a size reads in the print and the messages
// (modules_pooling.cpp; Note [N-d layer templates] in conv_nd.h).
#include <string>
#include <tuple>

#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/pooling_options.h"

namespace wick::nn {

/// F::max_pool1d / 2d / 3d with fixed geometry; prints as PyTorch's "MaxPool2d(kernel_size=3,
/// stride=3, padding=0, dilation=1, ceil_mode=False)" (a size prints as given: one number for 1-d,
/// and for 2-d and 3-d when its entries are equal, as PyTorch prints an int argument).
template <size_t D, class Derived>
class MaxPoolImpl : public Cloneable<Derived> {
 public:
  /// kernel_size and stride `kernel_size`.
  explicit MaxPoolImpl(conv_size_t<D> kernel_size) : MaxPoolImpl(MaxPoolOptions<D>(kernel_size)) {}
  /// ValueError for a kernel_size below 1 or a stride of 0 (and, for 1-d and 3-d, below 0).
  explicit MaxPoolImpl(const MaxPoolOptions<D>& options);
  Tensor forward(const Tensor& input);
  /// The output and the flat position of each maximum in the input's spatial axes (PyTorch's
  /// return_indices=True, F::max_pool2d_with_indices and its 1-d and 3-d kin), as LibTorch's
  /// forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const MaxPoolOptions<D>& options() const { return options_; }

 private:
  MaxPoolOptions<D> options_;
};

/// F::avg_pool1d / 2d / 3d with fixed geometry; prints as PyTorch's "AvgPool2d(kernel_size=3,
/// stride=3, padding=0)" (ceil_mode, count_include_pad and divisor_override are not printed), and
/// for 1-d "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))" (PyTorch stores 1-tuples).
template <size_t D, class Derived>
class AvgPoolImpl : public Cloneable<Derived> {
 public:
  explicit AvgPoolImpl(conv_size_t<D> kernel_size) : AvgPoolImpl(AvgPoolOptions<D>(kernel_size)) {}
  /// ValueError for a kernel_size below 1, a stride of 0 (and, for 1-d and 3-d, below 0), or a
  /// divisor_override of 0.
  explicit AvgPoolImpl(const AvgPoolOptions<D>& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AvgPoolOptions<D>& options() const { return options_; }

 private:
  AvgPoolOptions<D> options_;
};

/// F::adaptive_avg_pool1d / 2d / 3d to a fixed output size; prints as PyTorch's
/// "AdaptiveAvgPool2d(output_size=(2, 3))".
template <size_t D, class output_size_t, class Derived>
class AdaptiveAvgPoolImpl : public Cloneable<Derived> {
 public:
  explicit AdaptiveAvgPoolImpl(output_size_t output_size)
      : AdaptiveAvgPoolImpl(AdaptiveAvgPoolOptions<output_size_t>(output_size)) {}
  /// For 1-d and 3-d, a ValueError for an output_size entry below 1 (2-d leaves it to
  /// F::adaptive_avg_pool2d).
  explicit AdaptiveAvgPoolImpl(const AdaptiveAvgPoolOptions<output_size_t>& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveAvgPoolOptions<output_size_t>& options() const { return options_; }

 private:
  AdaptiveAvgPoolOptions<output_size_t> options_;
};

/// F::adaptive_max_pool1d / 2d / 3d to a fixed output size; prints as PyTorch's
/// "AdaptiveMaxPool2d(output_size=(None, 3))". An output_size entry below 1 is refused when built
/// (ValueError), as F's function would refuse it at every forward.
template <size_t D, class output_size_t, class Derived>
class AdaptiveMaxPoolImpl : public Cloneable<Derived> {
 public:
  explicit AdaptiveMaxPoolImpl(output_size_t output_size)
      : AdaptiveMaxPoolImpl(AdaptiveMaxPoolOptions<output_size_t>(output_size)) {}
  explicit AdaptiveMaxPoolImpl(const AdaptiveMaxPoolOptions<output_size_t>& options);
  Tensor forward(const Tensor& input);
  /// The output and the flat position of each maximum in the input's spatial axes (PyTorch's
  /// return_indices=True), as LibTorch's forward_with_indices.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;
  const AdaptiveMaxPoolOptions<output_size_t>& options() const { return options_; }

 private:
  AdaptiveMaxPoolOptions<output_size_t> options_;
};

}  // namespace wick::nn
