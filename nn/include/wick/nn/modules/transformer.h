#pragma once
// TransformerEncoderLayer (torch.nn.TransformerEncoderLayer).
#include <string>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/modules/attention.h"
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

}  // namespace wick::nn
