#pragma once
// LayerNorm and GroupNorm (torch.nn.LayerNorm, torch.nn.GroupNorm).
#include <utility>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// LayerNorm's options, as LibTorch: `LayerNormOptions({64}).eps(1e-6).elementwise_affine(false)`.
/// bias(false) keeps the weight and drops the bias (PyTorch's `bias=False`).
struct LayerNormOptions {
  /* implicit */ LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  WICK_ARG(std::vector<int64_t>, normalized_shape);
  WICK_ARG(double, eps) = 1e-5;
  /// Whether to learn weight (ones) and bias (zeros) of normalized_shape.
  WICK_ARG(bool, elementwise_affine) = true;
  WICK_ARG(bool, bias) = true;
};

/// Normalizes over the trailing dims `normalized_shape`. `tensor_options`: the parameters'
/// dtype and device (see LinearImpl).
class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  const LayerNormOptions& options() const { return options_; }

 private:
  LayerNormOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(LayerNorm);

/// GroupNorm's options, as LibTorch: `GroupNormOptions(2, 32).eps(1e-3).affine(false)`.
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  WICK_ARG(int64_t, num_groups);
  WICK_ARG(int64_t, num_channels);
  WICK_ARG(double, eps) = 1e-5;
  /// Whether to learn a per-channel weight (ones) and bias (zeros).
  WICK_ARG(bool, affine) = true;
};

/// F::group_norm of input [N, C, *] with C = num_channels, split into num_groups groups
/// (num_channels must be positive and divisible by num_groups > 0: ValueError when built).
/// Parameters weight and bias ([num_channels]) when affine, else None; no buffers.
/// `tensor_options`: the parameters' dtype and device (see LinearImpl).
class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels, TensorOptions tensor_options = {})
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels), tensor_options) {}
  explicit GroupNormImpl(const GroupNormOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  /// weight <- 1, bias <- 0.
  void reset_parameters();
  /// "2, 6, eps=1e-05, affine=True", as PyTorch.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  const GroupNormOptions& options() const { return options_; }

 private:
  GroupNormOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(GroupNorm);

}  // namespace wick::nn
