// TransformerEncoderLayer and TransformerEncoder.
#include <fmt/format.h>

#include "wick/nn/functional.h"
#include "wick/nn/modules/transformer.h"

namespace wick::nn {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options,
                                                         TensorOptions tensor_options)
    : options_(options) {
  const int64_t E = options.d_model(), ff = options.dim_feedforward();
  WICK_CHECK(ff > 0, "TransformerEncoderLayer: dim_feedforward must be positive, got {}", ff);
  WICK_CHECK(options.activation() == "relu" || options.activation() == "gelu",
             "TransformerEncoderLayer: activation must be \"relu\" or \"gelu\", got \"{}\"", options.activation());
  const bool bias = options.bias();
  self_attn_ = register_module("self_attn",
                               std::make_shared<MultiheadAttentionImpl>(MultiheadAttentionOptions(E, options.nhead())
                                                                            .dropout(options.dropout())
                                                                            .bias(bias)
                                                                            .batch_first(options.batch_first()),
                                                                        tensor_options));
  linear1_ = register_module("linear1", std::make_shared<LinearImpl>(LinearOptions(E, ff).bias(bias), tensor_options));
  dropout_ = register_module("dropout", std::make_shared<DropoutImpl>(options.dropout()));
  linear2_ = register_module("linear2", std::make_shared<LinearImpl>(LinearOptions(ff, E).bias(bias), tensor_options));
  const auto norm = LayerNormOptions({E}).eps(options.layer_norm_eps()).bias(bias);
  norm1_ = register_module("norm1", std::make_shared<LayerNormImpl>(norm, tensor_options));
  norm2_ = register_module("norm2", std::make_shared<LayerNormImpl>(norm, tensor_options));
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
  Tensor y = std::get<0>(self_attn().forward(x, x, x, key_padding_mask, /*need_weights=*/false, mask,
                                             /*average_attn_weights=*/true, is_causal));
  return child(dropout1_).forward(y);
}

Tensor TransformerEncoderLayerImpl::feed_forward_block(const Tensor& x) {
  Tensor h = linear1().forward(x);
  h = options_.activation() == "gelu" ? F::gelu(h) : F::relu(h);
  return child(dropout2_).forward(linear2().forward(child(dropout_).forward(h)));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  WICK_CHECK(src.defined() && (src.dim() == 2 || src.dim() == 3) && src.size(-1) == options_.d_model(),
             "TransformerEncoderLayer: src must be {} (or unbatched [L, E]) with E = d_model = {}, got {}",
             options_.batch_first() ? "[N, L, E]" : "[L, N, E]", options_.d_model(),
             src.defined() ? fmt::format("[{}]", fmt::join(src.sizes(), ", ")) : std::string("undefined"));
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
  WICK_CHECK(options.num_layers() >= 1,
             "TransformerEncoder: num_layers must be at least 1, got {}; an encoder without layers would only "
             "apply its norm",
             options.num_layers());
  WICK_CHECK(!options.encoder_layer().is_empty(),
             "TransformerEncoder: encoder_layer is an empty holder; pass a TransformerEncoderLayer to copy");
  auto list = std::make_shared<ModuleListImpl>();
  // Deep copies, as PyTorch's copy.deepcopy: equal weights at the start, no tensor shared.
  for (int64_t i = 0; i < options.num_layers(); ++i) list->push_back(options.encoder_layer()->clone());
  layers_ = register_module("layers", std::move(list));
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
