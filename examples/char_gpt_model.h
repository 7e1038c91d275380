#pragma once
// The character-level GPT of examples/char_gpt.cpp:
//
//   tokens [B, T] -> token embedding + position embedding [B, T, d_model]
//                 -> layers x nn::TransformerEncoderLayer, pre-norm (norm_first), batch_first,
//                    causal (is_causal): x + attn(norm1(x)), then x + mlp(norm2(x)) with
//                    `heads` heads and mlp Linear-GELU-Linear (4 x d_model), no dropout
//                 -> LayerNorm -> Linear head -> logits [B, T, vocab]
//
// Every piece is a wick::nn module registered in its owner's tables, so the model replicates
// for DataParallel like any other (docs/modules.md).
#include <cmath>
#include <cstdint>
#include <string>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

namespace char_gpt {

/// The model's shape; a checkpoint stores it (config_metadata) so --sample and --resume rebuild
/// the same model.
struct Config {
  int64_t vocab = 0;
  int64_t block_size = 64;
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t layers = 4;
};

/// The number of parameter values GptImpl(c) holds: the embeddings, per layer 12 d^2 + 13 d
/// (attention in/out projections, the two MLP linears, two LayerNorms), the final LayerNorm and
/// the head. Exact for the fields' ranges read_saved_model accepts (no overflow there).
inline int64_t parameter_count(const Config& c) {
  const int64_t d = c.d_model;
  return c.vocab * d + c.block_size * d + c.layers * (12 * d * d + 13 * d) + 2 * d + d * c.vocab + c.vocab;
}

/// The whole model: int64 tokens [B, T] (T <= block_size) -> logits [B, T, vocab].
struct GptImpl : wick::nn::Module {
  explicit GptImpl(const Config& c)
      : config(c),
        tok(register_module("tok", wick::nn::Embedding(c.vocab, c.d_model))),
        pos(register_module("pos", wick::nn::Embedding(c.block_size, c.d_model))),
        blocks(register_module("blocks", wick::nn::ModuleList())),
        ln(register_module("ln", wick::nn::LayerNorm(wick::nn::LayerNormOptions({c.d_model})))),
        head(register_module("head", wick::nn::Linear(c.d_model, c.vocab))) {
    for (int64_t i = 0; i < c.layers; ++i)
      blocks->push_back(wick::nn::TransformerEncoderLayer(wick::nn::TransformerEncoderLayerOptions(c.d_model, c.heads)
                                                              .dim_feedforward(4 * c.d_model)
                                                              .dropout(0.0)
                                                              .activation("gelu")
                                                              .batch_first(true)
                                                              .norm_first(true)));
    // GPT-2's initialisation for the embeddings: N(0, 0.02) rather than Embedding's N(0, 1).
    wick::NoGradGuard no_grad;
    for (wick::Tensor w : {tok->weight(), pos->weight()}) w.mul_(0.02);  // handles: in place on the weights
    // parameter_count repeats this layout (checkpoints are checked with it before a model is
    // built): a change here that it misses fails on the first model made, never silently.
    int64_t held = 0;
    for (const auto& p : parameters()) held += p.numel();
    if (held != parameter_count(c))
      throw wick::StateError("char_gpt: the model holds " + std::to_string(held) +
                             " parameter values but parameter_count says " + std::to_string(parameter_count(c)) +
                             "; update parameter_count in examples/char_gpt_model.h to the layout");
  }

  wick::Tensor forward(const wick::Tensor& tokens) {
    const int64_t T = tokens.size(1);
    wick::Tensor positions = wick::arange(T, wick::TensorOptions(wick::kInt64).device(tokens.device()));
    wick::Tensor x = tok(tokens) + pos(positions);
    for (const auto& block : blocks->items())  // every child is a TransformerEncoderLayerImpl (the constructor's)
      x = static_cast<wick::nn::TransformerEncoderLayerImpl&>(*block).forward(x, {}, {}, /*is_causal=*/true);
    return head(ln(x));
  }

  Config config;
  wick::nn::Embedding tok, pos;
  wick::nn::ModuleList blocks;
  wick::nn::LayerNorm ln;
  wick::nn::Linear head;
};
WICK_MODULE(Gpt);

}  // namespace char_gpt
