#pragma once
// MultiheadAttention (torch.nn.MultiheadAttention).
#include <tuple>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/modules/linear.h"

namespace wick::nn {

/// MultiheadAttention's options, as LibTorch's:
/// `MultiheadAttentionOptions(64, 4).dropout(0.1).kdim(32).vdim(16).add_bias_kv(true)`.
/// batch_first is PyTorch's (LibTorch's options lack it). kdim and vdim start as embed_dim (set
/// by the constructor, as LibTorch's: setting embed_dim later leaves them).
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  WICK_ARG(int64_t, embed_dim);
  /// Must divide embed_dim; each head attends with embed_dim / num_heads features.
  WICK_ARG(int64_t, num_heads);
  /// Dropout on the attention weights, in training mode.
  WICK_ARG(double, dropout) = 0.0;
  /// Whether in_proj and out_proj learn biases.
  WICK_ARG(bool, bias) = true;
  /// Learn bias_k and bias_v [1, 1, embed_dim]: one more key and value for every batch entry.
  WICK_ARG(bool, add_bias_kv) = false;
  /// Append a key and a value of zeros (after bias_k / bias_v).
  WICK_ARG(bool, add_zero_attn) = false;
  /// The key's and the value's feature counts (at least 1). Either one other than embed_dim
  /// gives separate q/k/v_proj_weight instead of in_proj_weight, as PyTorch's.
  WICK_ARG(int64_t, kdim);
  WICK_ARG(int64_t, vdim);
  /// Inputs and output are [N, L, E] instead of [L, N, E].
  WICK_ARG(bool, batch_first) = false;
};

/// Multi-head attention, as PyTorch's: the query, key and value are projected by the rows
/// [0, E), [E, 2E), [2E, 3E) of in_proj_weight [3E, E] (+ in_proj_bias [3E]) -- or, when kdim or
/// vdim differ from E, by q_proj_weight [E, E], k_proj_weight [E, kdim] and v_proj_weight
/// [E, vdim] (no in_proj_weight; in_proj_bias stays) --, split into num_heads heads, attended
/// (F::scaled_dot_product_attention's math; bias_k / bias_v and add_zero_attn append keys),
/// merged and projected by the child Linear out_proj: forward is F::multi_head_attention_forward
/// on these parameters. Parameter names and order are PyTorch's (in_proj_weight or q/k/v_proj_weight,
/// in_proj_bias, bias_k, bias_v, out_proj.weight, out_proj.bias), so a PyTorch state_dict loads
/// name for name. Initialization as PyTorch's: xavier_uniform projection weights, xavier_normal
/// bias_k / bias_v, zero biases, Linear's default out_proj.weight.
/// `tensor_options`: the parameters' dtype and device (see LinearImpl).
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads, TensorOptions tensor_options = {})
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads), tensor_options) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options, TensorOptions tensor_options = {});

  /// query [L, N, E], key [S, N, kdim] and value [S, N, vdim] ([N, L, E] / [N, S, kdim] /
  /// [N, S, vdim] with batch_first; or unbatched [L, E] / [S, kdim] / [S, vdim]) -> (output like
  /// query, weights). The masks use PyTorch's
  /// MultiheadAttention convention (the opposite of scaled_dot_product_attention's for bool):
  /// key_padding_mask [N, S] (or [S] unbatched), bool true = ignore that key, or float added;
  /// attn_mask [L, S] or [N * num_heads, L, S], bool true = not allowed, or float added.
  /// is_causal applies the causal mask itself (as well as attn_mask when both are given; PyTorch
  /// 2 treats it as a hint that attn_mask is causal). weights is [N, L, S] averaged over heads
  /// (average_attn_weights) or [N, num_heads, L, S], after dropout as PyTorch's; undefined when
  /// need_weights is false; S counts bias_k's and add_zero_attn's keys too. Returns a tuple, as LibTorch's
  /// MultiheadAttention.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  void reset_parameters();
  std::string extra_repr() const override;

  /// [3E, E]; undefined when kdim or vdim differ from embed_dim.
  const Tensor& in_proj_weight() const { return param(in_proj_weight_); }
  /// [E, E], [E, kdim], [E, vdim]; undefined when kdim and vdim equal embed_dim.
  const Tensor& q_proj_weight() const { return param(q_proj_weight_); }
  const Tensor& k_proj_weight() const { return param(k_proj_weight_); }
  const Tensor& v_proj_weight() const { return param(v_proj_weight_); }
  /// Undefined when constructed with bias(false).
  const Tensor& in_proj_bias() const { return param(in_proj_bias_); }
  /// [1, 1, E] each; undefined without add_bias_kv.
  const Tensor& bias_k() const { return param(bias_k_); }
  const Tensor& bias_v() const { return param(bias_v_); }
  LinearImpl& out_proj() const { return child(out_proj_); }
  const MultiheadAttentionOptions& options() const { return options_; }

 private:
  // PyTorch's _qkv_same_embed_dim: in_proj_weight rather than q/k/v_proj_weight.
  bool qkv_same_embed_dim() const {
    return options_.kdim() == options_.embed_dim() && options_.vdim() == options_.embed_dim();
  }
  MultiheadAttentionOptions options_;
  ParamSlot in_proj_weight_, q_proj_weight_, k_proj_weight_, v_proj_weight_, in_proj_bias_, bias_k_, bias_v_;
  ChildSlot<LinearImpl> out_proj_;
};
WICK_MODULE(MultiheadAttention);

}  // namespace wick::nn
