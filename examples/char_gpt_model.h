#pragma once
// The character-level GPT of examples/char_gpt.cpp:
//
//   tokens [B, T] -> token embedding + position embedding [B, T, d_model]
//                 -> layers x pre-norm block: x + attn(ln1(x)), then x + mlp(ln2(x))
//                    (causal self-attention over `heads` heads; mlp: Linear-GELU-Linear, 4 x d_model)
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
  double dropout = 0.0;
};

/// Causal multi-head self-attention: x [B, T, C] -> [B, T, C]. Position t attends to 0..t only.
struct CausalSelfAttentionImpl : wick::nn::Module {
  CausalSelfAttentionImpl(int64_t d_model, int64_t heads_in)
      : heads(heads_in),
        qkv(register_module("qkv", wick::nn::Linear(d_model, 3 * d_model))),
        proj(register_module("proj", wick::nn::Linear(d_model, d_model))) {}

  wick::Tensor forward(const wick::Tensor& x) {
    using wick::Tensor;
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2), D = C / heads;
    // [B, T, 3C] -> [3, B, heads, T, D]
    Tensor parts = qkv(x).view({B, T, 3, heads, D}).permute({2, 0, 3, 1, 4});
    Tensor q = parts.select(0, 0), k = parts.select(0, 1), v = parts.select(0, 2);
    Tensor scores = q.matmul(k.transpose(-2, -1)).mul(1.0 / std::sqrt(static_cast<double>(D)));  // [B, h, T, T]
    Tensor future = wick::ones({T, T}, wick::TensorOptions(wick::kFloat32).device(x.device())).triu(1).gt(0.5);
    Tensor att = scores.masked_fill(future, -INFINITY).softmax(-1);
    Tensor y = att.matmul(v).transpose(1, 2).reshape({B, T, C});  // heads side by side again
    return proj(y);
  }

  int64_t heads;
  wick::nn::Linear qkv, proj;
};
WICK_MODULE(CausalSelfAttention);

/// A pre-norm transformer block: x + attn(ln1(x)), then x + mlp(ln2(x)).
struct BlockImpl : wick::nn::Module {
  BlockImpl(int64_t d_model, int64_t heads)
      : ln1(register_module("ln1", wick::nn::LayerNorm(wick::nn::LayerNormOptions({d_model})))),
        attn(register_module("attn", CausalSelfAttention(d_model, heads))),
        ln2(register_module("ln2", wick::nn::LayerNorm(wick::nn::LayerNormOptions({d_model})))),
        fc(register_module("fc", wick::nn::Linear(d_model, 4 * d_model))),
        out(register_module("out", wick::nn::Linear(4 * d_model, d_model))) {}

  wick::Tensor forward(const wick::Tensor& x) {
    wick::Tensor h = x + attn(ln1(x));
    return h + out(wick::nn::functional::gelu(fc(ln2(h))));
  }

  wick::nn::LayerNorm ln1;
  CausalSelfAttention attn;
  wick::nn::LayerNorm ln2;
  wick::nn::Linear fc, out;
};
WICK_MODULE(Block);

/// The whole model: int64 tokens [B, T] (T <= block_size) -> logits [B, T, vocab].
struct GptImpl : wick::nn::Module {
  explicit GptImpl(const Config& c)
      : config(c),
        tok(register_module("tok", wick::nn::Embedding(c.vocab, c.d_model))),
        pos(register_module("pos", wick::nn::Embedding(c.block_size, c.d_model))),
        blocks(register_module("blocks", wick::nn::Sequential())),
        ln(register_module("ln", wick::nn::LayerNorm(wick::nn::LayerNormOptions({c.d_model})))),
        head(register_module("head", wick::nn::Linear(c.d_model, c.vocab))) {
    for (int64_t i = 0; i < c.layers; ++i) blocks->push_back(Block(c.d_model, c.heads));
    // GPT-2's initialisation for the embeddings: N(0, 0.02) rather than Embedding's N(0, 1).
    wick::NoGradGuard no_grad;
    for (wick::Tensor w : {tok->weight(), pos->weight()}) w.mul_(0.02);  // handles: in place on the weights
  }

  wick::Tensor forward(const wick::Tensor& tokens) {
    const int64_t T = tokens.size(1);
    wick::Tensor positions = wick::arange(T, wick::TensorOptions(wick::kInt64).device(tokens.device()));
    wick::Tensor x = tok(tokens) + pos(positions);
    return head(ln(blocks->forward_tensor(x)));
  }

  Config config;
  wick::nn::Embedding tok, pos;
  wick::nn::Sequential blocks;
  wick::nn::LayerNorm ln;
  wick::nn::Linear head;
};
WICK_MODULE(Gpt);

}  // namespace char_gpt
