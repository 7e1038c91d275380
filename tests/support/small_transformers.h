#pragma once
// Small float64 transformer blocks of the transformer decoder tests
// (tests/nn/transformer_decoder*_test.cpp): d_model 4, 2 heads, feed-forward 6, no dropout.
#include <cstdint>

#include "wick/nn/nn.h"

namespace wick::test::small_transformers {

// A post-norm (or pre-norm) relu layer, d_model 4, 2 heads, feed-forward 6, no dropout, float64.
inline nn::TransformerDecoderLayer small_layer(bool norm_first = false) {
  return nn::TransformerDecoderLayer(
      nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).norm_first(norm_first),
      TensorOptions(kFloat64));
}

// A Transformer with d_model 4, 2 heads, feed-forward 6, no dropout, float64.
inline nn::Transformer small_transformer(int64_t encoder_layers, int64_t decoder_layers, bool batch_first = false) {
  return nn::Transformer(nn::TransformerOptions(4, 2, encoder_layers, decoder_layers)
                             .dim_feedforward(6)
                             .dropout(0.0)
                             .batch_first(batch_first),
                         TensorOptions(kFloat64));
}

}  // namespace wick::test::small_transformers
