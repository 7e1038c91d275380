#pragma once
// Part of the op API of functions.h (which includes this file): counting, searching and building.
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

namespace wick {

// Counting, searching and building (docs/tensors.md, "Counting, searching and building"). The
// counting and searching ops run on the host and give results on the input's device with no
// grad_fn (Note [Host ops] in autograd/src/host_ops.h); the building ops are differentiable.
/// torch.unique: (values, inverse, counts). Without dim the sorted distinct elements (1-d), each
/// element's position among them (the input's shape) and how often each occurs; with dim the
/// distinct slices along it (unique_dim). inverse and counts are empty [0] unless asked for. Always
/// sorted, NaNs last and each counted once (Note [unique] in autograd/src/ops_unique.cpp).
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& a, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false, std::optional<int64_t> dim = std::nullopt);
/// LibTorch's unique_dim: the distinct slices along dim, sorted lexicographically.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& a, int64_t dim, bool sorted = true,
                                              bool return_inverse = false, bool return_counts = false);
/// Collapses runs of equal consecutive elements (or slices along dim); no sorting.
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& a, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);
/// Occurrences of each value of a 1-d int64 tensor of non-negative values (length max + 1, at
/// least minlength): int64 counts, or the sums of `weights` (float32 for float32 weights, else
/// float64). An empty input gives int64 zeros [minlength], as PyTorch.
Tensor bincount(const Tensor& a, const Tensor& weights = {}, int64_t minlength = 0);
/// A histogram of a floating tensor in `bins` equal bins over [min, max] (min == max: the data's
/// range); elements outside and NaN are left out (Note [histc and searchsorted]).
Tensor histc(const Tensor& a, int64_t bins = 100, Scalar min = 0, Scalar max = 0);
/// int64 positions where `input` would be inserted into the last dim of `sorted_sequence` (1-d, or
/// with the input's leading dims) to keep it sorted: the first such (right: the last). side
/// ("left"/"right") is the same choice; sorter (int64, the boundaries' shape) reads an unsorted
/// sequence in sorted order. out_int32 must be false (wick has no int32).
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const Tensor& sorter = {});
Tensor searchsorted(const Tensor& sorted_sequence, Scalar input, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const Tensor& sorter = {});
/// searchsorted with 1-d boundaries and the operands swapped, as torch.bucketize.
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor bucketize(Scalar input, const Tensor& boundaries, bool out_int32 = false, bool right = false);
/// Grids of 0-d or 1-d tensors of one dtype: with "ij" grid i varies along dim i; "xy" swaps the
/// first two dims. The grids are views (expand).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij");
/// Every combination of the elements of 1-d tensors, one per row: [n0 * n1 * ..., count].
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
/// The [2, N] int64 (row, col) indices of the lower (upper) triangle of a row x col matrix, with
/// col - row <= offset (>= offset), in row-major order.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions opts = kInt64);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions opts = kInt64);
/// A tensor with one more dim whose planes (dim1, dim2) hold a's last dim on diagonal `offset`.
Tensor diag_embed(const Tensor& a, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
/// The block-diagonal matrix of tensors of at most 2 dims (0-d: [1, 1], 1-d: one row), in their
/// result type; no tensors gives [1, 0], as PyTorch.
Tensor block_diag(const std::vector<Tensor>& tensors);
/// The Kronecker product: [a0 * b0, a1 * b1, ...] over the right-aligned dims of a and b.
Tensor kron(const Tensor& a, const Tensor& b);

}  // namespace wick
