#pragma once
// What an in-place write may do to memory it also reads.
//
// Note [In-place writes and overlapping memory]
// An in-place op (binary_, unary_, copy_ and what is built on them) walks its target in some order,
// possibly over several threads. Two layouts would make the result depend on that order:
// - A target whose elements share memory (a dim of size > 1 and stride 0, from expand): each
//   location would be written once per element, `x.expand({4}).add_(1)` adding 4, and threads
//   would race on it. Refused with a ValueError, as PyTorch does ("more than one element of the
//   written-to tensor refers to a single memory location").
// - An operand that shares memory with the target in another layout (`a.add_(a.t())`,
//   `v.narrow(0, 1, 4).copy_(v.narrow(0, 0, 4))`): the loop would read values it has already
//   overwritten. The operand is cloned first, so the result is what the same op gives on
//   separate tensors. An operand with exactly the target's layout (`a.mul_(a)`) needs no clone:
//   each element is read before it is written.
// Both hold whether or not autograd records the op (autograd's in-place path clones its aliased
// operands too, autograd/src/tensor_inplace.cpp), so a result never depends on requires_grad.
// Only stride-0 overlap is detected in a target: an as_strided view whose strides overlap
// otherwise is taken as it is, as PyTorch does.
#include "wick/core/tensor.h"

namespace wick::native {

/// ValueError naming the op (`op` followed by `suffix`: "add" "_") and t's shape and strides when
/// two of t's elements share memory through a dim of size > 1 and stride 0.
void check_no_internal_overlap(const Tensor& t, const char* op, const char* suffix = "");

/// `operand`, or a contiguous copy of it when it shares memory with `target` in another layout
/// (Note [In-place writes and overlapping memory]).
Tensor unaliased_operand(const Tensor& operand, const Tensor& target);

}  // namespace wick::native
