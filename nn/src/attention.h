#pragma once
// The attention core shared by F::scaled_dot_product_attention and
// F::multi_head_attention_forward / MultiheadAttention (which also return the weights).
#include <optional>
#include <tuple>

#include "wick/core/tensor.h"
#include "wick/nn/functional_mha.h"

namespace wick::nn::detail {

struct AttentionResult {
  Tensor output;   ///< [..., L, Ev]
  Tensor weights;  ///< [..., L, S]: softmax(scores) after dropout
};

/// scaled_dot_product_attention's contract (wick/nn/functional.h), returning the weights too.
/// `op` names the caller in error messages.
AttentionResult attention(const char* op, const Tensor& query, const Tensor& key, const Tensor& value,
                          const Tensor& attn_mask, double dropout_p, bool is_causal, std::optional<double> scale);

/// The [L, S] bool mask that keeps key j <= query i.
Tensor causal_keep_mask(int64_t L, int64_t S, Device device);

/// F::multi_head_attention_forward with `op` naming the caller in error messages and, for
/// MultiheadAttention, is_causal: key j > query i is masked too (over all keys, after bias_k and
/// add_zero_attn). nn/src/functional_mha.cpp.
std::tuple<Tensor, Tensor> multi_head_attention(const char* op, const Tensor& query, const Tensor& key,
                                                const Tensor& value,
                                                const functional::MultiheadAttentionForwardFuncOptions& options,
                                                bool is_causal);

}  // namespace wick::nn::detail
