#pragma once
// Helpers shared by Optimizer and the optimizers built around one (ZeroRedundancyOptimizer in
// wick::distributed): clearing gradients and reading state-dict keys.
#include <cstdint>
#include <string>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::optim {

/// Clears the gradient of every tensor in `params` that has one: to None (set_to_none) or to
/// zeros, detached from any graph (Optimizer::zero_grad's rule).
void zero_grad_of(const std::vector<Tensor>& params, bool set_to_none);

/// Splits a state-dict key "state.<i>.<name>" (Note [Optimizer state dicts]) into `id` and
/// `name`; false, leaving them unspecified, for any other form (the number in decimal digits,
/// without a sign or a leading zero, so that each parameter has one spelling).
bool parse_state_key(const std::string& key, int64_t& id, std::string& name);

}  // namespace wick::optim
