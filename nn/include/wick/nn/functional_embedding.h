#pragma once
// The lookup tables of wick::nn::functional (alias F): embedding and embedding_bag, with
// torch.nn.functional's semantics of PyTorch 1.13 and LibTorch's options structs
// (F::EmbeddingFuncOptions, F::EmbeddingBagFuncOptions). Included by wick/nn/functional.h; the
// layers are in wick/nn/modules/embedding.h and wick/nn/modules/embedding_bag.h.
//
// Both are compositions of differentiable ops (index_select, index_add, max along a dim, where),
// plus one node that scales or masks the weight's gradient (padding_idx, scale_grad_by_freq), so
// they run on every device and are differentiable twice. Bad arguments are refused before the
// weight is touched: max_norm's in-place renormalization never half-applies (Note [Embedding
// max_norm] in nn/src/functional_embedding.cpp).
#include <cstdint>
#include <optional>
#include <string>

#include "wick/autograd/functions.h"
#include "wick/nn/arg.h"

namespace wick::nn {

/// How EmbeddingBag reduces each bag: LibTorch's torch::kSum, torch::kMean, torch::kMax (tag types
/// that LibTorch shares with the losses' reductions; wick spells them as Reduction is spelled).
enum class EmbeddingBagMode { Sum, Mean, Max };
/// "sum", "mean", "max": PyTorch's spelling.
const char* embedding_bag_mode_name(EmbeddingBagMode mode);
/// Parses PyTorch's spelling (ValueError for any other string).
EmbeddingBagMode embedding_bag_mode_from_string(const std::string& s);

namespace functional {

/// F::embedding's options, as LibTorch's F::EmbeddingFuncOptions.
struct EmbeddingFuncOptions {
  /// The row that gets no gradient (negative counts from the end).
  WICK_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  /// Rows looked up whose norm_type-norm exceeds this are rescaled in place first (>= 0).
  WICK_ARG(std::optional<double>, max_norm) = std::nullopt;
  WICK_ARG(double, norm_type) = 2.0;
  /// Each row's gradient is divided by how often its index occurs in the indices.
  WICK_ARG(bool, scale_grad_by_freq) = false;
  /// Must stay false: wick has no sparse gradients (NotImplementedError).
  WICK_ARG(bool, sparse) = false;
};

/// weight[indices]: indices int64 of any shape, weight [num_embeddings, dim] -> [*indices.shape,
/// dim]. The row at padding_idx keeps its value in the output but gets no gradient.
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt);

/// torch.nn.functional.embedding of PyTorch 1.13 with every option. With max_norm, each distinct
/// row the indices name whose norm_type-norm exceeds max_norm is first multiplied in place, under
/// no-grad, by max_norm / (norm + 1e-7) (torch.embedding_renorm_; a repeated index renormalizes
/// its row once; the weight's version is bumped as by any in-place op, so a graph that saved the
/// weight refuses to run backward, as in PyTorch). scale_grad_by_freq divides each occurrence's
/// gradient by its index's count in `indices`. IndexError for an index outside [0,
/// num_embeddings) or a padding_idx outside [-num_embeddings, num_embeddings); TypeError for
/// indices that are not int64; ValueError for a weight that is not 2-d, a negative or NaN
/// max_norm, a NaN norm_type, or devices that differ; NotImplementedError for sparse = true.
Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& options);

/// F::embedding_bag's options, as LibTorch's F::EmbeddingBagFuncOptions (mode defaults to Mean,
/// as PyTorch's).
struct EmbeddingBagFuncOptions {
  /// For a 1-d input: where each bag starts (int64, 1-d, starting at 0, non-decreasing, at most
  /// the input's length). Must be undefined for a 2-d input.
  WICK_ARG(Tensor, offsets) = Tensor();
  WICK_ARG(std::optional<double>, max_norm) = std::nullopt;
  WICK_ARG(double, norm_type) = 2.0;
  WICK_ARG(bool, scale_grad_by_freq) = false;
  WICK_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  WICK_ARG(bool, sparse) = false;
  /// One weight per index (the input's shape and the weight's dtype); mode Sum only.
  WICK_ARG(Tensor, per_sample_weights) = Tensor();
  /// offsets holds one more entry, the end of the last bag (CSR layout).
  WICK_ARG(bool, include_last_offset) = false;
  /// Indices equal to it are left out of their bag (negative counts from the end).
  WICK_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// torch.nn.functional.embedding_bag of PyTorch 1.13: the sum, mean or max of the rows of each
/// bag -> [B, dim]. A 2-d input [B, L] is B bags of L indices; a 1-d input [N] is cut into bags
/// by offsets: bag b is input[offsets[b] : offsets[b + 1]], the last one running to N, or, with
/// include_last_offset, offsets has B + 1 entries and indices past the last one are in no bag
/// (for a 2-d input that means B - 1 bags, the last row left out, as PyTorch's arange offsets
/// give). per_sample_weights (Sum only) scale each row before the sum. Indices equal to
/// padding_idx are left out: they add nothing, do not count in a mean, never win a max, and get
/// no gradient. A bag with nothing in it gives zeros in every mode. max_norm renormalizes every
/// row the input names first, as F::embedding; scale_grad_by_freq (not with Max) divides each
/// occurrence's gradient by its index's count in the input. Differentiable in weight and
/// per_sample_weights; Max sends each output's gradient to the first row holding the maximum.
/// ValueError for an input that is not 1-d or 2-d, offsets given with a 2-d input or missing
/// with a 1-d one, offsets that are not 1-d, do not start at 0, decrease or pass the input's
/// length, empty offsets with include_last_offset, per_sample_weights of another shape or with
/// a mode other than Sum, scale_grad_by_freq with Max; TypeError for input or offsets that are
/// not int64 or per_sample_weights not of the weight's dtype; IndexError for an index or
/// padding_idx out of range; NotImplementedError for sparse = true; and F::embedding's checks.
/// All are raised before max_norm changes the weight.
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& options = {});

}  // namespace functional
}  // namespace wick::nn
