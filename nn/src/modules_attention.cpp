// MultiheadAttention.
#include <fmt/format.h>

#include <tuple>

#include "attention.h"
#include "repr.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/functional.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/attention.h"

namespace wick::nn {

namespace {
TensorOptions plain(TensorOptions o) { return o.requires_grad(false); }
}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options, TensorOptions tensor_options)
    : options_(options) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  WICK_CHECK(E > 0 && H > 0, "MultiheadAttention: embed_dim ({}) and num_heads ({}) must be positive", E, H);
  WICK_CHECK(E % H == 0,
             "MultiheadAttention: embed_dim ({}) must be divisible by num_heads ({}); each head gets embed_dim / "
             "num_heads features",
             E, H);
  WICK_CHECK(options.dropout() >= 0.0 && options.dropout() <= 1.0,
             "MultiheadAttention: dropout must be in [0, 1], got {}", options.dropout());
  tensor_options = plain(tensor_options);
  in_proj_weight_ = register_parameter("in_proj_weight", wick::empty({3 * E, E}, tensor_options));
  in_proj_bias_ = register_parameter("in_proj_bias", options.bias() ? wick::empty({3 * E}, tensor_options) : Tensor());
  out_proj_ = register_module("out_proj",
                              std::make_shared<LinearImpl>(LinearOptions(E, E).bias(options.bias()), tensor_options));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight());
  if (in_proj_bias().defined()) init::zeros_(in_proj_bias());
  if (out_proj().bias().defined()) init::zeros_(out_proj().bias());
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights,
                                                           bool is_causal) {
  // The layer's own checks (its parameters' dtype and device); the rest are
  // multi_head_attention_forward's, which names the layer.
  const Tensor& w = in_proj_weight();
  WICK_CHECK(query.defined() && key.defined() && value.defined(),
             "MultiheadAttention: query, key and value must be defined");
  WICK_CHECK_TYPE(query.dtype() == w.dtype() && key.dtype() == w.dtype() && value.dtype() == w.dtype(),
                  "MultiheadAttention: query, key and value are {}, {} and {} but the layer's parameters are {}; "
                  "convert the inputs (or the layer, with .to(dtype))",
                  query.dtype(), key.dtype(), value.dtype(), w.dtype());
  WICK_CHECK(key.device() == query.device() && value.device() == query.device() && w.device() == query.device(),
             "MultiheadAttention: query is on {}, key on {}, value on {} and the layer's parameters on {}; move "
             "them to one device with .to(device)",
             query.device(), key.device(), value.device(), w.device());
  // batch_first: [N, L, E] -> [L, N, E] views, one per distinct tensor so that self-attention
  // keeps its single projection (as PyTorch's).
  const bool transpose = options_.batch_first() && query.dim() == 3;
  Tensor q = query, k = key, v = value;
  if (transpose) {
    q = query.transpose(0, 1);
    k = key.is_same(query) ? q : key.transpose(0, 1);
    v = value.is_same(query) ? q : value.is_same(key) ? k : value.transpose(0, 1);
  }
  F::MultiheadAttentionForwardFuncOptions o(options_.embed_dim(), options_.num_heads(), w, in_proj_bias(), Tensor(),
                                            Tensor(), false, options_.dropout(), out_proj().weight(),
                                            out_proj().bias());
  o.training(is_training())
      .key_padding_mask(key_padding_mask)
      .need_weights(need_weights)
      .attn_mask(attn_mask)
      .average_attn_weights(average_attn_weights);
  Tensor out, weights;
  std::tie(out, weights) = detail::multi_head_attention("MultiheadAttention", q, k, v, o, is_causal);
  return {transpose ? out.transpose(0, 1) : out, weights};
}

std::string MultiheadAttentionImpl::extra_repr() const {
  // PyTorch prints out_proj as a child only.
  return "";
}

}  // namespace wick::nn
