#pragma once
// torch.nn.functional.multi_head_attention_forward with LibTorch's options:
//
//   Tensor out, weights;
//   std::tie(out, weights) = F::multi_head_attention_forward(
//       query, key, value,
//       F::MultiheadAttentionForwardFuncOptions(E, H, in_proj_weight, in_proj_bias, bias_k, bias_v,
//                                               /*add_zero_attn=*/false, /*dropout_p=*/0.1,
//                                               out_proj_weight, out_proj_bias)
//           .training(false).key_padding_mask(pad));
//
// MultiheadAttention's forward is this function (nn/src/functional_mha.cpp).
#include <tuple>

#include "wick/nn/arg.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

/// multi_head_attention_forward's arguments, as LibTorch's MultiheadAttentionForwardFuncOptions:
/// the ten constructor arguments are Python's positional ones, the rest chained setters. An
/// undefined Tensor is Python's None.
struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads, Tensor in_proj_weight,
                                       Tensor in_proj_bias, Tensor bias_k, Tensor bias_v, bool add_zero_attn,
                                       double dropout_p, Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  /// The query's feature count E, which must equal it.
  WICK_ARG(int64_t, embed_dim_to_check);
  /// Must divide E; each head attends with E / num_heads features.
  WICK_ARG(int64_t, num_heads);
  /// [3E, E]: rows [0, E) project the query, [E, 2E) the key, [2E, 3E) the value (unused with
  /// use_separate_proj_weight).
  WICK_ARG(Tensor, in_proj_weight);
  /// [3E] or undefined, split the same way (also with use_separate_proj_weight).
  WICK_ARG(Tensor, in_proj_bias);
  /// [1, 1, E] each (or [E], [1, E]), both or neither: one more key and value, appended to the
  /// projected ones for every batch entry; the masks get a column that keeps it.
  WICK_ARG(Tensor, bias_k);
  WICK_ARG(Tensor, bias_v);
  /// Appends a key and a value of zeros (after bias_k / static_k); the masks keep it.
  WICK_ARG(bool, add_zero_attn);
  /// Dropout on the attention weights, applied when training.
  WICK_ARG(double, dropout_p);
  /// [E_out, E] and [E_out] (or undefined): the output projection.
  WICK_ARG(Tensor, out_proj_weight);
  WICK_ARG(Tensor, out_proj_bias);
  WICK_ARG(bool, training) = true;
  /// [N, S] ([S] unbatched): bool true = ignore that key, or floating (added).
  WICK_ARG(Tensor, key_padding_mask) = {};
  WICK_ARG(bool, need_weights) = true;
  /// [L, S] or [N * num_heads, L, S]: bool true = not allowed, or floating (added).
  WICK_ARG(Tensor, attn_mask) = {};
  /// Project with q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim]
  /// instead of in_proj_weight; key and value may then have kdim / vdim features.
  WICK_ARG(bool, use_separate_proj_weight) = false;
  WICK_ARG(Tensor, q_proj_weight) = {};
  WICK_ARG(Tensor, k_proj_weight) = {};
  WICK_ARG(Tensor, v_proj_weight) = {};
  /// [N * num_heads, S', E / num_heads]: projected keys / values used as they are, in place of
  /// projecting key / value (which must still be given and well shaped, as PyTorch's).
  WICK_ARG(Tensor, static_k) = {};
  WICK_ARG(Tensor, static_v) = {};
  /// Weights averaged over the heads ([N, L, S]) or per head ([N, num_heads, L, S]).
  WICK_ARG(bool, average_attn_weights) = true;
};

/// PyTorch 1.13's multi_head_attention_forward: query [L, N, E], key [S, N, kdim], value
/// [S, N, vdim] (kdim = vdim = E unless use_separate_proj_weight), or unbatched [L, E], [S, kdim],
/// [S, vdim] -> (output [L, N, E_out] (or [L, E_out]), weights [N, L, S_all] averaged over heads
/// or [N, num_heads, L, S_all] per head (without N unbatched), taken after dropout; undefined
/// when need_weights is false). S_all counts the keys after bias_k, static_k and add_zero_attn.
/// A query whose keys are all masked gives NaN, as PyTorch's. Masks combine as PyTorch 2's: a
/// bool one becomes 0 / -inf and float ones add (Note [MHA mask combination]). Bad shapes,
/// dtypes and devices raise ValueError / TypeError naming multi_head_attention_forward.
/// A composite of differentiable ops: twice differentiable on every device.
std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& options);

}  // namespace wick::nn::functional
