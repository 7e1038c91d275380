#pragma once
// torch.einsum: Einstein summation over any number of operands, composed of differentiable ops
// (autograd/src/ops_einsum.cpp, Note [einsum]).
#include <string_view>
#include <vector>

#include "wick/core/tensor.h"

namespace wick {

/// Sums the product of `tensors` over the indices that `equation` leaves out, as torch.einsum in
/// PyTorch 1.13 without opt_einsum: operands contracted pairwise from left to right.
///
/// The equation names each operand's dims with letters [a-zA-Z], operands separated by commas;
/// spaces are ignored. "..." stands for the dims that no letter names (broadcast across the
/// operands, right-aligned). A letter repeated in one operand takes that operand's diagonal
/// ("ii->i"). "->" gives the output's dims (a letter at most once, each one from the inputs);
/// without it the output is "..." then the letters seen exactly once, in alphabetical order
/// (upper case first). Letters not in the output are summed. A dim of size 1 broadcasts
/// against the same letter's size in another operand.
///
/// `einsum("bij,bjk->bik", {a, b})` is a batch matmul, `einsum("ii", {a})` a trace,
/// `einsum("i,j->ij", {u, v})` an outer product. Errors (ValueError, naming the equation and the
/// operands' shapes): a number of operands other than the equation's, a letter count that does not
/// match an operand's rank, sizes of one letter that do not broadcast, a character outside
/// [a-zA-Z], a stray '.', an output letter repeated or absent from the inputs. Operands must be
/// defined, floating point of one dtype (TypeError; PyTorch also takes integers) and on one device.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors);

}  // namespace wick
