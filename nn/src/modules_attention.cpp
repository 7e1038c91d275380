// MultiheadAttention.
#include <fmt/format.h>

#include <tuple>
#include <vector>

#include "attention.h"
#include "repr.h"
#include "shape_text.h"
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
  // PyTorch 1.13 refuses negative kdim / vdim (torch.empty) but takes 0, a zero-width key or
  // value whose projection is all bias; wick refuses it too, as a likely mistake.
  WICK_CHECK(options.kdim() > 0 && options.vdim() > 0,
             "MultiheadAttention: kdim ({}) and vdim ({}), the key's and the value's feature counts, must be "
             "positive (they default to embed_dim = {})",
             options.kdim(), options.vdim(), E);
  WICK_CHECK(options.dropout() >= 0.0 && options.dropout() <= 1.0,
             "MultiheadAttention: dropout must be in [0, 1], got {}", options.dropout());
  tensor_options = plain(tensor_options);
  auto param_if = [&](bool on, std::vector<int64_t> shape) {
    return on ? wick::empty(shape, tensor_options) : Tensor();
  };
  // PyTorch's registration order (its state_dict order): the unused projection entries are None.
  const bool same = qkv_same_embed_dim();
  if (same) in_proj_weight_ = register_parameter("in_proj_weight", wick::empty({3 * E, E}, tensor_options));
  q_proj_weight_ = register_parameter("q_proj_weight", param_if(!same, {E, E}));
  k_proj_weight_ = register_parameter("k_proj_weight", param_if(!same, {E, options.kdim()}));
  v_proj_weight_ = register_parameter("v_proj_weight", param_if(!same, {E, options.vdim()}));
  if (!same) in_proj_weight_ = register_parameter("in_proj_weight", Tensor());
  in_proj_bias_ = register_parameter("in_proj_bias", param_if(options.bias(), {3 * E}));
  out_proj_ = register_module("out_proj",
                              std::make_shared<LinearImpl>(LinearOptions(E, E).bias(options.bias()), tensor_options));
  bias_k_ = register_parameter("bias_k", param_if(options.add_bias_kv(), {1, 1, E}));
  bias_v_ = register_parameter("bias_v", param_if(options.add_bias_kv(), {1, 1, E}));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  for (const Tensor* w : {&in_proj_weight(), &q_proj_weight(), &k_proj_weight(), &v_proj_weight()})
    if (w->defined()) init::xavier_uniform_(*w);
  if (in_proj_bias().defined()) init::zeros_(in_proj_bias());
  if (out_proj().bias().defined()) init::zeros_(out_proj().bias());
  for (const Tensor* b : {&bias_k(), &bias_v()})
    if (b->defined()) init::xavier_normal_(*b);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights,
                                                           bool is_causal) {
  // The layer's own checks (its parameters' dtype and device, kdim / vdim); the rest are
  // multi_head_attention_forward's, which names the layer.
  const bool same = qkv_same_embed_dim();
  const Tensor& w = same ? in_proj_weight() : q_proj_weight();
  WICK_CHECK(query.defined() && key.defined() && value.defined(),
             "MultiheadAttention: query, key and value must be defined");
  WICK_CHECK(query.dim() < 1 || query.size(-1) == options_.embed_dim(),
             "MultiheadAttention: query {} must have embed_dim = {} features in the last dim", detail::shape_str(query),
             options_.embed_dim());
  WICK_CHECK(key.dim() < 1 || value.dim() < 1 || (key.size(-1) == options_.kdim() && value.size(-1) == options_.vdim()),
             "MultiheadAttention: key {} and value {} must have kdim = {} and vdim = {} features in the last dim "
             "(set them with MultiheadAttentionOptions::kdim / vdim)",
             detail::shape_str(key), detail::shape_str(value), options_.kdim(), options_.vdim());
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
  F::MultiheadAttentionForwardFuncOptions o(options_.embed_dim(), options_.num_heads(), in_proj_weight(),
                                            in_proj_bias(), bias_k(), bias_v(), options_.add_zero_attn(),
                                            options_.dropout(), out_proj().weight(), out_proj().bias());
  o.training(is_training())
      .use_separate_proj_weight(!same)
      .q_proj_weight(q_proj_weight())
      .k_proj_weight(k_proj_weight())
      .v_proj_weight(v_proj_weight())
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
