#pragma once
// Internal: the input check and the inplace write-back of the activation composites (Note
// [Activation composites], functional_activation.cpp), for the activations in files of their own.
#include <fmt/format.h>

#include <utility>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::nn::detail {

/// TypeError unless input is a defined float32 or float64 tensor (ValueError when undefined).
inline void check_activation_input(const char* op, const Tensor& input) {
  WICK_CHECK(input.defined(), "{}: input is undefined", op);
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {} of shape {}", op,
                  input.dtype(), shape_str(input));
}

/// fn(input), or with inplace fn's result (computed on a differentiable clone when the graph
/// records it) copied into the input, which is returned; StateError on a leaf that requires grad.
template <typename Fn>
Tensor apply_activation(const char* op, const Tensor& input, bool inplace, Fn&& fn) {
  check_activation_input(op, input);
  if (!inplace) return fn(input);
  const bool recorded = GradMode::is_enabled() && input.requires_grad();
  WICK_CHECK_STATE(!(recorded && input.is_leaf()),
                   "{}: inplace=true on a leaf tensor of shape {} that requires grad (PyTorch refuses it too); use "
                   "inplace=false, clone() the tensor first, or call it under NoGradGuard",
                   op, shape_str(input));
  const Tensor result = fn(recorded ? clone(input) : input);
  Tensor out = input;  // the same tensor: copy_ writes into the caller's input
  out.copy_(result);
  return out;
}

}  // namespace wick::nn::detail
