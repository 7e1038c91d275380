#pragma once
// The pieces TransformerEncoderLayer and TransformerDecoderLayer share (the options checks, the
// attention, norm and feed-forward blocks), and the layer stack TransformerEncoder and
// TransformerDecoder share (deep copies of one layer).
#include <memory>
#include <string>

#include "wick/core/tensor_options.h"
#include "wick/nn/modules/attention.h"
#include "wick/nn/modules/container.h"
#include "wick/nn/modules/dropout.h"
#include "wick/nn/modules/linear.h"
#include "wick/nn/modules/normalization.h"

namespace wick::nn::detail {

/// ValueError naming `layer` unless dim_feedforward > 0 and activation is "relu" or "gelu".
void check_transformer_layer_options(const char* layer, int64_t dim_feedforward, const std::string& activation);

/// A layer's attention: MultiheadAttention(d_model, nhead) with the layer's dropout (on the
/// attention weights), bias and batch_first.
std::shared_ptr<MultiheadAttentionImpl> transformer_attention(int64_t d_model, int64_t nhead, double dropout, bool bias,
                                                              bool batch_first, TensorOptions tensor_options);

/// A layer's LayerNorm over its d_model features.
std::shared_ptr<LayerNormImpl> transformer_norm(int64_t d_model, double eps, bool bias, TensorOptions tensor_options);

/// out_dropout(attn(query, key_value, key_value)), the output only (need_weights false); the masks
/// and is_causal as MultiheadAttentionImpl::forward's.
Tensor transformer_attention_block(MultiheadAttentionImpl& attn, DropoutImpl& out_dropout, const Tensor& query,
                                   const Tensor& key_value, const Tensor& attn_mask, const Tensor& key_padding_mask,
                                   bool is_causal);

/// out_dropout(linear2(dropout(activation(linear1(x))))), activation "relu" or "gelu" (exact).
Tensor transformer_feed_forward(const Tensor& x, LinearImpl& linear1, DropoutImpl& dropout, LinearImpl& linear2,
                                DropoutImpl& out_dropout, const std::string& activation);

/// ValueError naming `layer` and `name` unless x is defined, 2-d or 3-d, with d_model features
/// in its last dim.
void check_transformer_input(const char* layer, const char* name, const Tensor& x, int64_t d_model, bool batch_first);

/// A ModuleList of `num_layers` deep copies (Module::clone) of `layer`, as PyTorch's
/// copy.deepcopy: equal weights at the start, no tensor shared. ValueError naming `owner` when
/// num_layers < 1 or `layer` is null (an empty holder; `layer_arg` names the option and
/// `layer_type` the module to pass).
std::shared_ptr<ModuleListImpl> clone_layers(const char* owner, const char* layer_arg, const char* layer_type,
                                             const std::shared_ptr<Module>& layer, int64_t num_layers);

}  // namespace wick::nn::detail
