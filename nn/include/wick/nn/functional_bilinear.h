#pragma once
// bilinear of wick::nn::functional (alias F), torch.nn.functional.bilinear; the layer is
// nn::Bilinear (wick/nn/modules/bilinear.h). Composed of einsum (nn/src/functional_bilinear.cpp).
#include "wick/core/tensor.h"

namespace wick::nn::functional {

/// y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o], for input1
/// [*, in1], input2 [*, in2] with the same leading dims (no broadcasting, as PyTorch; 1-d
/// inputs give [out]), weight [out, in1, in2] and bias [out] (optional): the same leading dims
/// then [out]. ValueError, with PyTorch 1.13's checks, for ranks or sizes that do not match;
/// TypeError for non-floating operands or two dtypes.
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = {});

}  // namespace wick::nn::functional
