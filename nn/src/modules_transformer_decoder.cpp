// TransformerDecoderLayer and TransformerDecoder.
#include "transformer_parts.h"
#include "wick/nn/modules/transformer_decoder.h"

namespace wick::nn {

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options,
                                                         TensorOptions tensor_options)
    : options_(options) {
  const int64_t E = options.d_model(), ff = options.dim_feedforward();
  detail::check_transformer_layer_options("TransformerDecoderLayer", ff, options.activation());
  const bool bias = options.bias();
  const double p = options.dropout(), eps = options.layer_norm_eps();
  auto attention = [&] {
    return detail::transformer_attention(E, options.nhead(), p, bias, options.batch_first(), tensor_options);
  };
  // Registered in PyTorch's order, which is the state_dict's and print()'s.
  self_attn_ = register_module("self_attn", attention());
  multihead_attn_ = register_module("multihead_attn", attention());
  linear1_ = register_module("linear1", std::make_shared<LinearImpl>(LinearOptions(E, ff).bias(bias), tensor_options));
  dropout_ = register_module("dropout", std::make_shared<DropoutImpl>(p));
  linear2_ = register_module("linear2", std::make_shared<LinearImpl>(LinearOptions(ff, E).bias(bias), tensor_options));
  norm1_ = register_module("norm1", detail::transformer_norm(E, eps, bias, tensor_options));
  norm2_ = register_module("norm2", detail::transformer_norm(E, eps, bias, tensor_options));
  norm3_ = register_module("norm3", detail::transformer_norm(E, eps, bias, tensor_options));
  dropout1_ = register_module("dropout1", std::make_shared<DropoutImpl>(p));
  dropout2_ = register_module("dropout2", std::make_shared<DropoutImpl>(p));
  dropout3_ = register_module("dropout3", std::make_shared<DropoutImpl>(p));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn().reset_parameters();
  multihead_attn().reset_parameters();
  linear1().reset_parameters();
  linear2().reset_parameters();
  norm1().reset_parameters();
  norm2().reset_parameters();
  norm3().reset_parameters();
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask, bool tgt_is_causal,
                                            bool memory_is_causal) {
  const int64_t E = options_.d_model();
  const bool batch_first = options_.batch_first();
  detail::check_transformer_input("TransformerDecoderLayer", "tgt", tgt, E, batch_first);
  detail::check_transformer_input("TransformerDecoderLayer", "memory", memory, E, batch_first);
  auto self_block = [&](const Tensor& x) {
    return detail::transformer_attention_block(self_attn(), child(dropout1_), x, x, tgt_mask, tgt_key_padding_mask,
                                               tgt_is_causal);
  };
  auto memory_block = [&](const Tensor& x) {
    return detail::transformer_attention_block(multihead_attn(), child(dropout2_), x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal);
  };
  auto feed_forward = [&](const Tensor& x) {
    return detail::transformer_feed_forward(x, linear1(), child(dropout_), linear2(), child(dropout3_),
                                            options_.activation());
  };
  Tensor x = tgt;
  if (options_.norm_first()) {
    x = x + self_block(norm1().forward(x));
    x = x + memory_block(norm2().forward(x));
    x = x + feed_forward(norm3().forward(x));
  } else {
    x = norm1().forward(x + self_block(x));
    x = norm2().forward(x + memory_block(x));
    x = norm3().forward(x + feed_forward(x));
  }
  return x;
}

// ---- TransformerDecoder ----

TransformerDecoderOptions::TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
    : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}

TransformerDecoderOptions::TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options,
                                                     int64_t num_layers)
    : decoder_layer_(TransformerDecoderLayer(decoder_layer_options)), num_layers_(num_layers) {}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers,
                                               std::shared_ptr<Module> norm)
    : TransformerDecoderImpl(TransformerDecoderOptions(std::move(decoder_layer), num_layers).norm(std::move(norm))) {}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderOptions& options) : options_(options) {
  const TransformerDecoderLayer& proto = options.decoder_layer();
  layers_ =
      register_module("layers", detail::clone_layers("TransformerDecoder", "decoder_layer", "TransformerDecoderLayer",
                                                     proto.is_empty() ? nullptr : proto.ptr(), options.num_layers()));
  if (options.norm()) norm_ = register_module("norm", options.norm());
}

TransformerDecoderLayerImpl& TransformerDecoderImpl::layer(int64_t i) const {
  return *layers().at<TransformerDecoderLayerImpl>(i);
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask, bool tgt_is_causal,
                                       bool memory_is_causal) {
  Tensor x = tgt;
  const auto n = static_cast<int64_t>(layers().size());
  for (int64_t i = 0; i < n; ++i)
    x = layer(i).forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, tgt_is_causal,
                         memory_is_causal);
  if (norm_.valid()) x = child(norm_).forward_tensor(x);
  return x;
}

}  // namespace wick::nn
