#pragma once
// Embedding (torch.nn.Embedding).
#include <optional>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// A lookup table: int64 indices of any shape -> [*shape, embedding_dim]. weight
/// [num_embeddings, embedding_dim] ~ N(0, 1), with the padding_idx row zeroed (and never
/// updated by gradients).
class Embedding : public Cloneable<Embedding> {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt,
            TensorOptions options = {});
  Tensor forward(const Tensor& indices);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }

 private:
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
  ParamSlot weight_;
};

}  // namespace wick::nn
