#pragma once
// Activation checkpointing (PyTorch 1.13's torch.utils.checkpoint.checkpoint with its default,
// use_reentrant=True): a segment's intermediate results are not kept for backward but computed
// again there, trading compute for memory.
//
//   Tensor y = wick::autograd::checkpoint([&](const Tensor& x) { return block->forward(x); }, x);
//
// Note [Activation checkpoint]
// Forward runs fn under NoGradGuard, so none of its intermediates is saved; the checkpoint node
// keeps only the inputs (as saved tensors: an in-place change before backward is caught), fn
// itself and, with preserve_rng_state, the generator's state from before fn ran. The outputs
// get the node as grad_fn. The node's backward (1) refuses a backward that captures inputs
// (autograd::grad) and one that records a graph (create_graph), (2) sets the generator to the
// forward's state, runs fn again with grad mode on, on detached copies of the inputs that
// require grad as the originals do, and puts the caller's generator state back (PyTorch's
// fork_rng), so dropout draws the forward's mask and the caller's stream is untouched,
// (3) runs a reentrant autograd::backward from the recomputed outputs with the incoming
// gradients, which accumulates into the .grad of the parameters fn uses, and (4) returns the
// detached inputs' .grad as the inputs' gradients. Same ops, same order: the gradients equal
// those of the uncheckpointed computation bit for bit. Mirrored in docs/autograd.md.
#include <functional>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::autograd {

/// The function a checkpoint runs: tensors in, tensors out. Non-tensor arguments are captured.
/// It must do the same computation each time it is called (it runs twice).
using CheckpointFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Runs `fn(inputs)` without keeping its intermediates, and recomputes them in backward
/// (torch.utils.checkpoint.checkpoint, use_reentrant=True). Returns fn's outputs, whose
/// floating ones require grad. With preserve_rng_state the recomputation draws the same random
/// numbers as the forward. With grad mode off, it just runs fn. Throws ValueError when grad mode
/// is on and no input requires grad (PyTorch warns and its outputs get no gradient: the
/// parameters inside fn would silently get none). Backward through it throws StateError under
/// autograd::grad and NotImplementedError with create_graph (Note [Activation checkpoint]).
std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               bool preserve_rng_state = true);

/// One tensor in, one out: `checkpoint([&](const Tensor& x) { return f(x); }, x)`.
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input, bool preserve_rng_state = true);

}  // namespace wick::autograd
