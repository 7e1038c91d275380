// The pieces the transformer layers and stacks share.
#include "transformer_parts.h"

#include <fmt/format.h>

#include "shape_text.h"
#include "wick/nn/functional.h"

namespace wick::nn::detail {

void check_transformer_layer_options(const char* layer, int64_t dim_feedforward, const std::string& activation) {
  WICK_CHECK(dim_feedforward > 0, "{}: dim_feedforward must be positive, got {}", layer, dim_feedforward);
  WICK_CHECK(activation == "relu" || activation == "gelu", "{}: activation must be \"relu\" or \"gelu\", got \"{}\"",
             layer, activation);
}

std::shared_ptr<MultiheadAttentionImpl> transformer_attention(int64_t d_model, int64_t nhead, double dropout, bool bias,
                                                              bool batch_first, TensorOptions tensor_options) {
  return std::make_shared<MultiheadAttentionImpl>(
      MultiheadAttentionOptions(d_model, nhead).dropout(dropout).bias(bias).batch_first(batch_first), tensor_options);
}

std::shared_ptr<LayerNormImpl> transformer_norm(int64_t d_model, double eps, bool bias, TensorOptions tensor_options) {
  return std::make_shared<LayerNormImpl>(LayerNormOptions({d_model}).eps(eps).bias(bias), tensor_options);
}

Tensor transformer_attention_block(MultiheadAttentionImpl& attn, DropoutImpl& out_dropout, const Tensor& query,
                                   const Tensor& key_value, const Tensor& attn_mask, const Tensor& key_padding_mask,
                                   bool is_causal) {
  Tensor y = std::get<0>(attn.forward(query, key_value, key_value, key_padding_mask, /*need_weights=*/false, attn_mask,
                                      /*average_attn_weights=*/true, is_causal));
  return out_dropout.forward(y);
}

Tensor transformer_feed_forward(const Tensor& x, LinearImpl& linear1, DropoutImpl& dropout, LinearImpl& linear2,
                                DropoutImpl& out_dropout, const std::string& activation) {
  Tensor h = linear1.forward(x);
  h = activation == "gelu" ? F::gelu(h) : F::relu(h);
  return out_dropout.forward(linear2.forward(dropout.forward(h)));
}

void check_transformer_input(const char* layer, const char* name, const Tensor& x, int64_t d_model, bool batch_first) {
  WICK_CHECK(x.defined() && (x.dim() == 2 || x.dim() == 3) && x.size(-1) == d_model,
             "{}: {} must be {} (or unbatched [L, E]) with E = d_model = {}, got {}", layer, name,
             batch_first ? "[N, L, E]" : "[L, N, E]", d_model, shape_str(x));
}

std::shared_ptr<ModuleListImpl> clone_layers(const char* owner, const char* layer_arg, const char* layer_type,
                                             const std::shared_ptr<Module>& layer, int64_t num_layers) {
  WICK_CHECK(num_layers >= 1,
             "{}: num_layers must be at least 1, got {}; a stack without layers would only apply its norm", owner,
             num_layers);
  WICK_CHECK(layer != nullptr, "{}: {} is an empty holder; pass a {} to copy", owner, layer_arg, layer_type);
  auto list = std::make_shared<ModuleListImpl>();
  for (int64_t i = 0; i < num_layers; ++i) list->push_back(layer->clone());
  return list;
}

}  // namespace wick::nn::detail
