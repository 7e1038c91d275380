#pragma once
// Internal: the pieces F::batch_norm, F::instance_norm and F::group_norm share (argument checks,
// the per-channel affine, the empty-input output, the running-statistics update).
#include <cstdint>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::nn::detail {

/// A weight, bias or running statistic of `op`: undefined, or of shape `shape` and of the input's
/// dtype (TypeError otherwise: PyTorch refuses it too, and promoting would hand the next layer a
/// dtype it did not ask for) and device (ValueError).
void check_norm_param(const char* op, const char* what, const Tensor& t, IntArrayRef shape, const Tensor& input);

/// [1, C, 1, ...] with input.dim() entries: how a per-channel [C] tensor broadcasts over input
/// [N, C, *].
std::vector<int64_t> channel_shape(const Tensor& input);

/// The product of input's sizes after dim 1 (1 for a 2-d input). It fits int64: it is at most
/// the stride of dim 0 (Note [Checked sizes]).
int64_t spatial_numel(const Tensor& input);

/// y * weight + bias, each [C] broadcast over dim 1 of y [N, C, *]; either may be undefined.
Tensor channel_affine(const Tensor& y, const Tensor& weight, const Tensor& bias);

/// The output of a normalization over an input with no elements, as PyTorch 1.13's: an empty
/// tensor of the input's shape that is still input * weight + bias in the graph, so that backward
/// reaches the input and gives weight and bias zero gradients (a new tensor, not the input, even
/// without them).
Tensor empty_norm_output(const Tensor& input, const Tensor& weight, const Tensor& bias);

/// running <- (1 - momentum) * running + momentum * scale * stat, in place, without recording;
/// stat ([C], any device and floating dtype) is converted to running's. PyTorch's update rule.
void update_running_stat(const Tensor& running, const Tensor& stat, double momentum, double scale = 1.0);

}  // namespace wick::nn::detail
