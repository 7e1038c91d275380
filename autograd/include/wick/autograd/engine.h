#pragma once
// The backward engine: iterative (no recursion, so graphs of any depth work), dependency
// counted, each node on the thread of its device (Note [Device-parallel backward] in engine.cpp;
// docs/autograd.md "Threads").
#include <functional>
#include <vector>

#include "wick/autograd/node.h"

namespace wick::autograd {

/// Back-propagates `grad_roots` from `roots`. When `inputs` is non-empty, returns the gradients
/// of those inputs (and does not touch any .grad); otherwise accumulates into leaves' .grad.
/// `keep_graph` keeps saved tensors for another backward; `create_graph` records the backward
/// computation itself (for double backward). The first exception raised by any node is
/// rethrown here, the node named in its message; the rest of that backward is then skipped.
variable_list run_backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
                           bool create_graph, const variable_list& inputs, bool allow_unused);

/// Queues `callback` to run once, on the thread that called backward, when the backward that is
/// running now has run every node (torch's Variable._execution_engine.queue_callback). Call it
/// from a hook or a node; StateError when no backward is running on this thread. Callbacks
/// run in the order queued and may queue more; none run when the backward fails.
void queue_callback(std::function<void()> callback);

/// As queue_callback, for the outermost backward running on this thread: inside a backward that
/// a node or hook of another one started (a reentrant backward, such as an activation
/// checkpoint's recomputation), the callback runs when that other backward ends, on its
/// caller's thread. DistributedDataParallel queues its end-of-backward work so, since a
/// checkpointed segment's gradients may be the first to arrive (PyTorch reaches the outer
/// backward through a node on DDP's outputs, _DDPSink, and only when asked to).
void queue_callback_outermost(std::function<void()> callback);

/// True when `e` is valid and the backward running on this thread, if any, uses the gradient
/// sent along it: autograd::grad leaves out the nodes that lead to none of its inputs (Note
/// [autograd::grad runs only what its inputs need]). PyTorch's task_should_compute_output; a
/// custom function's needs_input_grad asks it.
bool task_should_compute(const Edge& e);

/// False while the backward running on this thread captures the gradients of given inputs
/// (autograd::grad) instead of accumulating into .grad; true otherwise, also when no backward
/// runs. A reentrant activation checkpoint refuses the former (PyTorch's
/// Engine::is_checkpoint_valid; wick/autograd/activation_checkpoint.h).
bool is_checkpoint_valid();

/// Limits the worker threads a backward uses besides its caller: -1 (the default) gives every
/// device its worker thread; 0 runs every node on the calling thread; n > 0 gives a worker to
/// the first n devices other than the caller's that a backward meets. Gradients are the same,
/// bit for bit, whatever the setting (Note [Deterministic accumulation]).
void set_max_worker_threads(int n);
/// The current limit (see set_max_worker_threads).
int max_worker_threads();

}  // namespace wick::autograd
