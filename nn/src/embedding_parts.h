#pragma once
// Internal: the pieces F::embedding and F::embedding_bag share (nn/src/functional_embedding.cpp).
#include <cstdint>
#include <optional>

#include "wick/core/tensor.h"

namespace wick::nn::detail {

/// Checks, for `op`: weight defined and 2-d, indices defined, int64 and on the weight's device,
/// and every index in [0, num_embeddings) (IndexError naming the first one outside).
void check_embedding_indices(const char* op, const Tensor& indices, const Tensor& weight);
/// padding_idx in [0, num_embeddings) (a negative one counts from the end), or IndexError.
std::optional<int64_t> wrap_padding_idx(const char* op, std::optional<int64_t> padding_idx, int64_t num_embeddings);
/// NotImplementedError for sparse; ValueError for a negative or NaN max_norm or a NaN norm_type;
/// TypeError for max_norm with a weight that is not floating.
void check_embedding_flags(const char* op, const Tensor& weight, bool sparse, std::optional<double> max_norm,
                           double norm_type);
/// torch.embedding_renorm_: every distinct row named by `indices` (checked, any shape) whose
/// norm_type-norm exceeds max_norm is multiplied in place by max_norm / (norm + 1e-7), under
/// no-grad (Note [Embedding max_norm]).
void embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type);
/// weight's rows at `flat` (1-d, checked) -> [M, dim]. The gradient of a row at padding_idx is
/// zero; with scale_grad_by_freq, each row's gradient is divided by the count of its index in
/// `counted` (the op's whole input, flattened).
Tensor embedding_rows(const Tensor& weight, const Tensor& flat, std::optional<int64_t> padding_idx,
                      bool scale_grad_by_freq, const Tensor& counted);

}  // namespace wick::nn::detail
