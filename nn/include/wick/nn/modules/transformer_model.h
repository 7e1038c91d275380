#pragma once
// Transformer (torch.nn.Transformer): a TransformerEncoder and a TransformerDecoder.
#include <string>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/modules/transformer.h"
#include "wick/nn/modules/transformer_decoder.h"

namespace wick::nn {

/// Transformer's options, as LibTorch's and PyTorch's:
/// `TransformerOptions().d_model(512).nhead(8).num_encoder_layers(6).num_decoder_layers(6)`, or
/// `TransformerOptions(d_model, nhead)` and `TransformerOptions(d_model, nhead,
/// num_encoder_layers, num_decoder_layers)`. The layer fields are the layers' options'
/// (activation a name, "relu" or "gelu"). No custom_encoder or custom_decoder.
struct TransformerOptions {
  TransformerOptions(int64_t d_model = 512, int64_t nhead = 8) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  WICK_ARG(int64_t, d_model);
  WICK_ARG(int64_t, nhead);
  WICK_ARG(int64_t, num_encoder_layers) = 6;
  WICK_ARG(int64_t, num_decoder_layers) = 6;
  WICK_ARG(int64_t, dim_feedforward) = 2048;
  WICK_ARG(double, dropout) = 0.1;
  /// "relu" or "gelu" (exact, erf).
  WICK_ARG(std::string, activation) = "relu";
  WICK_ARG(double, layer_norm_eps) = 1e-5;
  /// src, tgt and the output are [N, S, E] / [N, T, E] instead of [S, N, E] / [T, N, E].
  WICK_ARG(bool, batch_first) = false;
  /// Every layer pre-norm (see TransformerEncoderLayerOptions::norm_first).
  WICK_ARG(bool, norm_first) = false;
  /// Biases in the linear layers and the layer norms (the final norms too), as PyTorch 2.1's.
  WICK_ARG(bool, bias) = true;
};

/// An encoder of num_encoder_layers TransformerEncoderLayers and a decoder of
/// num_decoder_layers TransformerDecoderLayers, each stack ending in a LayerNorm(d_model), as
/// PyTorch's: children `encoder` (a TransformerEncoder, with its `norm`) and `decoder` (a
/// TransformerDecoder, with its `norm`), so the state_dict keys are PyTorch's
/// (`encoder.layers.0.self_attn.in_proj_weight`, ..., `decoder.norm.bias`). Every parameter of
/// two or more dims is then drawn xavier-uniform, as PyTorch's (reset_parameters).
/// `tensor_options`: the parameters' dtype and device (see LinearImpl).
class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  /// ValueError when a layer count is below 1 or a layer's options are refused.
  explicit TransformerImpl(const TransformerOptions& options = {}, TensorOptions tensor_options = {});
  /// memory = encoder(src, src_mask, src_key_padding_mask, src_is_causal), then
  /// decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
  /// tgt_is_causal, memory_is_causal). src [S, N, E] and tgt [T, N, E] ([N, S, E] and [N, T, E]
  /// with batch_first, or unbatched [S, E] and [T, E]) -> [T, N, E] (tgt's shape). The masks are
  /// the layers' (MultiheadAttention's convention); the causal flags (PyTorch 2's) apply the
  /// causal mask. ValueError naming the shapes when src and tgt differ in batch size or in their
  /// number of dims, or either has other than d_model features, as PyTorch's checks.
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool src_is_causal = false, bool tgt_is_causal = false, bool memory_is_causal = false);
  /// xavier_uniform_ on every parameter of two or more dims (PyTorch's _reset_parameters); the
  /// biases and the norms keep their values.
  void reset_parameters();

  /// The [sz, sz] float mask that lets query i see keys j <= i: -inf above the diagonal, 0 on and
  /// below it, as PyTorch's (float32 on the CPU unless `options` say otherwise); add it as a
  /// tgt_mask. ValueError when sz < 0.
  static Tensor generate_square_subsequent_mask(int64_t sz, TensorOptions options = {});

  TransformerEncoderImpl& encoder() const { return child(encoder_); }
  TransformerDecoderImpl& decoder() const { return child(decoder_); }
  const TransformerOptions& options() const { return options_; }

 private:
  TransformerOptions options_;
  ChildSlot<TransformerEncoderImpl> encoder_;
  ChildSlot<TransformerDecoderImpl> decoder_;
};
WICK_MODULE(Transformer);

}  // namespace wick::nn
