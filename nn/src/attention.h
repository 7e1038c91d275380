#pragma once
// The attention core shared by F::scaled_dot_product_attention and MultiheadAttention (which
// also returns the weights).
#include <optional>

#include "wick/core/tensor.h"

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

}  // namespace wick::nn::detail
