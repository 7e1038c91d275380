#pragma once
// gradcheck: compares the analytic Jacobian (from backward) with float64 central differences.
#include <functional>
#include <string>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  std::string message;  ///< the first mismatch: input, output element, analytic vs numeric
};

/// Checks d fn(inputs) / d inputs for every input that requires grad (float64 inputs, on any
/// device). fn returns one or more tensors; every element of its floating outputs is checked.
/// Throws TypeError for an input that requires grad or a floating output that is not float64.
GradcheckResult gradcheck(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, GradcheckOptions opts = {});

/// Second-order check: gradcheck of the function (inputs, grad_outputs) -> grad(inputs).
GradcheckResult gradgradcheck(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                              const std::vector<Tensor>& inputs, GradcheckOptions opts = {});

}  // namespace wick::autograd
