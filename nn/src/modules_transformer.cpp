// TransformerEncoderLayer and TransformerEncoder.
#include "transformer_parts.h"
#include "wick/nn/modules/transformer.h"

namespace wick::nn {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options,
                                                         TensorOptions tensor_options)
    : options_(options) {
  const int64_t E = options.d_model(), ff = options.dim_feedforward();
  detail::check_transformer_layer_options("TransformerEncoderLayer", ff, options.activation());
  const bool bias = options.bias();
  self_attn_ = register_module("self_attn", detail::transformer_attention(E, options.nhead(), options.dropout(), bias,
                                                                          options.batch_first(), tensor_options));
  linear1_ = register_module("linear1", std::make_shared<LinearImpl>(LinearOptions(E, ff).bias(bias), tensor_options));
  dropout_ = register_module("dropout", std::make_shared<DropoutImpl>(options.dropout()));
  linear2_ = register_module("linear2", std::make_shared<LinearImpl>(LinearOptions(ff, E).bias(bias), tensor_options));
  norm1_ = register_module("norm1", detail::transformer_norm(E, options.layer_norm_eps(), bias, tensor_options));
  norm2_ = register_module("norm2", detail::transformer_norm(E, options.layer_norm_eps(), bias, tensor_options));
  dropout1_ = register_module("dropout1", std::make_shared<DropoutImpl>(options.dropout()));
  dropout2_ = register_module("dropout2", std::make_shared<DropoutImpl>(options.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn().reset_parameters();
  linear1().reset_parameters();
  linear2().reset_parameters();
  norm1().reset_parameters();
  norm2().reset_parameters();
}

Tensor TransformerEncoderLayerImpl::self_attention_block(const Tensor& x, const Tensor& mask,
                                                         const Tensor& key_padding_mask, bool is_causal) {
  return detail::transformer_attention_block(self_attn(), child(dropout1_), x, x, mask, key_padding_mask, is_causal);
}

Tensor TransformerEncoderLayerImpl::feed_forward_block(const Tensor& x) {
  return detail::transformer_feed_forward(x, linear1(), child(dropout_), linear2(), child(dropout2_),
                                          options_.activation());
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  detail::check_transformer_input("TransformerEncoderLayer", "src", src, options_.d_model(), options_.batch_first());
  Tensor x = src;
  if (options_.norm_first()) {
    x = x + self_attention_block(norm1().forward(x), src_mask, src_key_padding_mask, is_causal);
    x = x + feed_forward_block(norm2().forward(x));
  } else {
    x = norm1().forward(x + self_attention_block(x, src_mask, src_key_padding_mask, is_causal));
    x = norm2().forward(x + feed_forward_block(x));
  }
  return x;
}

// ---- TransformerEncoder ----

TransformerEncoderOptions::TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
    : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}

TransformerEncoderOptions::TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options,
                                                     int64_t num_layers)
    : encoder_layer_(TransformerEncoderLayer(encoder_layer_options)), num_layers_(num_layers) {}

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers,
                                               std::shared_ptr<Module> norm)
    : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers).norm(std::move(norm))) {}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderOptions& options) : options_(options) {
  const TransformerEncoderLayer& proto = options.encoder_layer();
  layers_ =
      register_module("layers", detail::clone_layers("TransformerEncoder", "encoder_layer", "TransformerEncoderLayer",
                                                     proto.is_empty() ? nullptr : proto.ptr(), options.num_layers()));
  if (options.norm()) norm_ = register_module("norm", options.norm());
}

TransformerEncoderLayerImpl& TransformerEncoderImpl::layer(int64_t i) const {
  return *layers().at<TransformerEncoderLayerImpl>(i);
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask,
                                       bool is_causal) {
  Tensor x = src;
  const auto n = static_cast<int64_t>(layers().size());
  for (int64_t i = 0; i < n; ++i) x = layer(i).forward(x, mask, src_key_padding_mask, is_causal);
  if (norm_.valid()) x = child(norm_).forward_tensor(x);
  return x;
}

}  // namespace wick::nn
