// Transformer.
#include <fmt/format.h>

#include <limits>

#include "shape_text.h"
#include "transformer_parts.h"
#include "wick/autograd/functions.h"
#include "wick/nn/init.h"
#include "wick/nn/modules/transformer_model.h"

namespace wick::nn {

using detail::shape_str;

TransformerImpl::TransformerImpl(const TransformerOptions& options, TensorOptions tensor_options) : options_(options) {
  const int64_t E = options.d_model();
  const auto encoder_layer = TransformerEncoderLayer(TransformerEncoderLayerOptions(E, options.nhead())
                                                         .dim_feedforward(options.dim_feedforward())
                                                         .dropout(options.dropout())
                                                         .activation(options.activation())
                                                         .layer_norm_eps(options.layer_norm_eps())
                                                         .batch_first(options.batch_first())
                                                         .norm_first(options.norm_first())
                                                         .bias(options.bias()),
                                                     tensor_options);
  const auto decoder_layer = TransformerDecoderLayer(TransformerDecoderLayerOptions(E, options.nhead())
                                                         .dim_feedforward(options.dim_feedforward())
                                                         .dropout(options.dropout())
                                                         .activation(options.activation())
                                                         .layer_norm_eps(options.layer_norm_eps())
                                                         .batch_first(options.batch_first())
                                                         .norm_first(options.norm_first())
                                                         .bias(options.bias()),
                                                     tensor_options);
  auto final_norm = [&] {
    return detail::transformer_norm(E, options.layer_norm_eps(), options.bias(), tensor_options);
  };
  encoder_ = register_module(
      "encoder", std::make_shared<TransformerEncoderImpl>(
                     TransformerEncoderOptions(encoder_layer, options.num_encoder_layers()).norm(final_norm())));
  decoder_ = register_module(
      "decoder", std::make_shared<TransformerDecoderImpl>(
                     TransformerDecoderOptions(decoder_layer, options.num_decoder_layers()).norm(final_norm())));
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (Tensor p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                                const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask,
                                bool src_is_causal, bool tgt_is_causal, bool memory_is_causal) {
  const int64_t E = options_.d_model();
  const bool batch_first = options_.batch_first();
  WICK_CHECK(src.defined() && tgt.defined() && (src.dim() == 2 || src.dim() == 3) && tgt.dim() == src.dim(),
             "Transformer: src {} and tgt {} must both be 3-d ({} and {}) or both 2-d (unbatched [S, E] and [T, E])",
             shape_str(src), shape_str(tgt), batch_first ? "[N, S, E]" : "[S, N, E]",
             batch_first ? "[N, T, E]" : "[T, N, E]");
  const int64_t bdim = batch_first ? 0 : 1;
  WICK_CHECK(src.dim() == 2 || src.size(bdim) == tgt.size(bdim),
             "Transformer: src {} and tgt {} must have the same batch size (dim {}{}), got {} and {}", shape_str(src),
             shape_str(tgt), bdim, batch_first ? ", batch_first" : "", src.size(bdim), tgt.size(bdim));
  WICK_CHECK(src.size(-1) == E && tgt.size(-1) == E,
             "Transformer: src {} and tgt {} must have d_model = {} features in the last dim", shape_str(src),
             shape_str(tgt), E);
  const Tensor memory = encoder().forward(src, src_mask, src_key_padding_mask, src_is_causal);
  return decoder().forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                           tgt_is_causal, memory_is_causal);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz, TensorOptions options) {
  WICK_CHECK(sz >= 0, "Transformer::generate_square_subsequent_mask: sz must be non-negative, got {}", sz);
  return full({sz, sz}, -std::numeric_limits<double>::infinity(), options.requires_grad(false)).triu(1);
}

}  // namespace wick::nn
