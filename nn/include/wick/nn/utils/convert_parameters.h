#pragma once
// wick::nn::utils parameter vectors: torch.nn.utils.parameters_to_vector and
// vector_to_parameters with PyTorch 1.13's rules and LibTorch's C++ signatures
// (torch/nn/utils/convert_parameters.h). docs/training.md, "Gradient clipping and parameter
// vectors".
#include <vector>

#include "wick/core/tensor.h"

namespace wick::nn::utils {

/// The parameters flattened and concatenated, in order, into one 1-d tensor: cat of each
/// parameter's view(-1), as PyTorch 1.13, so the result is a new tensor (a copy) that is
/// differentiable: a loss on it sends each parameter its slice of the gradient. Its dtype is the
/// parameters' promoted dtype (cat promotes). ValueError for an empty list (PyTorch: cat of
/// nothing), an undefined parameter, parameters on two devices (naming both; PyTorch's
/// _check_param_device, except that wick's cpu:0 and cpu:1 are two devices) or a parameter that
/// view(-1) cannot flatten without a copy (as PyTorch's view).
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);

/// Writes the 1-d `vec` into the parameters, in order: parameter i gets the next numel(i)
/// elements, shaped as the parameter. PyTorch 1.13 replaces each parameter's data with a view
/// of vec (`param.data = vec[...].view_as(param).data`); wick copies the values into each
/// parameter's own memory under NoGradGuard, converting them to the parameter's dtype, so the
/// parameters keep their memory, dtype and device (an optimizer's state, a DDP bucket or a
/// replica that refers to that memory stays valid), do not change when vec changes later, and
/// their version counters move as by any in-place write (a graph that saved a parameter's old
/// value refuses to run backward). Everything is checked before the first parameter changes:
/// ValueError for an undefined or not 1-d vec, parameters on two devices, vec on another device
/// than the parameters (PyTorch would move them), a length of vec other than the parameters'
/// total (PyTorch ignores extra elements and fails part way for too few), an undefined parameter
/// or one whose elements share memory (expand). vec need not be contiguous (PyTorch's view_as
/// needs it to be).
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace wick::nn::utils
