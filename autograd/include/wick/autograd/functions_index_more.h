#pragma once
// Part of the op API of functions.h (which includes this file): indexed writes and reads, set
// membership, building, and the products of PyTorch's "add" family (docs/tensors.md, "Indexed
// writes, membership and products"). Every op is composed of differentiable ops (index_put,
// scatter_reduce, where, index_select, matmul, cdist, slogdet), so gradients, double backward
// and every device come with them; the gradients are PyTorch 1.13's (Note [Indexed writes] in
// autograd/src/ops_index_more.cpp).
#include <optional>
#include <string_view>
#include <vector>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

namespace wick {

// Indexed writes along a dim (autograd/src/ops_index_more.cpp). `index` is int64, 1-d or 0-d;
// `source` has self's shape with dim's size replaced by index's length (0-d source and self go
// with one index). An index out of range is an IndexError naming the op and the index; a dtype
// mismatch a TypeError; nothing is written when a check fails.
/// self with the slices of source copied to the positions `index` names along dim (indices in
/// [0, size)). A repeated index keeps the last slice written (PyTorch leaves it unspecified; its
/// CPU loop keeps the last), as index_put. Gradients: self gets g with the indexed slices zeroed,
/// source gets g's indexed slices (every repeat, as PyTorch's formula).
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
/// self with `value` at the slices `index` names along dim (negative indices count from the end;
/// repeats allowed). The tensor form takes a 0-d value, differentiable: it gets the sum of g over
/// the distinct indexed slices.
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);
/// self with the slices of source reduced into the slices `index` names along dim (indices in
/// [0, size)), reduce one of "prod", "mean" (integers: floor division), "amax", "amin";
/// include_self false leaves self's values out at the slices written. scatter_reduce with the
/// index broadcast along the other dims, with its gradients (PyTorch 1.13's).
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self = true);
/// self with source's elements written (accumulate: added) at the positions `index` names in the
/// flattened self (negative positions count from the end); index and source hold as many
/// elements, in any shapes. A repeated position keeps the last value without accumulate.
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);

// Reading and membership (no gradient: integer and bool results).
/// The int64 [n, self.dim()] indices of the nonzero elements (NaN counts) in row-major order.
Tensor argwhere(const Tensor& self);
/// Whether each element of `elements` is in test_elements: bool of elements' shape (invert: is
/// not). The operands are compared in their promoted dtype; NaN is in nothing; bool operands
/// are a TypeError, as PyTorch's. assume_unique is accepted and not needed.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
Tensor isin(const Tensor& elements, Scalar test_element, bool assume_unique = false, bool invert = false);
/// A 0-d bool.
Tensor isin(Scalar element, const Tensor& test_elements, bool assume_unique = false, bool invert = false);

// Building (differentiable).
/// The flattened self on diagonal `offset` of a square matrix (diag of reshape(self, {-1})).
Tensor diagflat(const Tensor& self, int64_t offset = 0);
/// The r-element combinations of a 1-d self, one per row, in lexicographic order of positions:
/// [C, r] (with_replacement: positions may repeat, non-decreasing). r = 0 gives [0]; more
/// positions than elements (without replacement) give [0, r].
Tensor combinations(const Tensor& self, int64_t r = 2, bool with_replacement = false);
/// The Vandermonde matrix of a 1-d x: column j is x^(N - 1 - j) (increasing: x^j), N columns
/// (default x's length). bool and int64 give int64. The powers are running products (cumprod),
/// so the gradient is exact at zeros.
Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt, bool increasing = false);

// Products (autograd/src/ops_products_more.cpp). beta 0 ignores self's values (NaN and inf
// included); integer operands take integer beta, alpha and value only (TypeError), as PyTorch's.
/// self + value * tensor1 * tensor2, all three broadcast.
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1);
/// self + value * tensor1 / tensor2; two integer tensors are refused (PyTorch 1.13 too).
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1);
/// beta * self + alpha * sum_b batch1[b] @ batch2[b] for [B, n, m] and [B, m, p]; self broadcasts
/// to [n, p].
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar beta = 1, Scalar alpha = 1);
/// beta * self + alpha * mat @ vec for mat [n, m], vec [m]; self broadcasts to [n].
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, Scalar beta = 1, Scalar alpha = 1);
/// beta * self + alpha * outer(vec1, vec2); self broadcasts to [n, m].
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, Scalar beta = 1, Scalar alpha = 1);
/// The product of two or more 2-d matrices in the cheapest order (linalg::multi_dot); one matrix
/// is copied. PyTorch deprecates it for multi_dot.
Tensor chain_matmul(const std::vector<Tensor>& matrices);
/// outer(self, vec2) (PyTorch's older name).
Tensor ger(const Tensor& self, const Tensor& vec2);
/// sum(self * other) of two 1-d tensors of one length and dtype (dot; wick has no complex
/// numbers to conjugate).
Tensor vdot(const Tensor& self, const Tensor& other);
/// log(det(A)) of square matrices [..., n, n]: NaN where det < 0, -inf where det = 0; the
/// gradient is slogdet's, 0 where the result is NaN (PyTorch's where over slogdet).
Tensor logdet(const Tensor& A);
/// The p-norm distances between the rows i < j of a 2-d input [N, M], in row-major order of the
/// pairs: [N (N - 1) / 2]. p >= 0; gradients as cdist's (PyTorch's _pdist_backward).
Tensor pdist(const Tensor& input, double p = 2);

}  // namespace wick
