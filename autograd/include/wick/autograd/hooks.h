#pragma once
// Gradient hooks: Tensor::register_hook, Tensor::register_post_accumulate_grad_hook (declared
// in core's tensor.h, defined in autograd/src/hooks.cpp) and autograd::queue_callback (engine.h).
//
// Note [Gradient hooks]
// PyTorch's semantics, on wick's graph:
// * A hook on a **non-leaf** belongs to (grad_fn, output_nr) as they are when it is registered.
//   The engine runs it on the summed gradient of that output just before grad_fn runs, and a
//   defined return value replaces the gradient for grad_fn, for retain_grad() (which therefore
//   sees the hooked value) and for autograd::grad's captured result. After an in-place op the
//   tensor has a new grad_fn: hooks registered before keep firing on the old value's gradient,
//   hooks registered after fire on the new one (test_tensor_hooks_inplace).
// * A hook on a **leaf** lives in the leaf's AutogradMeta (its AccumulateGrad node is created
//   lazily and held weakly, so it cannot hold hooks); it runs before the gradient is accumulated
//   into .grad (or captured by autograd::grad), and its return value is what gets accumulated.
// * Several hooks on one tensor run in registration order, each on the previous one's result.
//   Hooks never see an undefined gradient (an output that received none): they are skipped.
// * Post-accumulate-grad hooks run once per backward per leaf, after .grad has been updated,
//   however many uses (tied parameters) or devices fed the leaf; not under autograd::grad.
// * Hooks run on the thread of the node's device (Note [Device-parallel backward] in
//   engine.cpp), with grad mode = create_graph, and may call backward themselves (re-entrant).
//   queue_callback runs its callback on the thread that called backward, after every node ran.
// * Registration and removal are thread-safe; a handle's remove() is idempotent.
#include <functional>

#include "wick/autograd/node.h"
#include "wick/core/removable_handle.h"

namespace wick::autograd {

/// A gradient hook: returns a replacement gradient, or an undefined tensor to keep the given one.
using TensorHook = std::function<Tensor(const Tensor&)>;
/// A post-accumulate-grad hook: receives the leaf, whose .grad() is up to date.
using PostAccumulateGradHook = std::function<void(const Tensor&)>;

}  // namespace wick::autograd
