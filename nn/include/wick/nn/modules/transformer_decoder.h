#pragma once
// TransformerDecoderLayer and TransformerDecoder (torch.nn's).
#include <memory>
#include <string>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/modules/attention.h"
#include "wick/nn/modules/container.h"
#include "wick/nn/modules/dropout.h"
#include "wick/nn/modules/linear.h"
#include "wick/nn/modules/normalization.h"

namespace wick::nn {

/// TransformerDecoderLayer's options, as LibTorch's and PyTorch's:
/// `TransformerDecoderLayerOptions(64, 4).dim_feedforward(256).dropout(0.0).norm_first(true)`.
/// The fields and their defaults are TransformerEncoderLayerOptions' (activation a name, "relu"
/// or "gelu"; batch_first, norm_first and bias as PyTorch's).
struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  WICK_ARG(int64_t, d_model);
  WICK_ARG(int64_t, nhead);
  WICK_ARG(int64_t, dim_feedforward) = 2048;
  WICK_ARG(double, dropout) = 0.1;
  /// "relu" or "gelu" (exact, erf).
  WICK_ARG(std::string, activation) = "relu";
  WICK_ARG(double, layer_norm_eps) = 1e-5;
  /// tgt and memory are [N, T, E] and [N, S, E] instead of [T, N, E] and [S, N, E].
  WICK_ARG(bool, batch_first) = false;
  /// Pre-norm: x + sa(norm1(x)), x + mha(norm2(x), memory), x + ff(norm3(x)); post-norm (false):
  /// norm1(x + sa(x)), norm2(x + mha(x, memory)), norm3(x + ff(x)).
  WICK_ARG(bool, norm_first) = false;
  /// Biases in the linear layers and the layer norms.
  WICK_ARG(bool, bias) = true;
};

/// Self-attention over the target, attention from the target to the memory (the encoder's
/// output), and a feed-forward block, each with dropout, a residual connection and a layer
/// norm, as PyTorch's. Children named as PyTorch's (self_attn, multihead_attn, linear1, dropout,
/// linear2, norm1, norm2, norm3, dropout1, dropout2, dropout3), so a PyTorch state_dict loads
/// name for name. `tensor_options`: the parameters' dtype and device (see LinearImpl).
class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead, TensorOptions tensor_options = {})
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead), tensor_options) {}
  /// ValueError when dim_feedforward < 1 or the activation is neither "relu" nor "gelu" (and
  /// MultiheadAttention's for d_model and nhead).
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options,
                                       TensorOptions tensor_options = {});
  /// tgt [T, N, E] and memory [S, N, E] ([N, T, E] and [N, S, E] with batch_first, or unbatched
  /// [T, E] and [S, E]) -> tgt's shape. tgt_mask [T, T] and tgt_key_padding_mask [N, T] mask the
  /// self-attention, memory_mask [T, S] and memory_key_padding_mask [N, S] the attention to the
  /// memory, as MultiheadAttention's attn_mask and key_padding_mask (bool true = not allowed, or
  /// float added). tgt_is_causal and memory_is_causal apply the causal mask to the
  /// self-attention and to the attention to the memory (MultiheadAttention::forward's
  /// is_causal; PyTorch 2's arguments).
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool tgt_is_causal = false, bool memory_is_causal = false);
  /// Each child's reset_parameters (PyTorch's initialization).
  void reset_parameters();

  MultiheadAttentionImpl& self_attn() const { return child(self_attn_); }
  MultiheadAttentionImpl& multihead_attn() const { return child(multihead_attn_); }
  LinearImpl& linear1() const { return child(linear1_); }
  LinearImpl& linear2() const { return child(linear2_); }
  LayerNormImpl& norm1() const { return child(norm1_); }
  LayerNormImpl& norm2() const { return child(norm2_); }
  LayerNormImpl& norm3() const { return child(norm3_); }
  const TransformerDecoderLayerOptions& options() const { return options_; }

 private:
  TransformerDecoderLayerOptions options_;
  ChildSlot<MultiheadAttentionImpl> self_attn_, multihead_attn_;
  ChildSlot<LinearImpl> linear1_;
  ChildSlot<DropoutImpl> dropout_;
  ChildSlot<LinearImpl> linear2_;
  ChildSlot<LayerNormImpl> norm1_, norm2_, norm3_;
  ChildSlot<DropoutImpl> dropout1_, dropout2_, dropout3_;
};
WICK_MODULE(TransformerDecoderLayer);

/// TransformerDecoder's options, as LibTorch's:
/// `TransformerDecoderOptions(TransformerDecoderLayer(...), 6).norm(LayerNorm(...))`.
struct TransformerDecoderOptions {
  /// `num_layers` deep copies of `decoder_layer`.
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers);
  /// Copies of a TransformerDecoderLayer made from `decoder_layer_options` (float32, CPU).
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options, int64_t num_layers);
  /// The layer every layer of the decoder starts as a copy of; not itself part of the decoder.
  WICK_ARG(TransformerDecoderLayer, decoder_layer);
  WICK_ARG(int64_t, num_layers);
  /// Applied to the last layer's output when set: any module mapping one tensor to one tensor.
  /// Registered as the child `norm` as it is, not copied, as PyTorch.
  WICK_ARG(std::shared_ptr<Module>, norm);
};

/// A stack of TransformerDecoderLayers, then an optional norm (torch.nn.TransformerDecoder),
/// built as TransformerEncoder: deep copies (Module::clone) of the given layer, children `layers`
/// (a ModuleList of `0`, `1`, ...) and `norm` when given, so the state_dict keys are PyTorch's
/// (`layers.0.multihead_attn.in_proj_weight`, `norm.weight`).
class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  /// ValueError when num_layers < 1 or the layer holder is empty.
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& options);
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers,
                         std::shared_ptr<Module> norm = nullptr);
  /// tgt through each layer in order, each given the same memory, masks and causal flags
  /// (TransformerDecoderLayer::forward), then through the norm if there is one. tgt [T, N, E],
  /// memory [S, N, E] ([N, T, E] and [N, S, E] with batch_first; or unbatched) -> tgt's shape.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool tgt_is_causal = false, bool memory_is_causal = false);

  /// The layers, in order (a ModuleList of TransformerDecoderLayerImpl).
  ModuleListImpl& layers() const { return child(layers_); }
  /// Layer i (negative counts from the end).
  TransformerDecoderLayerImpl& layer(int64_t i) const;
  /// The norm, or null when there is none.
  std::shared_ptr<Module> norm() const { return norm_.valid() ? child_ptr(norm_) : nullptr; }
  /// The options as given (the template layer is not one of the decoder's modules).
  const TransformerDecoderOptions& options() const { return options_; }

 private:
  TransformerDecoderOptions options_;
  ChildSlot<ModuleListImpl> layers_;
  ChildSlot<Module> norm_;  // invalid when there is no norm (PyTorch registers no child then)
};
WICK_MODULE(TransformerDecoder);

}  // namespace wick::nn
