#pragma once
// TransformerEncoderLayer and TransformerEncoder (torch.nn's).
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

/// TransformerEncoderLayer's options, as LibTorch's and PyTorch's:
/// `TransformerEncoderLayerOptions(64, 4).dim_feedforward(256).dropout(0.0).norm_first(true)`.
/// activation is a name, "relu" or "gelu" (LibTorch takes an enum or a function); batch_first,
/// norm_first and bias are PyTorch's.
struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  WICK_ARG(int64_t, d_model);
  WICK_ARG(int64_t, nhead);
  WICK_ARG(int64_t, dim_feedforward) = 2048;
  WICK_ARG(double, dropout) = 0.1;
  /// "relu" or "gelu" (exact, erf).
  WICK_ARG(std::string, activation) = "relu";
  WICK_ARG(double, layer_norm_eps) = 1e-5;
  /// src is [N, L, E] instead of [L, N, E].
  WICK_ARG(bool, batch_first) = false;
  /// Pre-norm: x + sa(norm1(x)), then x + ff(norm2(x)); post-norm (false): norm1(x + sa(x)),
  /// then norm2(x + ff(x)).
  WICK_ARG(bool, norm_first) = false;
  /// Biases in the linear layers and the layer norms.
  WICK_ARG(bool, bias) = true;
};

/// Self-attention and a feed-forward block, each with dropout, a residual connection and a
/// layer norm, as PyTorch's. Children named as PyTorch's (self_attn, linear1, dropout, linear2,
/// norm1, norm2, dropout1, dropout2), so a PyTorch state_dict loads name for name.
/// `tensor_options`: the parameters' dtype and device (see LinearImpl).
class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead, TensorOptions tensor_options = {})
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead), tensor_options) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options,
                                       TensorOptions tensor_options = {});
  /// src [L, N, E] ([N, L, E] with batch_first, or unbatched [L, E]) -> the same shape.
  /// src_mask and src_key_padding_mask as MultiheadAttention's attn_mask and key_padding_mask;
  /// is_causal applies the causal mask (MultiheadAttention::forward).
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);
  void reset_parameters();

  MultiheadAttentionImpl& self_attn() const { return child(self_attn_); }
  LinearImpl& linear1() const { return child(linear1_); }
  LinearImpl& linear2() const { return child(linear2_); }
  LayerNormImpl& norm1() const { return child(norm1_); }
  LayerNormImpl& norm2() const { return child(norm2_); }
  const TransformerEncoderLayerOptions& options() const { return options_; }

 private:
  Tensor self_attention_block(const Tensor& x, const Tensor& mask, const Tensor& key_padding_mask, bool is_causal);
  Tensor feed_forward_block(const Tensor& x);

  TransformerEncoderLayerOptions options_;
  ChildSlot<MultiheadAttentionImpl> self_attn_;
  ChildSlot<LinearImpl> linear1_;
  ChildSlot<DropoutImpl> dropout_;
  ChildSlot<LinearImpl> linear2_;
  ChildSlot<LayerNormImpl> norm1_, norm2_;
  ChildSlot<DropoutImpl> dropout1_, dropout2_;
};
WICK_MODULE(TransformerEncoderLayer);

/// TransformerEncoder's options, as LibTorch's:
/// `TransformerEncoderOptions(TransformerEncoderLayer(...), 6).norm(LayerNorm(...))`.
struct TransformerEncoderOptions {
  /// `num_layers` deep copies of `encoder_layer`.
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers);
  /// Copies of a TransformerEncoderLayer made from `encoder_layer_options` (float32, CPU).
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options, int64_t num_layers);
  /// The layer every layer of the encoder starts as a copy of; not itself part of the encoder.
  WICK_ARG(TransformerEncoderLayer, encoder_layer);
  WICK_ARG(int64_t, num_layers);
  /// Applied to the last layer's output when set: any module mapping one tensor to one tensor
  /// (LibTorch: an AnyModule; PyTorch: norm=None). Registered as the child `norm` as it is,
  /// not copied, as PyTorch.
  WICK_ARG(std::shared_ptr<Module>, norm);
};

/// A stack of TransformerEncoderLayers, then an optional norm (torch.nn.TransformerEncoder).
/// The layers are deep copies (Module::clone) of the given layer, so all start with its weights
/// and none shares a tensor with it or with another; children are named as PyTorch's (`layers`,
/// a ModuleList of `0`, `1`, ..., and `norm` when given), so a PyTorch state_dict loads name for
/// name (`layers.0.self_attn.in_proj_weight`, `norm.weight`).
class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  /// ValueError when num_layers < 1 (PyTorch 1.13 allows 0, an encoder that is only its norm)
  /// or the layer holder is empty.
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& options);
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers,
                         std::shared_ptr<Module> norm = nullptr);
  /// src through each layer in order, each given `mask`, `src_key_padding_mask` and `is_causal`
  /// (TransformerEncoderLayer::forward), then through the norm if there is one. src [L, N, E]
  /// ([N, L, E] with batch_first, or unbatched [L, E]) -> the same shape.
  Tensor forward(const Tensor& src, const Tensor& mask = {}, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);

  /// The layers, in order (a ModuleList of TransformerEncoderLayerImpl).
  ModuleListImpl& layers() const { return child(layers_); }
  /// Layer i (negative counts from the end).
  TransformerEncoderLayerImpl& layer(int64_t i) const;
  /// The norm, or null when there is none.
  std::shared_ptr<Module> norm() const { return norm_.valid() ? child_ptr(norm_) : nullptr; }
  /// The options as given: the encoder's own modules are layers() and norm(), not the template
  /// layer they hold.
  const TransformerEncoderOptions& options() const { return options_; }

 private:
  TransformerEncoderOptions options_;
  ChildSlot<ModuleListImpl> layers_;
  ChildSlot<Module> norm_;  // invalid when there is no norm (PyTorch registers no child then)
};
WICK_MODULE(TransformerEncoder);

}  // namespace wick::nn
