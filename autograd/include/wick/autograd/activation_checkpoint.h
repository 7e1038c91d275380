#pragma once
// Activation checkpointing (PyTorch 1.13's torch.utils.checkpoint.checkpoint, both kinds): a
// segment's intermediate results are not kept for backward but computed again there, trading
// compute for memory.
//
//   Tensor y = wick::autograd::checkpoint([&](const Tensor& x) { return block->forward(x); }, x);
//   Tensor z = wick::autograd::checkpoint(f, x, {.use_reentrant = false});
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
//
// Note [Non-reentrant checkpoint]
// With use_reentrant = false (PyTorch's recommended kind) fn runs with grad mode on, so its graph
// is recorded as usual, but under saved-tensor hooks (Note [Saved tensor hooks]) whose pack keeps
// a small holder in place of each tensor fn's ops save. The first unpack of any of them in
// backward runs fn again on the same inputs (generator state as in the forward, grad mode on)
// under inner hooks that put each tensor the recomputation saves, in save order, into its
// holder; every unpack then returns its holder's tensor, re-attached to the forward graph's
// nodes. No reentrant backward runs: gradients reach inputs and parameters through the forward
// graph, so autograd::grad, create_graph (double backward), DDP's hooks and inputs that do not
// require grad all work, and the gradients equal the uncheckpointed ones bit for bit. A holder
// dies with the node that saved it, freeing its tensor as backward proceeds. The recomputation
// must save as many tensors, of the same shapes, dtypes and devices, as the forward did, and the
// inputs must not have been modified in place since (StateErrors otherwise; PyTorch 1.13 leaves
// these unchecked). Only the calling thread's saves are recomputed: a tensor saved on another
// thread (a DataParallel inside fn, whose replicas save on the device threads) is kept as it is.
// Mirrored in docs/autograd.md.
#include <functional>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::autograd {

/// The function a checkpoint runs: tensors in, tensors out. Non-tensor arguments are captured.
/// It must do the same computation each time it is called (it runs twice).
using CheckpointFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// checkpoint's keyword options, as PyTorch's.
struct CheckpointOptions {
  /// True (PyTorch 1.13's default): a node that recomputes in a reentrant backward (Note
  /// [Activation checkpoint]); false: saved-tensor hooks (Note [Non-reentrant checkpoint]).
  bool use_reentrant = true;
  /// The recomputation draws the same random numbers as the forward (dropout's masks).
  bool preserve_rng_state = true;
};

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

/// checkpoint with options: `options.use_reentrant = false` records fn's graph and recomputes
/// only its saved tensors (Note [Non-reentrant checkpoint]); it takes inputs that do not
/// require grad, and works under autograd::grad and with create_graph. Backward throws
/// StateError when the recomputation saves other tensors than the forward, or an input was
/// modified in place since the forward. With use_reentrant = true, as the overloads above.
std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               const CheckpointOptions& options);
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input,
                  const CheckpointOptions& options);

}  // namespace wick::autograd
