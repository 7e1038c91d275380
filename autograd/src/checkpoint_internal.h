#pragma once
// The non-reentrant activation checkpoint, called by checkpoint() (activation_checkpoint.cpp).
#include <vector>

#include "wick/autograd/activation_checkpoint.h"

namespace wick::autograd::detail {

// checkpoint(fn, inputs, {.use_reentrant = false}) (Note [Non-reentrant checkpoint]).
std::vector<Tensor> checkpoint_without_reentrant(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                                                 bool preserve_rng_state);

}  // namespace wick::autograd::detail
