#pragma once
// wick::autograd::grad and backward, as torch.autograd's.
#include <optional>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::autograd {

/// Gradients of `outputs` with respect to `inputs`, weighted by `grad_outputs` (defaults to
/// ones for one-element outputs). With create_graph the result is differentiable again.
/// Inputs that `outputs` do not depend on give an undefined tensor when allow_unused, an
/// error otherwise.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

/// Accumulates gradients of `tensors` into the leaves' .grad.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

}  // namespace wick::autograd
