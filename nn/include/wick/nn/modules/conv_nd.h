#pragma once
// ConvNdImpl<D, Derived>: the layer that Conv1d, Conv2d and Conv3d share, written once over D = 1,
// 2 or 3 spatial axes, as LibTorch's ConvNdImpl<D, Derived> (torch/nn/modules/conv.h). Each
// layer is `class Conv2dImpl : public ConvNdImpl<2, Conv2dImpl>` with the base's constructors; its
// header says what the layer computes (Note [N-d layer templates]).
//
// Note [N-d layer templates]
// The 1-, 2- and 3-d convolution, transposed convolution and pooling layers differ in the
// functions they call (F::conv1d / 2d / 3d, ...), in their sizes' type (int64_t, Int2 or Int3:
// conv_size_t<D>) and, for some, in how a size reads in the print and the messages (PyTorch prints
// MaxPool1d's kernel_size as 3, AvgPool1d's as (3,)). So each kind of layer is one class template
// over D (ConvNdImpl, ConvTransposeNdImpl in conv_transpose.h, MaxPoolImpl, AvgPoolImpl,
// AdaptiveAvgPoolImpl and AdaptiveMaxPoolImpl in pooling_nd.h), as LibTorch's, whose members are
// defined once in the layer's .cpp (modules_conv.cpp, modules_conv_transpose.cpp,
// modules_pooling.cpp) and explicitly instantiated there for the three layers; a difference in
// text between the dimensions is an `if constexpr (D == ...)` or an overload on the size type
// there, next to the rule it changes. The concrete classes (Conv2dImpl, ...) keep their names,
// holders and headers, and add nothing but their documentation, so `Conv2d`, `Conv2dImpl`,
// `Conv2dOptions` and their members read as before. Cloneable<Derived> still gives each its name,
// shallow_copy and forward_value: the base derives from Cloneable<Derived>, not from Module.
#include <optional>
#include <string>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv_options.h"  // ConvOptions<D>, ConvTransposeOptions<D> and their aliases

namespace wick::nn {

/// A D-d convolution over F::conv1d, F::conv2d or F::conv3d (D = 1, 2, 3); Derived is the layer
/// (Conv1dImpl, Conv2dImpl, Conv3dImpl). weight [C_out, C_in / groups, k...] ~ kaiming_uniform(a =
/// sqrt(5)), bias [C_out] ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = C_in / groups * the
/// kernel's sizes, as PyTorch; state_dict keys "weight" and "bias". With a padding_mode other than
/// kZeros the forward is PyTorch's: F::pad(input, pads, padding_mode), pads {left, right} per axis
/// from the last axis back (for kSame, total = dilation * (k - 1) split as left = total / 2; kValid
/// pads 0), then the convolution with no padding; so the input has the rank F::pad's mode takes.
template <size_t D, class Derived>
class ConvNdImpl : public Cloneable<Derived> {
 public:
  using size_type = conv_size_t<D>;

  ConvNdImpl(int64_t in_channels, int64_t out_channels, size_type kernel_size, TensorOptions tensor_options = {})
      : ConvNdImpl(ConvOptions<D>(in_channels, out_channels, kernel_size), tensor_options) {}
  /// Refuses (ValueError) channels or kernel sizes below 1, stride or dilation below 1, negative
  /// padding, groups that do not divide both channel counts and padding_mode kConstant;
  /// padding=same with a stride other than 1 is a NotImplementedError. `tensor_options`: the
  /// parameters' dtype and device (see LinearImpl).
  explicit ConvNdImpl(const ConvOptions<D>& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  /// Redraws weight and bias with PyTorch's rule (above), from the global generator.
  void reset_parameters();
  /// PyTorch's _ConvNd.extra_repr: "4, 6, kernel_size=(3, 3), stride=(1, 1)" ("(3,)" for one
  /// axis), then padding, dilation, groups, bias and padding_mode where they differ from the
  /// defaults.
  std::string extra_repr() const override;

  const Tensor& weight() const { return this->param(weight_); }
  const Tensor& bias() const { return this->param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  size_type kernel_size() const { return options_.kernel_size(); }
  size_type stride() const { return options_.stride(); }
  /// The numeric padding (zero with a named padding, see named_padding()).
  size_type padding() const;
  /// kSame or kValid when the padding is named, nullopt when it is numeric.
  std::optional<PaddingMode> named_padding() const;
  /// What the padding holds: kZeros, kReflect, kReplicate or kCircular.
  PadMode padding_mode() const { return options_.padding_mode(); }
  size_type dilation() const { return options_.dilation(); }
  int64_t groups() const { return options_.groups(); }
  const ConvOptions<D>& options() const { return options_; }

 private:
  ConvOptions<D> options_;
  ParamSlot weight_, bias_;
  // F::pad's pads for a padding_mode other than kZeros (PyTorch's
  // _reversed_padding_repeated_twice), computed once when the layer is built.
  std::vector<int64_t> mode_pads_;
};

}  // namespace wick::nn
