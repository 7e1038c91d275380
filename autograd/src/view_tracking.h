#pragma once
// Internal: how autograd keeps views and their base consistent across in-place ops.
//
// Note [Views and in-place ops]
// A view shares memory with its base, so an in-place op on either changes the other's values,
// and the history of both must follow:
// * Every view made while grad mode is on records its base (the root: never itself a view) and
//   the version of their shared counter when its grad_fn was derived. When the version has
//   moved on, an in-place op has rebased the base's history since, so the next use of the view
//   (gradient_edge, Tensor::grad_fn) derives grad_fn again: a node whose input is the base as it
//   is now and whose backward places the gradient at the view's positions in the base
//   (ViewOfBaseBackward).
// * An in-place op on a view runs out of place on a snapshot (Note [In-place ops]), writes the
//   result r through the view, and gives the base a new node (CopySlices) with two inputs, the
//   base's old history and r: the gradient of the old base is the incoming gradient with the
//   view's positions zeroed, and r's is the incoming gradient at those positions. The view then
//   derives its grad_fn from the base's new history, as above.
// Positions are flat indices into the base, computed once per derivation from the two tensors'
// sizes, strides and offsets, so any view of any base works; the backward is gather/scatter_add
// on them and is itself differentiable. Refused, as in PyTorch: an in-place op on a view of a
// leaf that requires grad, on a view whose elements overlap in memory (expand), and a recorded
// in-place op (grad mode on, an operand that requires grad) on a view made under NoGradGuard or
// on a view of one: such a view does not know its base, so the base would silently miss the
// op's history. Those views are only marked (TensorImpl::view_made_without_grad, a flag that
// costs no allocation), not tracked. A custom function's output that shares memory with one of
// its inputs (an input returned as it is, a view made in forward) carries the same flag: the
// view+in-place logic would bypass the function's backward (Note [Custom functions]).
#include <string_view>

#include "wick/autograd/meta.h"

namespace wick::autograd::detail {

/// For each element of `view` (row-major), its flat index in `base`, as int64 on base's device.
/// When `overlapping` is given, sets it to whether two elements of view share memory.
Tensor view_positions(const Tensor& base, const Tensor& view, bool* overlapping);

/// Refuses (StateError) a recorded in-place change of `t` when t is a view autograd does not
/// track (TensorImpl::view_made_without_grad): a view made under NoGradGuard, a custom
/// function's output sharing memory with one of its inputs, or a view of either. `op` starts
/// the message ("mul_", "Name: mark_dirty"); the message says what to do (clone() the custom
/// function's output; or make the view and the op both inside or both outside NoGradGuard).
void check_untracked_view(const Tensor& t, std::string_view op);

/// Derives a stale view's grad_fn again from its base's current history (no-op when fresh).
void refresh_view(const Tensor& view, AutogradMeta& m);

/// t's autograd meta (null when it has none), a stale view's derived again first: what every
/// reader of a tensor's history (requires_grad, gradient_edge, grad_fn, is_leaf, retain_grad)
/// goes through. One version load when nothing is stale.
inline AutogradMeta* fresh_meta(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (m && m->is_view) refresh_view(t, *m);
  return m;
}

/// After t's grad_fn changed from `old` (an in-place op, a refreshed view): when t retains its
/// gradient, moves the registration to the new node, so .grad receives the gradient of t's
/// current value, as PyTorch's retains_grad follows the tensor. Called wherever grad_fn is
/// replaced.
void follow_retained_grad(const Tensor& t, AutogradMeta& m, const std::shared_ptr<Node>& old);

}  // namespace wick::autograd::detail
