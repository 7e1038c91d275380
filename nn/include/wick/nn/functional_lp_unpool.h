#pragma once
// The functions of wick::nn::functional (alias F) built from pooling and index ops:
// local_response_norm, lp_pool1d, lp_pool2d, max_unpool1d, max_unpool2d, max_unpool3d, with
// torch.nn.functional's names, argument order and PyTorch 1.13's semantics. Included by
// wick/nn/functional.h; the modules are in wick/nn/modules/pooling_lp_unpool.h.
//
// Each is a composition of differentiable ops (nn/src/functional_lp_unpool.cpp), so gradients,
// double backward and devices are those ops': local_response_norm and the lp pools are PyTorch
// 1.13's own compositions of pad and avg_pool; max_unpool scatters the input into a zero plane
// (Note [max_unpool as a scatter]).
#include <cstdint>
#include <optional>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"  // Int2; it includes this file at its end (both #pragma once)
#include "wick/nn/int3.h"

namespace wick::nn::functional {

/// Local response normalization across channels: input [N, C, *] (3-d or more) divided by
/// (k + alpha / size * sum of x^2 over the channels c - size / 2 ... c + (size - 1) / 2)^beta,
/// channels outside [0, C) counting as zeros, as torch.nn.functional.local_response_norm
/// (PyTorch's composition of pad and avg_pool, on a [N, 1, C, prod(*)] view). An input with no
/// elements is returned as it is, as PyTorch. ValueError for fewer than 3 dims or a size below 1;
/// TypeError for a non-float input.
Tensor local_response_norm(const Tensor& input, int64_t size, double alpha = 1e-4, double beta = 0.75, double k = 1.0);

/// Power-average pooling of input [N, C, L] (or [C, L]): (sum of x^p over each window)^(1 / p),
/// p = norm_type, computed as PyTorch 1.13 does: s = avg_pool1d(x^p) * kernel_size, then
/// (sign(s) * relu(|s|))^(1 / p). So with ceil_mode a clipped last window is its mean times
/// kernel_size, and a negative x^p or window sum under a fractional power is NaN, as in PyTorch. stride 0 (the default)
/// means stride = kernel_size. ValueError for a norm_type of 0 or not finite (PyTorch divides by zero or returns 1),
/// and avg_pool1d's errors with this op's name in front.
Tensor lp_pool1d(const Tensor& input, double norm_type, int64_t kernel_size, int64_t stride = 0,
                 bool ceil_mode = false);
/// lp_pool1d's 2-d form on input [N, C, H, W] (or [C, H, W]), avg_pool2d(x^p) * kH * kW.
Tensor lp_pool2d(const Tensor& input, double norm_type, Int2 kernel_size, Int2 stride = 0, bool ceil_mode = false);

/// The partial inverse of max_pool1d: input [N, C, L] (or [C, L]) and the int64 indices of the
/// same shape that max_pool1d_with_indices returned; each value is written at its index in a
/// zero output [N, C, Lout], Lout = (L - 1) * stride + kernel_size - 2 padding unless output_size
/// ({Lout}, or the whole shape) gives another, which must lie strictly between that size minus
/// and plus the stride, as torch.nn.functional.max_unpool1d. stride 0 (the default) means
/// stride = kernel_size. Checked before anything is written: IndexError for an index outside
/// [0, Lout); ValueError for shapes that differ, another rank, an empty channel or spatial dim, an
/// output size below 1, a kernel_size or stride below 1 or a negative padding; TypeError for
/// indices that are not int64 or a non-float input. Several values at one index: the last one (in
/// the order of the input's elements) is written, as PyTorch's CPU kernel, and only it gets a
/// gradient (PyTorch's backward gives every one the gradient at that index). Note [max_unpool as
/// a scatter].
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, int64_t kernel_size, int64_t stride = 0,
                    int64_t padding = 0, const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
/// max_unpool1d's 2-d form: input and indices [N, C, H, W] (or [C, H, W]), index h * Wout + w of
/// an [Hout, Wout] plane (max_pool2d_with_indices's); output_size {Hout, Wout} or the whole shape.
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, Int2 kernel_size, Int2 stride = 0, Int2 padding = 0,
                    const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
/// max_unpool1d's 3-d form: input and indices [N, C, D, H, W] (or [C, D, H, W]), index
/// d * Hout * Wout + h * Wout + w (max_pool3d_with_indices's); output_size {Dout, Hout, Wout} or
/// the whole shape.
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, Int3 kernel_size, Int3 stride = 0, Int3 padding = 0,
                    const std::optional<std::vector<int64_t>>& output_size = std::nullopt);

}  // namespace wick::nn::functional
