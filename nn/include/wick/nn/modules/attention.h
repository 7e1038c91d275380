#pragma once
// MultiheadAttention (torch.nn.MultiheadAttention).
#include <tuple>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/modules/linear.h"

namespace wick::nn {

/// MultiheadAttention's options: `MultiheadAttentionOptions(64, 4).dropout(0.1).batch_first(true)`.
/// batch_first is PyTorch's (LibTorch's options lack it). kdim/vdim, add_bias_kv and
/// add_zero_attn are not offered: key and value have embed_dim features
/// (F::multi_head_attention_forward, which the layer calls, has them).
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  WICK_ARG(int64_t, embed_dim);
  /// Must divide embed_dim; each head attends with embed_dim / num_heads features.
  WICK_ARG(int64_t, num_heads);
  /// Dropout on the attention weights, in training mode.
  WICK_ARG(double, dropout) = 0.0;
  /// Whether in_proj and out_proj learn biases.
  WICK_ARG(bool, bias) = true;
  /// Inputs and output are [N, L, E] instead of [L, N, E].
  WICK_ARG(bool, batch_first) = false;
};

/// Multi-head attention, as PyTorch's: the query, key and value are projected by the rows
/// [0, E), [E, 2E), [2E, 3E) of in_proj_weight [3E, E] (+ in_proj_bias [3E]), split into
/// num_heads heads, attended (F::scaled_dot_product_attention's math), merged and projected by
/// the child Linear out_proj: forward is F::multi_head_attention_forward on these parameters. Parameter names are
/// PyTorch's (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias), so a PyTorch state_dict loads name for
/// name. Initialization as PyTorch's: xavier_uniform in_proj_weight, zero biases, Linear's default out_proj.weight.
/// `tensor_options`: the parameters' dtype and device (see LinearImpl).
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads, TensorOptions tensor_options = {})
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads), tensor_options) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options, TensorOptions tensor_options = {});

  /// query [L, N, E], key and value [S, N, E] ([N, L, E] / [N, S, E] with batch_first; or
  /// unbatched [L, E] / [S, E]) -> (output like query, weights). The masks use PyTorch's
  /// MultiheadAttention convention (the opposite of scaled_dot_product_attention's for bool):
  /// key_padding_mask [N, S] (or [S] unbatched), bool true = ignore that key, or float added;
  /// attn_mask [L, S] or [N * num_heads, L, S], bool true = not allowed, or float added.
  /// is_causal applies the causal mask itself (as well as attn_mask when both are given; PyTorch
  /// 2 treats it as a hint that attn_mask is causal). weights is [N, L, S] averaged over heads
  /// (average_attn_weights) or [N, num_heads, L, S], after dropout as PyTorch's; undefined when
  /// need_weights is false. Returns a tuple, as LibTorch's MultiheadAttention.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& in_proj_weight() const { return param(in_proj_weight_); }
  /// Undefined when constructed with bias(false).
  const Tensor& in_proj_bias() const { return param(in_proj_bias_); }
  LinearImpl& out_proj() const { return child(out_proj_); }
  const MultiheadAttentionOptions& options() const { return options_; }

 private:
  MultiheadAttentionOptions options_;
  ParamSlot in_proj_weight_, in_proj_bias_;
  ChildSlot<LinearImpl> out_proj_;
};
WICK_MODULE(MultiheadAttention);

}  // namespace wick::nn
