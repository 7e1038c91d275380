#pragma once
// Embedding (torch.nn.Embedding), with LibTorch's options and Embedding::from_pretrained.
// EmbeddingBag: wick/nn/modules/embedding_bag.h.
#include <optional>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/module_holder.h"

namespace wick::nn {

/// Embedding's options, as LibTorch: `EmbeddingOptions(vocab, dim).padding_idx(0).max_norm(1.0)`.
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  WICK_ARG(int64_t, num_embeddings);
  WICK_ARG(int64_t, embedding_dim);
  /// The row that gets no gradient, zeroed at initialization (negative counts from the end).
  WICK_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  /// Rows looked up whose norm_type-norm exceeds this are rescaled in place (F::embedding).
  WICK_ARG(std::optional<double>, max_norm) = std::nullopt;
  WICK_ARG(double, norm_type) = 2.0;
  /// Each row's gradient is divided by its index's count in the mini-batch.
  WICK_ARG(bool, scale_grad_by_freq) = false;
  /// Must stay false: wick has no sparse gradients (NotImplementedError at construction).
  WICK_ARG(bool, sparse) = false;
  /// A [num_embeddings, embedding_dim] tensor to use as the weight instead of a random one (its
  /// memory is shared, not copied; see Embedding::from_pretrained). Used at construction only: the
  /// layer's options() no longer hold it.
  WICK_ARG(Tensor, _weight) = Tensor();
};

/// Embedding::from_pretrained's options, as LibTorch's.
struct EmbeddingFromPretrainedOptions {
  /// The weight does not require grad (it is not trained).
  WICK_ARG(bool, freeze) = true;
  WICK_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  WICK_ARG(std::optional<double>, max_norm) = std::nullopt;
  WICK_ARG(double, norm_type) = 2.0;
  WICK_ARG(bool, scale_grad_by_freq) = false;
  WICK_ARG(bool, sparse) = false;
};

/// A lookup table: int64 indices of any shape -> [*shape, embedding_dim] (F::embedding with the
/// layer's options). weight [num_embeddings, embedding_dim] ~ N(0, 1), with the padding_idx row
/// zeroed (and never updated by gradients), or options._weight. The constructor refuses
/// (ValueError) num_embeddings below 1, a negative embedding_dim, a negative max_norm, a _weight
/// of another shape; (IndexError) a padding_idx out of range; (NotImplementedError) sparse.
/// `tensor_options`: the weight's dtype and device (see LinearImpl; unused with _weight, whose
/// dtype and device the weight keeps).
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim, TensorOptions tensor_options = {})
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim), tensor_options) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& indices);
  /// Redraws the weight ~ N(0, 1) and zeroes the padding_idx row.
  void reset_parameters();
  /// PyTorch's: "10, 3", then padding_idx, max_norm, norm_type, scale_grad_by_freq where set.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const EmbeddingOptions& options() const { return options_; }

 private:
  EmbeddingOptions options_;
  ParamSlot weight_;
};

/// The holder of EmbeddingImpl, with LibTorch's static from_pretrained.
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  /// An Embedding whose weight is `embeddings` [num_embeddings, embedding_dim] (ValueError for
  /// another rank). As PyTorch's Parameter(embeddings), the weight is a new leaf that shares
  /// embeddings' memory (and version counter): nothing is copied, training or max_norm changes
  /// both, and embeddings itself (its requires_grad, its graph) is left as it was. LibTorch
  /// registers embeddings itself and sets its requires_grad, which would turn a caller's
  /// non-leaf into a refused parameter. freeze (the default) leaves the weight without grad;
  /// the padding_idx row is used as given, not zeroed, as in PyTorch.
  static Embedding from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options = {});
};

}  // namespace wick::nn
