#pragma once
// Embedding (torch.nn.Embedding).
#include <optional>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// Embedding's options, as LibTorch: `EmbeddingOptions(vocab, dim).padding_idx(0)`.
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  WICK_ARG(int64_t, num_embeddings);
  WICK_ARG(int64_t, embedding_dim);
  /// The row that is zero and gets no gradient (negative counts from the end).
  WICK_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// A lookup table: int64 indices of any shape -> [*shape, embedding_dim]. weight
/// [num_embeddings, embedding_dim] ~ N(0, 1), with the padding_idx row zeroed (and never
/// updated by gradients). `tensor_options`: the weight's dtype and device (see LinearImpl).
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim, TensorOptions tensor_options = {})
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim), tensor_options) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& indices);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const EmbeddingOptions& options() const { return options_; }

 private:
  EmbeddingOptions options_;
  ParamSlot weight_;
};
WICK_MODULE(Embedding);

}  // namespace wick::nn
