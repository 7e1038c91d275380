#pragma once
// The engine's side of the gradient hooks (Note [Gradient hooks] in wick/autograd/hooks.h).
#include "wick/autograd/node.h"

namespace wick::autograd::detail {

/// Runs the tensor hooks of node `n` on its incoming gradients `grads` (one per forward output),
/// replacing each gradient a hook returns a defined tensor for. For an AccumulateGrad these
/// are the leaf's hooks.
void run_tensor_hooks(Node& n, variable_list& grads);

/// Runs the post-accumulate-grad hooks of the leaf behind `acc`.
void run_post_accumulate_grad_hooks(AccumulateGrad& acc);

}  // namespace wick::autograd::detail
